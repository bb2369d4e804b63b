#pragma once
// Which addresses eitstream may bind without protection (docs/security.md): the one rule for
// every socket, listener and port it opens. Patient images and raw frames stay on the host unless
// the socket is secured (CURVE for ZeroMQ, TLS for TCP ingest) or the user says --insecure.
//
//   kind          secured by                      off loopback, not secured
//   kZmq          CURVE (--curve-secret/-allow)    refused; --insecure: one warning
//   kHttp         nothing (plain HTTP)             refused; --insecure: one warning
//   kTcpIngest    tls-listen:// instead            refused; --insecure: one warning
//   kTlsIngest    TLS with client certificates     allowed (always secured)
//   kUdpIngest    nothing                          one warning (UDP ingest stays possible)
//
// Loopback: 127.0.0.0/8, ::1 (also v4-mapped), localhost, the interface name "lo"; ipc:// and
// inproc:// never leave the host. Everything else is beyond loopback: 0.0.0.0, *, ::, another
// interface or host name, a LAN address. Set-up only; check_bind throws CommandError.
#include <string_view>

namespace eit::cli {

enum class BindKind { kZmq, kHttp, kTcpIngest, kTlsIngest, kUdpIngest };
enum class BindVerdict { kAllow, kWarn, kRefuse };

// 127.0.0.0/8, ::1, localhost, and the loopback interface name "lo".
bool is_loopback_host(std::string_view host);

// ZeroMQ endpoints that stay on the host: ipc://, inproc://, tcp:// on a loopback host.
bool is_local_zmq_endpoint(std::string_view endpoint);

// Whether `address`, as written for `kind`, is reachable from this host only: a ZeroMQ endpoint
// (kZmq); a source URI scheme://HOST:PORT?… (ingest); HOST:PORT, :PORT or PORT (kHttp; without a
// host the live view binds 127.0.0.1).
bool is_local_bind(BindKind kind, std::string_view address);

// The table above: what to do with a bind of `kind`.
BindVerdict bind_verdict(BindKind kind, bool local, bool secured, bool insecure) noexcept;

// Applies the verdict for `address` given as `option`: returns quietly (allowed), prints one
// warning to stderr, or throws CommandError naming the option, the address and how to secure it.
// `secured`: CURVE is on for this socket (kZmq).
void check_bind(BindKind kind, std::string_view option, std::string_view address, bool secured,
                bool insecure);

}  // namespace eit::cli
