// TLS contexts for eitstream's links (tls_context.hpp).
#include "tls_context.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace eit::acquisition::detail {

namespace ssl = boost::asio::ssl;

void configure_tls_context(ssl::context& ctx, const std::string& uri, const TlsFiles& files,
                           TlsRole role, bool require_ca) {
  const bool server = role == TlsRole::kServer;
  auto load = [&](const char* field, const std::string& path, const char* what, auto&& fn) {
    if (path.empty())
      throw std::runtime_error(fmt::format("{}: option {}= missing; expected {}=FILE.pem ({})",
                                           uri, field, field, what));
    boost::system::error_code ec;
    fn(path, ec);
    if (ec)
      throw std::runtime_error(fmt::format("{}: {}='{}' cannot be used ({}); expected a PEM file",
                                           uri, field, path, ec.message()));
  };
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                  ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                  ssl::context::single_dh_use);
  if (!server && files.cert.empty() != files.key.empty())
    throw std::runtime_error(fmt::format(
        "{}: {}= given without {}=; expected both (this end's certificate and its key) or neither",
        uri, files.cert.empty() ? "key" : "cert", files.cert.empty() ? "cert" : "key"));
  if (server || !files.cert.empty()) {
    load("cert", files.cert, "this end's certificate chain",
         [&](const std::string& p, auto& ec) { ctx.use_certificate_chain_file(p, ec); });
    load("key", files.key, "the certificate's private key", [&](const std::string& p, auto& ec) {
      ctx.use_private_key_file(p, ssl::context::pem, ec);
    });
  }
  const bool verify = !server || require_ca;
  if (verify)
    load("ca", files.ca,
         server ? "the CA that signs the peers' certificates"
                : "the CA that signs the server's certificate",
         [&](const std::string& p, auto& ec) { ctx.load_verify_file(p, ec); });
  if (server)
    ctx.set_verify_mode(verify ? ssl::verify_peer | ssl::verify_fail_if_no_peer_cert
                               : ssl::verify_none);
  else
    ctx.set_verify_mode(ssl::verify_peer);
}

void set_tls_peer_name(ssl::stream<boost::asio::ip::tcp::socket&>& stream,
                       const std::string& name) {
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(name, ec);
  if (ec)  // SNI carries host names only
    SSL_set_tlsext_host_name(stream.native_handle(), name.c_str());
  stream.set_verify_callback(ssl::host_name_verification(name));
}

}  // namespace eit::acquisition::detail
