// TLS contexts for eitstream's links (tls_context.hpp).
#include "tls_context.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace eit::acquisition::detail {

namespace ssl = boost::asio::ssl;

namespace {

// Adds every CRL of the PEM file `path` to the context's trust store and turns checking on.
void load_crls(ssl::context& ctx, const std::string& uri, const std::string& path) {
  BIO* bio = BIO_new_file(path.c_str(), "r");
  if (!bio)
    throw std::runtime_error(fmt::format("{}: crl='{}' cannot be opened; expected a PEM file of "
                                         "certificate revocation lists",
                                         uri, path));
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.native_handle());
  int loaded = 0;
  while (X509_CRL* crl = PEM_read_bio_X509_CRL(bio, nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_crl(store, crl) == 1) ++loaded;
    X509_CRL_free(crl);
  }
  ERR_clear_error();  // the end of the file reads as an error
  BIO_free(bio);
  if (loaded == 0)
    throw std::runtime_error(fmt::format(
        "{}: crl='{}' holds no certificate revocation list; expected PEM \"X509 CRL\" blocks",
        uri, path));
  X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
}

}  // namespace

void configure_tls_context(ssl::context& ctx, const std::string& uri, const TlsFiles& files,
                           TlsRole role, bool require_ca) {
  const bool server = role == TlsRole::kServer;
  auto load = [&](const char* field, const std::string& path, const char* what, auto&& fn) {
    if (path.empty())
      throw std::runtime_error(fmt::format("{}: option {}= missing; expected {}=FILE.pem ({})",
                                           uri, field, field, what));
    // OpenSSL reports a missing file as "asio.ssl error": say why it cannot be read.
    if (std::FILE* f = std::fopen(path.c_str(), "rb"))
      std::fclose(f);
    else
      throw std::runtime_error(fmt::format("{}: {}='{}' cannot be read ({}); expected {} (PEM)",
                                           uri, field, path, std::strerror(errno), what));
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
  if (!files.crl.empty()) load_crls(ctx, uri, files.crl);
  if (server)
    ctx.set_verify_mode(verify ? ssl::verify_peer | ssl::verify_fail_if_no_peer_cert
                               : ssl::verify_none);
  else
    ctx.set_verify_mode(ssl::verify_peer);
}

TlsFiles tls_files(const LiveUri& uri) {
  auto text = [&](const char* key) {
    const auto it = uri.query.find(key);
    return it == uri.query.end() ? std::string() : it->second;
  };
  return {text("cert"), text("key"), text("ca"), text("name"), text("crl")};
}

void check_tls_files(const LiveUri& uri, const std::string& who, bool require_ca) {
  const bool server = uri.scheme == "tls-listen";
  if (!server && uri.scheme != "tls-connect") return;
  ssl::context ctx(server ? ssl::context::tls_server : ssl::context::tls_client);
  configure_tls_context(ctx, who, tls_files(uri), server ? TlsRole::kServer : TlsRole::kClient,
                        require_ca);
}

std::string tls_failure(const boost::system::error_code& ec, SSL* ssl) {
  if (ec == boost::asio::error::operation_aborted) return "no handshake in time";
  std::string why = ec.message();
  const long verdict = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verdict != X509_V_OK) why += std::string(": ") + X509_verify_cert_error_string(verdict);
  return why;
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
