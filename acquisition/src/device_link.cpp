// open_device_link: URI → DeviceLink (the same URI grammar as open_live_source, plus "pty").
#include "eit/acquisition/device_link.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "device_links.hpp"
#include "eit/acquisition/live_source.hpp"
#include "tls_context.hpp"

namespace eit::acquisition {
namespace {

bool is_pty(std::string_view uri) { return uri == "pty" || uri == "pty://"; }

constexpr std::string_view kLinkSchemes =
    "tcp-listen://, tcp://, tls-listen://, tls-connect://, udp://, file://, pty";

// The URI parsed, with options the link takes and a scheme that can send. `schemes`: those the
// caller takes, for messages.
LiveUri checked_link_uri(std::string_view uri, std::string_view schemes) {
  const LiveUri u = parse_live_uri(uri, {"device link", schemes});
  check_device_link_options(u);
  static constexpr std::string_view kSending[] = {"tcp-listen",  "tcp", "tls-listen",
                                                  "tls-connect", "udp", "file"};
  if (std::find(std::begin(kSending), std::end(kSending), u.scheme) == std::end(kSending))
    throw std::invalid_argument(fmt::format(
        "device link '{}': scheme '{}' cannot send; expected one of {}", uri, u.scheme, schemes));
  return u;
}

}  // namespace

void check_device_link_uri(std::string_view uri, std::string_view more_schemes) {
  if (is_pty(uri)) return;
  const LiveUri u = checked_link_uri(uri, more_schemes.empty()
                                              ? std::string(kLinkSchemes)
                                              : fmt::format("{}, {}", kLinkSchemes, more_schemes));
  detail::check_tls_files(u, fmt::format("device link '{}'", uri), u.query.contains("ca"));
}

std::unique_ptr<DeviceLink> open_device_link(std::string_view uri, ReconnectPolicy reconnect) {
  if (is_pty(uri)) return detail::make_pty_link();
  const LiveUri u = checked_link_uri(uri, kLinkSchemes);
  if (u.scheme == "tcp-listen") return detail::make_tcp_listen_link(u.host, u.port);
  if (u.scheme == "tcp") return detail::make_tcp_connect_link(u.host, u.port, reconnect);
  if (u.scheme == "tls-listen" || u.scheme == "tls-connect") {
    const TlsFiles files = detail::tls_files(u);
    if (u.scheme == "tls-listen") return detail::make_tcp_listen_link(u.host, u.port, &files);
    return detail::make_tcp_connect_link(u.host, u.port, reconnect, &files);
  }
  if (u.scheme == "udp") return detail::make_udp_link(u.host, u.port);
  return detail::make_file_link(u.path);  // the last scheme checked_link_uri lets through
}

}  // namespace eit::acquisition
