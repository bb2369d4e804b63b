#pragma once
// Is a socket about to be reachable from other machines? eitstream's images and frames are
// patient data; binding anything but loopback is worth a loud warning (and, with the security
// work of issue 10, a refusal unless encryption is on or the user says --insecure: that check
// should reuse binds_beyond_loopback()).
//
// Understands ZeroMQ endpoints (tcp://0.0.0.0:5555, tcp://*:5555, tcp://[::]:5555; ipc:// and
// inproc:// never leave the host), eitstream's source URIs (tcp-listen://IP:PORT, udp://IP:PORT
// with an optional ?query) and plain HOST:PORT (--http). Loopback: 127.0.0.0/8, ::1, localhost.
// Everything else that binds or listens is beyond loopback: 0.0.0.0, *, ::, an interface or
// host name, a LAN address. Pure functions apart from the warning's stderr output; any thread.
#include <string_view>

namespace eit::cli {

// True when binding/listening on `endpoint` accepts connections from beyond this host.
bool binds_beyond_loopback(std::string_view endpoint);

// Prints a loud multi-line warning to stderr naming `what` (e.g. "the image publisher
// (--endpoint)") and the address when binds_beyond_loopback(endpoint); returns whether it did.
bool warn_if_beyond_loopback(std::string_view what, std::string_view endpoint);

}  // namespace eit::cli
