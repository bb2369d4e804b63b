// Parsing of live-source URIs (see live_source.hpp).
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/live_source.hpp"

namespace eit::acquisition {

LiveUri parse_live_uri(std::string_view text, const UriRole& role) {
  LiveUri uri;
  uri.text = std::string(text);
  const auto sep = text.find("://");
  if (sep == std::string_view::npos) {
    throw std::invalid_argument(
        fmt::format("{} '{}': no scheme; expected one of {}", role.name, text, role.schemes));
  }
  uri.scheme = std::string(text.substr(0, sep));
  std::string_view rest = text.substr(sep + 3);
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    std::string_view query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    while (!query.empty()) {
      const auto amp = query.find('&');
      const std::string_view item = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string_view::npos) {
        throw std::invalid_argument(fmt::format(
            "{} '{}': option '{}' has no value; expected key=value", role.name, text, item));
      }
      const std::string_view key = item.substr(0, eq);
      if (!uri.query.emplace(std::string(key), std::string(item.substr(eq + 1))).second) {
        throw std::invalid_argument(fmt::format(
            "{} '{}': option '{}' given twice; expected it once", role.name, text, key));
      }
    }
  }
  if (uri.scheme == "serial" || uri.scheme == "file") {
    if (rest.empty()) {
      throw std::invalid_argument(
          fmt::format("{} '{}': no path; expected {}:///path", role.name, text, uri.scheme));
    }
    uri.path = std::string(rest);
    return uri;
  }
  if (uri.scheme != "tcp" && uri.scheme != "tcp-listen" && uri.scheme != "tls-listen" &&
      uri.scheme != "tls-connect" && uri.scheme != "udp") {
    throw std::invalid_argument(fmt::format("{} '{}': scheme '{}' unknown; expected one of {}",
                                            role.name, text, uri.scheme, role.schemes));
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    throw std::invalid_argument(
        fmt::format("{} '{}': expected {}://host:port", role.name, text, uri.scheme));
  }
  uri.host = std::string(rest.substr(0, colon));
  if (uri.host.size() > 2 && uri.host.front() == '[' && uri.host.back() == ']') {
    uri.host = uri.host.substr(1, uri.host.size() - 2);  // [::1]
  }
  const std::string_view port = rest.substr(colon + 1);
  if (port == "*") return uri;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value > 65535) {
    throw std::invalid_argument(fmt::format(
        "{} '{}': port '{}' is not a number; expected 0..65535 or *", role.name, text, port));
  }
  uri.port = static_cast<uint16_t>(value);
  return uri;
}

}  // namespace eit::acquisition
