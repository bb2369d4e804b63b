#pragma once
// TLS ingest (docs/security.md): a device link over TCP with mutual certificate authentication,
// so a device on the ward network cannot be impersonated and its frames cannot be read.
//
//   tls-listen://HOST:PORT?cert=server.pem&key=server.key&ca=devices-ca.pem
//   tls-connect://HOST:PORT?ca=devices-ca.pem&cert=client.pem&key=client.key&name=device.ward
//
// Either end may add crl=FILE.pem: the CA's certificate revocation list(s); the peer's
// certificate is then checked against them (X509_V_FLAG_CRL_CHECK) and a revoked one fails the
// handshake (refused and counted as any other). With crl= a CRL from the peer's CA must be in the
// file, or every peer fails.
//
// The server presents `cert` (PEM chain) / `key` (PEM) and admits a client only if it presents a
// certificate signed by `ca` (verify_peer | fail_if_no_peer_cert, TLS 1.2 or newer). A client
// without a certificate, with one from another CA, or that fails the handshake (or does not
// finish it within handshake_timeout) is closed and counted in refused(); the next is accepted.
// One device connection at a time, as tcp-listen://.
//
// The client (tls-connect://, a device that listens) verifies the device's certificate against `ca` and
// its name against `name` (default: HOST; a DNS name is checked against the certificate's
// subjectAltName or CN, an IP address against its IP entries), and presents `cert`/`key` when
// the device asks for a client certificate. A failed handshake (untrusted certificate, wrong
// name, refused client certificate) is counted in refused() and retried with backoff, as is a
// lost connection, a refused connect or `idle` silence (tcp://, tcp_liveness.hpp).
//
// Threads: read() on one thread; stop(), stats(), refused() from any thread. Set-up (reading
// the certificate files, binding) throws std::runtime_error naming the URI, the file and what
// was expected.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "eit/acquisition/byte_transport.hpp"
#include "eit/acquisition/tcp_liveness.hpp"

namespace eit::acquisition {

struct TlsFiles {
  std::string cert, key, ca;  // PEM files
  std::string name;           // client: the name the server's certificate must carry; "": host
  std::string crl;            // PEM certificate revocation list(s) of the ca= CA; "": none
};

class TlsServerTransport : public ByteTransport {
 public:
  // Peers closed without delivering a byte: no or untrusted certificate, failed handshake.
  virtual uint64_t refused() const noexcept = 0;
};

class TlsClientTransport : public ByteTransport {
 public:
  // Handshakes that failed: the server's certificate untrusted or for another name, or ours
  // refused during the handshake.
  virtual uint64_t refused() const noexcept = 0;
};

std::unique_ptr<TlsClientTransport> make_tls_client_transport(
    const std::string& host, uint16_t port, const TlsFiles& files, ReconnectPolicy reconnect = {},
    TcpLiveness liveness = {}, std::chrono::milliseconds handshake_timeout = std::chrono::seconds(5));

// liveness: as for tcp-listen, a device connection silent for liveness.idle is closed (so the
// device connecting after it is accepted), and TCP keepalive is set on each connection.
std::unique_ptr<TlsServerTransport> make_tls_server_transport(
    const std::string& host, uint16_t port, const TlsFiles& files, TcpLiveness liveness = {},
    std::chrono::milliseconds handshake_timeout = std::chrono::seconds(5));

}  // namespace eit::acquisition
