#include "network_exposure.hpp"

#include <string>

#include <fmt/format.h>

namespace eit::cli {
namespace {

// The host part of "scheme://host:port/…?query", "host:port" or "[v6]:port".
std::string_view host_of(std::string_view e) {
  if (const auto s = e.find("://"); s != std::string_view::npos) e.remove_prefix(s + 3);
  e = e.substr(0, e.find_first_of("/?"));
  if (!e.empty() && e.front() == '[') {
    const auto close = e.find(']');
    return close == std::string_view::npos ? e.substr(1) : e.substr(1, close - 1);
  }
  const auto colon = e.rfind(':');
  // More than one colon without brackets: a bare IPv6 address (no port).
  if (colon != std::string_view::npos && e.find(':') == colon) return e.substr(0, colon);
  return e;
}

bool is_loopback_host(std::string_view h) {
  if (h == "localhost" || h == "::1" || h == "lo") return true;
  if (!h.starts_with("127.")) return false;
  int dots = 0;
  for (char c : h) {
    if (c == '.')
      ++dots;
    else if (c < '0' || c > '9')
      return false;
  }
  return dots == 3;
}

}  // namespace

bool binds_beyond_loopback(std::string_view endpoint) {
  if (endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://")) return false;
  return !is_loopback_host(host_of(endpoint));
}

bool warn_if_beyond_loopback(std::string_view what, std::string_view endpoint) {
  if (!binds_beyond_loopback(endpoint)) return false;
  const std::string host(host_of(endpoint));
  fmt::print(stderr,
             "eitstream: WARNING: {} listens on {} ({}): reachable from other machines.\n"
             "eitstream: WARNING: this link is neither authenticated nor encrypted and carries "
             "patient data; anyone who can reach it can read (or feed) it.\n"
             "eitstream: WARNING: bind 127.0.0.1 unless the network is trusted.\n",
             what, endpoint,
             host.empty() || host == "*" || host == "0.0.0.0" || host == "::"
                 ? "every interface"
                 : "a non-loopback address");
  return true;
}

}  // namespace eit::cli
