#pragma once
// Where eitstream talks to NATS, from one URI:
//
//   nats://host:4222?site=ward3&bed=12&creds=FILE&tls-ca=FILE&tls-cert=FILE&tls-key=FILE
//
// (also nkey=PUBKEY&seed=FILE for an nkey user, model=NAME on a gateway's raw frames)
// and the subjects it uses, `eit.<site>.<bed>.<kind>` (kind: img, series, raw, global, breath).
// Site and bed are single subject tokens (letters, digits, '-', '_'). Credentials (a .creds file
// with the user's JWT and nkey seed) and TLS are passed through to libnats; a server that is not
// on loopback is refused without both unless `insecure=1` says so explicitly (patient data).
// Set-up only: throws std::invalid_argument naming the URI, the option and what was expected.
#include <cstdint>
#include <string>
#include <string_view>

namespace eit::nats {

struct NatsAddress {
  std::string server_url;  // nats://host:port (what libnats connects to), or tls://host:port
  std::string host;
  std::string site = "default";
  std::string bed = "0";
  std::string creds_file;
  std::string nkey, nkey_seed_file;  // nkey=PUBLIC_KEY&seed=FILE: an nkey user without a JWT
  std::string model;  // model=NAME: the gateway names the bed's model (workers load DIR/NAME.h5)
  std::string tls_ca, tls_cert, tls_key;
  bool insecure = false;

  bool loopback() const noexcept;
  bool tls() const noexcept { return !tls_ca.empty() || !tls_cert.empty(); }
  // eit.<site>.<bed>.<kind>
  std::string subject(std::string_view kind) const;
};

NatsAddress parse_nats_address(std::string_view uri);
// A publisher's URI (`run --publish`, `emulate --to`): as parse_nats_address, and refuses the
// subscriber options (since=, scale=) naming them instead of ignoring them.
NatsAddress parse_nats_publisher_address(std::string_view uri);
// A subscriber's URI (`run --source`, `listen`, `view`, `reconstruct`, `worker`): as
// parse_nats_address, and refuses the publisher option model= naming it instead of ignoring it.
NatsAddress parse_nats_subscriber_address(std::string_view uri);

// A bed's URI's since=: where a reader or consumer starts. Absent: each reader's default; `all`,
// `new`, or a time in seconds since the epoch (> 0). Anything else, an empty since= included, is
// refused (std::invalid_argument naming the URI); parse_nats_address() checks it the same way.
struct Since {
  enum class Kind { kAbsent, kAll, kNew, kTime };
  Kind kind = Kind::kAbsent;
  int64_t epoch_ns = 0;  // kTime
};
Since parse_since(std::string_view uri);
// The latest since= time in seconds: nanoseconds in an int64 end in 2262 (9.22e9 s), and a larger
// value is most likely milliseconds. The worker's --since takes the same bound.
inline constexpr double kMaxSinceSeconds = 9.2e9;

// True for "nats://…" and "tls://…" URIs (how `run --source` and `--publish` tell them apart).
bool is_nats_uri(std::string_view uri) noexcept;

}  // namespace eit::nats
