#pragma once
// `eitstream run`'s security options (docs/security.md): CURVE keys for the image and indices
// publishers and the loopback rule for every address run binds. The options are RunConfig's
// (so a --config file may name the certificate files: curve_secret, curve_allow, insecure);
// keys themselves live only in those files.
//
//   --curve-secret FILE   the server's secret certificate (eitstream keygen's NAME_secret)
//   --curve-allow DIR|FILE the client public keys admitted (required with --curve-secret)
//   --insecure            bind non-loopback addresses without CURVE/TLS anyway (warned)
//
// Set-up only; errors throw CommandError naming the option, the file or address, and what is
// expected.
#include <string>

#include <CLI/CLI.hpp>

#include "eit/sinks/zmq_publisher.hpp"
#include "run_config.hpp"

namespace eit::cli {

struct RunSecurity {
  std::string curve_secret;
  std::string curve_allow;
  bool insecure = false;
};

// Registers --curve-secret, --curve-allow and --insecure, bound to `c`.
void add_security_options(CLI::App& cmd, RunConfig& c);
RunSecurity run_security_of(const RunConfig& c);

// Loads the CURVE keys into `zo` and checks the indices endpoint, the live view's HTTP address
// and a listening ingest source against the loopback rule.
void apply_run_security(const RunSecurity& s, const RunConfig& c,
                        const std::string& indices_endpoint, sinks::ZmqPublisherOptions& zo);

// The loopback rule for the publisher, on the endpoint it bound (ZeroMQ resolves "*" and
// interface names there; nothing is sent before the pipeline starts).
void check_publisher_exposure(const RunSecurity& s, const sinks::ZmqPublisherOptions& zo,
                              const std::string& bound, const char* option = "--endpoint");

// The client side (listen, view, python): the server's public key and the client's own pair.
struct CurveClientOptions {
  std::string server_key;  // --curve-server-key FILE (the server's public certificate)
  std::string secret;      // --curve-secret FILE (this client's secret certificate)
};
void add_curve_client_options(CLI::App& cmd, CurveClientOptions& o);
// Sets CURVE on `socket` when both files are given; nothing when neither; CommandError when only
// one of them is.
void apply_curve_client_options(const CurveClientOptions& o, zmq::socket_t& socket);

}  // namespace eit::cli
