// The loopback rule for every address eitstream binds (see bind_exposure.hpp).
#include "bind_exposure.hpp"

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <boost/asio/ip/address.hpp>

#include "command_registry.hpp"

namespace eit::cli {
namespace {

struct BindRule {
  BindKind kind;
  bool always_secured;   // the protocol itself authenticates and encrypts (TLS ingest)
  bool warn_only;        // no secured form exists and refusing would remove the feature (UDP)
  const char* secure_by;  // the way out named in a refusal, after "a loopback address (…)"
  const char* exposed;    // what anyone who reaches it can do, in the --insecure warning
};

constexpr BindRule kRules[] = {
    {BindKind::kZmq, false, false, ", --curve-secret with --curve-allow,", "read patient data"},
    {BindKind::kHttp, false, false,
     " with an authenticating TLS proxy on the same host in front of it (the live view serves "
     "plain HTTP),",
     "see the images and recapture the reference"},
    {BindKind::kTcpIngest, false, false,
     ", tls-listen://HOST:PORT?cert=…&key=…&ca=… (TLS with client certificates),",
     "feed it frames of their own"},
    {BindKind::kTlsIngest, true, false, "", ""},
    {BindKind::kUdpIngest, false, true, "", "inject frames"},
};

const BindRule& rule_for(BindKind kind) noexcept {
  for (const auto& r : kRules)
    if (r.kind == kind) return r;
  return kRules[0];  // unreachable: every kind has a row
}

// The host of "scheme://host:port/…?query", "host:port", "[v6]:port", ":port" or "port"
// (empty for the last two).
std::string_view host_of(std::string_view a) {
  if (const auto s = a.find("://"); s != std::string_view::npos) a.remove_prefix(s + 3);
  a = a.substr(0, a.find_first_of("/?"));
  if (!a.empty() && a.front() == '[') {
    const auto close = a.find(']');
    return close == std::string_view::npos ? a.substr(1) : a.substr(1, close - 1);
  }
  const auto colon = a.rfind(':');
  if (colon == std::string_view::npos) return {};  // a bare port
  if (a.find(':') != colon) return a;              // a bare IPv6 address
  return a.substr(0, colon);
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "lo") return true;
  boost::system::error_code ec;
  const auto a = boost::asio::ip::make_address(std::string(host), ec);
  if (ec) return false;
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()).is_loopback();
  return a.is_loopback();
}

bool is_local_zmq_endpoint(std::string_view endpoint) {
  if (endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://")) return true;
  if (!endpoint.starts_with("tcp://")) return false;  // pgm, udp, ws…: on the network
  std::string_view rest = endpoint.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = rest.substr(0, colon);
  // tcp://SOURCE;HOST:PORT (connect syntax): the destination is what matters.
  if (const auto semi = host.find(';'); semi != std::string_view::npos)
    host = host.substr(semi + 1);
  return is_loopback_host(host);
}

bool is_local_bind(BindKind kind, std::string_view address) {
  if (kind == BindKind::kZmq) return is_local_zmq_endpoint(address);
  const std::string_view host = host_of(address);
  if (host.empty()) return kind == BindKind::kHttp;  // the view's default address is 127.0.0.1
  return is_loopback_host(host);
}

BindVerdict bind_verdict(BindKind kind, bool local, bool secured, bool insecure) noexcept {
  const BindRule& r = rule_for(kind);
  if (local || secured || r.always_secured) return BindVerdict::kAllow;
  if (r.warn_only || insecure) return BindVerdict::kWarn;
  return BindVerdict::kRefuse;
}

void check_bind(BindKind kind, std::string_view option, std::string_view address, bool secured,
                bool insecure) {
  const BindRule& r = rule_for(kind);
  switch (bind_verdict(kind, is_local_bind(kind, address), secured, insecure)) {
    case BindVerdict::kAllow:
      return;
    case BindVerdict::kRefuse:
      throw CommandError(fmt::format(
          "{} '{}' is reachable from the network and not secured: patient data would travel in "
          "plaintext to anyone who connects; expected a loopback address (127.0.0.1){} or "
          "--insecure to do it anyway (docs/security.md)",
          option, address, r.secure_by));
    case BindVerdict::kWarn:
      if (r.warn_only)
        fmt::print(stderr,
                   "eitstream: WARNING: {} '{}' receives from the network without "
                   "authentication: any host that can reach it can {} (docs/security.md)\n",
                   option, address, r.exposed);
      else
        fmt::print(stderr,
                   "eitstream: WARNING: {} '{}' is reachable from the network WITHOUT "
                   "authentication or encryption (--insecure): anyone who can reach it can {}\n",
                   option, address, r.exposed);
      return;
  }
}

}  // namespace eit::cli
