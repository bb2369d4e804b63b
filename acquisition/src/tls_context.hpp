#pragma once
// Loads the PEM files of a TLS link into a Boost.Asio SSL context (TLS 1.2 or newer), for both
// ends of every TLS link eitstream has: the ingest server (tls-listen://) and client (tls-connect://), and
// the device emulator's two links (device_link.hpp). Set-up only: throws std::runtime_error
// naming the URI, the option (cert=, key=, ca=) and what was expected.
//
//   server: cert= and key= required; with ca= (always for ingest) the peer must present a
//           certificate signed by it (verify_peer | fail_if_no_peer_cert).
//   both:   crl= (optional) the ca='s revocation list(s): revoked peers fail the handshake.
//   client: ca= required (the server's certificate is verified against it, and its name against
//           the host, see set_tls_peer_name); cert= and key= optional, both or neither.
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/tls_transport.hpp"

namespace eit::acquisition::detail {

enum class TlsRole { kServer, kClient };

// `require_ca`: the server admits only peers with a certificate signed by ca= (clients always
// verify the server).
void configure_tls_context(boost::asio::ssl::context& ctx, const std::string& uri,
                           const TlsFiles& files, TlsRole role, bool require_ca);

// The files a tls-listen:// or tls-connect:// URI names (cert=, key=, ca=, name=, crl=; "" where
// absent).
TlsFiles tls_files(const LiveUri& uri);

// Loads `uri`'s files into a context of their own as configure_tls_context does (the role from
// the scheme), for a command that checks its arguments before slower set-up: throws what
// configure_tls_context throws, naming `who` ("source 'tls-listen://…'"). Other schemes pass.
void check_tls_files(const LiveUri& uri, const std::string& who, bool require_ca);

// Client side, before the handshake: sends `name` as SNI (unless it is an IP address) and makes
// the handshake fail unless the server's certificate is issued for `name` (a DNS name, checked
// against its subjectAltName, else its CN; or an IP address).
void set_tls_peer_name(boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>& stream,
                       const std::string& name);

// Why a handshake failed, in words: the error, and the certificate check's verdict when it
// failed ("certificate verify failed: certificate revoked").
std::string tls_failure(const boost::system::error_code& ec, SSL* ssl);

}  // namespace eit::acquisition::detail
