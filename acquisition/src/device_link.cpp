// open_device_link: URI → DeviceLink (the same URI grammar as open_live_source, plus "pty").
#include "eit/acquisition/device_link.hpp"

#include <fmt/format.h>

#include "device_links.hpp"
#include "eit/acquisition/live_source.hpp"

namespace eit::acquisition {

std::unique_ptr<DeviceLink> open_device_link(std::string_view uri, ReconnectPolicy reconnect) {
  if (uri == "pty" || uri == "pty://") return detail::make_pty_link();
  const LiveUri u = parse_live_uri(uri);
  check_device_link_options(u);
  if (u.scheme == "tcp-listen") return detail::make_tcp_listen_link(u.host, u.port);
  if (u.scheme == "tcp") return detail::make_tcp_connect_link(u.host, u.port, reconnect);
  if (u.scheme == "tls-listen" || u.scheme == "tls-connect") {
    auto text = [&](const char* key) {
      const auto it = u.query.find(key);
      return it == u.query.end() ? std::string() : it->second;
    };
    const TlsFiles files{text("cert"), text("key"), text("ca"), text("name"), text("crl")};
    if (u.scheme == "tls-listen") return detail::make_tcp_listen_link(u.host, u.port, &files);
    return detail::make_tcp_connect_link(u.host, u.port, reconnect, &files);
  }
  if (u.scheme == "udp") return detail::make_udp_link(u.host, u.port);
  if (u.scheme == "file") return detail::make_file_link(u.path);
  throw std::invalid_argument(fmt::format(
      "device link '{}': scheme '{}' cannot send; expected tcp-listen://, tcp://, tls-listen://, "
      "tls-connect://, udp://, pty or file://",
      uri, u.scheme));
}

}  // namespace eit::acquisition
