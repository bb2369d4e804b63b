#pragma once
// Which addresses eitstream may bind without protection (docs/security.md). Patient images and
// raw frames stay on the host unless the user secures the socket (CURVE for ZeroMQ, TLS for TCP
// ingest) or says --insecure explicitly.
//
// check_bind_exposure: a non-loopback bind that is not secured throws CommandError naming the
// option, the address and the ways out; with `insecure` it prints a warning to stderr instead.
// warn_bind_exposure: the warning only (UDP ingest, which has no secured form). Set-up only.
#include <string_view>

namespace eit::cli {

// 127.0.0.0/8, ::1, localhost, and the loopback interface name "lo".
bool is_loopback_host(std::string_view host);

// ZeroMQ endpoints that stay on the host: ipc://, inproc://, tcp:// on a loopback host.
bool is_local_zmq_endpoint(std::string_view endpoint);

void check_bind_exposure(std::string_view option, std::string_view address, bool local,
                         bool secured, bool insecure, std::string_view how_to_secure);

void warn_bind_exposure(std::string_view option, std::string_view address, bool local);

}  // namespace eit::cli
