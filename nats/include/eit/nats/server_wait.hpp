#pragma once
// What a NATS connection does while it waits for a server at set-up (libnats retries in the
// background): `report` is told in words after 1 s and every 10 s, `give_up` is asked every
// 50 ms and, when it says so, the set-up throws. A link's own options (NatsLinkOptions) win; the
// process-wide default, set once by a command before it connects (the CLI: a line on stderr,
// a signal or the command's own deadline), serves every other link: worker, gateway, source.
// With neither, the wait is silent and endless, as libnats' own.
#include <functional>
#include <string>

namespace eit::nats {

struct ServerWait {
  std::function<bool()> give_up;
  std::function<void(const std::string&)> report;
};

// Set-up only, before any connection is made (not thread-safe against a link being built).
void set_default_server_wait(ServerWait wait);
const ServerWait& default_server_wait();

}  // namespace eit::nats
