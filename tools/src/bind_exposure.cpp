// Loopback checks for every address eitstream binds (see bind_exposure.hpp).
#include "bind_exposure.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <boost/asio/ip/address.hpp>

#include "command_registry.hpp"

namespace eit::cli {

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

void check_bind_exposure(std::string_view option, std::string_view address, bool local,
                         bool secured, bool insecure, std::string_view how_to_secure) {
  if (local || secured) return;
  if (!insecure)
    throw CommandError(fmt::format(
        "{} '{}' is reachable from the network and not secured: patient data would travel in "
        "plaintext to anyone who connects; expected a loopback address (127.0.0.1), {}, or "
        "--insecure to do it anyway (docs/security.md)",
        option, address, how_to_secure));
  fmt::print(stderr,
             "eitstream: WARNING: {} '{}' is reachable from the network WITHOUT authentication "
             "or encryption (--insecure)\n",
             option, address);
}

void warn_bind_exposure(std::string_view option, std::string_view address, bool local) {
  if (local) return;
  fmt::print(stderr,
             "eitstream: WARNING: {} '{}' receives from the network without authentication: any "
             "host that can reach it can inject frames (docs/security.md)\n",
             option, address);
}

}  // namespace eit::cli
