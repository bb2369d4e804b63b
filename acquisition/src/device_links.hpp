#pragma once
// The DeviceLink implementations behind open_device_link(), one file each kind.
#include <cstdint>
#include <memory>
#include <string>

#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/tls_transport.hpp"

namespace eit::acquisition::detail {

// `tls`: TLS with these files (tls-listen://, tls-connect://, tls_context.hpp); null: plain TCP.
std::unique_ptr<DeviceLink> make_tcp_listen_link(const std::string& host, uint16_t port,
                                                 const TlsFiles* tls = nullptr);
std::unique_ptr<DeviceLink> make_tcp_connect_link(const std::string& host, uint16_t port,
                                                  ReconnectPolicy policy,
                                                  const TlsFiles* tls = nullptr);
std::unique_ptr<DeviceLink> make_udp_link(const std::string& host, uint16_t port);
std::unique_ptr<DeviceLink> make_pty_link();
std::unique_ptr<DeviceLink> make_file_link(const std::string& path);

}  // namespace eit::acquisition::detail
