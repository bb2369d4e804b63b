#include "host_check.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace eit::view {
namespace {

// "127.0.0.1:8080" → "127.0.0.1", "[::1]:8080" → "::1", "localhost" → "localhost".
std::string_view without_port(std::string_view host) {
  if (host.starts_with('[')) {
    const auto close = host.find(']');
    return close == std::string_view::npos ? std::string_view() : host.substr(1, close - 1);
  }
  return host.substr(0, host.find(':'));
}

bool is_localhost(std::string_view name) {
  if (name.ends_with('.')) name.remove_suffix(1);  // the fully qualified form
  return std::ranges::equal(name, std::string_view("localhost"),
                            [](char a, char b) { return std::tolower(a) == b; });
}

}  // namespace

bool host_header_allowed(std::string_view host, const boost::asio::ip::address& bound) {
  if (!bound.is_loopback()) return true;
  const std::string_view name = without_port(host);
  if (is_localhost(name)) return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(name), ec);
  return !ec && address.is_loopback();
}

}  // namespace eit::view
