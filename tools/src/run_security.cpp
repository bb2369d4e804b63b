// CURVE options and the loopback rule for `eitstream run`, `listen` and `view` (run_security.hpp).
#include "run_security.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "bind_exposure.hpp"
#include "command_registry.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/sinks/curve_keys.hpp"
#include "eit/view/view_server.hpp"

namespace eit::cli {

RunSecurity run_security_of(const RunConfig& c) {
  return {c.curve_secret, c.curve_allow, c.insecure};
}

void add_security_options(CLI::App& cmd, RunConfig& s) {
  cmd.add_option("--curve-secret", s.curve_secret,
                 "Encrypt and authenticate the image and indices publishers with ZeroMQ CURVE: the server's "
                 "secret certificate (eitstream keygen's NAME_secret, mode 0600)");
  cmd.add_option("--curve-allow", s.curve_allow,
                 "With --curve-secret: the client public keys admitted, a certificate, a file of "
                 "z85 keys (one a line) or a folder of public certificates; others are refused "
                 "and counted");
  cmd.add_flag("--insecure", s.insecure,
               "Allow binding non-loopback addresses without CURVE (publisher) or TLS (TCP "
               "ingest), and the live view/indices off loopback; patient data then travels in "
               "plaintext");
}

void apply_run_security(const RunSecurity& s, const RunConfig& c,
                        const std::string& indices_endpoint, sinks::ZmqPublisherOptions& zo) {
  if (s.curve_secret.empty() != s.curve_allow.empty())
    throw CommandError(fmt::format(
        "{} given without {}; expected both: the server's secret certificate and the client "
        "keys to admit (docs/security.md)",
        s.curve_secret.empty() ? "--curve-allow" : "--curve-secret",
        s.curve_secret.empty() ? "--curve-secret" : "--curve-allow"));
  if (!s.curve_secret.empty()) {
    try {
      zo.curve_server = sinks::read_curve_certificate(s.curve_secret, true);
      zo.curve_allowed = sinks::read_curve_allow_list(s.curve_allow);
    } catch (const std::runtime_error& e) {
      throw CommandError(e.what());
    }
  }
  if (!indices_endpoint.empty())
    check_bind(BindKind::kZmq, "--indices", indices_endpoint, !zo.curve_server.secret_z85.empty(),
               s.insecure);
  if (!c.http.empty()) {
    bool valid = true;
    try {
      (void)view::parse_http_address(c.http);
    } catch (const std::invalid_argument&) {
      valid = false;  // reported by the live view's own set-up
    }
    if (valid) check_bind(BindKind::kHttp, "--http", c.http, false, s.insecure);
  }
  if (c.source.find("://") != std::string::npos) {
    acquisition::LiveUri uri;
    try {
      uri = acquisition::parse_live_uri(c.source);
    } catch (const std::invalid_argument&) {
      return;  // reported by open_source
    }
    if (uri.scheme == "tcp-listen")
      check_bind(BindKind::kTcpIngest, "--source", c.source, false, s.insecure);
    else if (uri.scheme == "tls-listen")
      check_bind(BindKind::kTlsIngest, "--source", c.source, true, s.insecure);
    else if (uri.scheme == "udp")
      check_bind(BindKind::kUdpIngest, "--source", c.source, false, s.insecure);
  }
}

void check_publisher_exposure(const RunSecurity& s, const sinks::ZmqPublisherOptions& zo,
                              const std::string& bound, const char* option) {
  check_bind(BindKind::kZmq, option, bound, !zo.curve_server.secret_z85.empty(), s.insecure);
}

void add_curve_client_options(CLI::App& cmd, CurveClientOptions& o) {
  cmd.add_option("--curve-server-key", o.server_key,
                 "Connect with ZeroMQ CURVE: the server's public certificate (eitstream keygen)");
  cmd.add_option("--curve-secret", o.secret,
                 "With --curve-server-key: this client's secret certificate (its public key must "
                 "be on the server's --curve-allow list)");
}

void apply_curve_client_options(const CurveClientOptions& o, zmq::socket_t& socket) {
  if (o.server_key.empty() && o.secret.empty()) return;
  if (o.server_key.empty() || o.secret.empty())
    throw CommandError(
        fmt::format("{} given without {}; expected both for CURVE (docs/security.md)",
                    o.server_key.empty() ? "--curve-secret" : "--curve-server-key",
                    o.server_key.empty() ? "--curve-server-key" : "--curve-secret"));
  try {
    const auto server = sinks::read_curve_certificate(o.server_key, false);
    const auto client = sinks::read_curve_certificate(o.secret, true);
    sinks::apply_curve_client(socket, server.public_z85, client);
  } catch (const std::runtime_error& e) {
    throw CommandError(e.what());
  }
}

}  // namespace eit::cli
