// TLS ingest with client certificates (docs/security.md), over real loopback sockets: a device
// with a certificate from the configured CA streams bytes through; one without a certificate or
// with a certificate from another CA is refused, counted, and delivers nothing. Certificates are
// made by the openssl command in the set-up (skipped visibly without it).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/tls_transport.hpp"

using namespace eit::acquisition;
namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace ssl = asio::ssl;

namespace {

bool sh(const std::string& cmd) {
  return std::system(("{ " + cmd + "; } >/dev/null 2>&1").c_str()) == 0;
}

// Two CAs; a server certificate and a device certificate from "ward", a rogue device from "other".
fs::path make_certificates() {
  const fs::path d = fs::temp_directory_path() / fmt::format("eit-tls-{}", getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  const std::string in = "cd '" + d.string() + "' && ";
  auto ca = [&](const char* name) {
    return sh(in + fmt::format("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                               "-nodes -days 2 -subj /CN={0} "
                               "-keyout {0}.key -out {0}.pem",
                               name));
  };
  auto leaf = [&](const char* name, const char* by) {
    return sh(in + fmt::format("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                               "-nodes -subj /CN={0} -keyout {0}.key "
                               "-out {0}.csr && openssl x509 -req -in {0}.csr -CA {1}.pem -CAkey "
                               "{1}.key -CAcreateserial -days 2 -out {0}.pem",
                               name, by));
  };
  if (!(ca("ward") && ca("other") && leaf("server", "ward") && leaf("device", "ward") &&
        leaf("rogue", "other")))
    return {};
  return d;
}

// A device: connects, handshakes with `cert` (or none), writes `payload`; returns whether the
// handshake and the write succeeded.
bool send_as_device(uint16_t port, const fs::path& dir, const char* cert,
                    const std::string& payload) {
  asio::io_context io;
  ssl::context ctx(ssl::context::tls_client);
  ctx.load_verify_file((dir / "ward.pem").string());
  ctx.set_verify_mode(ssl::verify_peer);
  if (cert) {
    ctx.use_certificate_chain_file((dir / fmt::format("{}.pem", cert)).string());
    ctx.use_private_key_file((dir / fmt::format("{}.key", cert)).string(), ssl::context::pem);
  }
  ssl::stream<asio::ip::tcp::socket> s(io, ctx);
  boost::system::error_code ec;
  s.next_layer().connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  if (!ec) s.handshake(ssl::stream_base::client, ec);
  if (!ec) asio::write(s, asio::buffer(payload), ec);
  if (!ec) {
    // TLS 1.3 reports a refused client certificate only on the first read.
    char byte;
    s.next_layer().set_option(asio::socket_base::linger(true, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    s.next_layer().non_blocking(true);
    (void)s.read_some(asio::buffer(&byte, 1), ec);
    if (ec == asio::error::would_block) ec.clear();
  }
  return !ec;
}

// Everything the server reads within `ms`.
std::string drain(ByteTransport& t, int ms) {
  std::string got;
  uint8_t buf[4096];
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    const auto r = t.read(buf, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    if (r.status == TransportStatus::kData) got.append(reinterpret_cast<char*>(buf), r.size);
  }
  return got;
}

}  // namespace

TEST_CASE("tls-listen: a device with a certificate from the CA streams; others are refused") {
  const fs::path d = make_certificates();
  if (d.empty()) {
    MESSAGE("SKIPPED: the openssl command is not available to make test certificates");
    return;
  }
  const TlsFiles files{(d / "server.pem").string(), (d / "server.key").string(),
                       (d / "ward.pem").string()};
  auto server = make_tls_server_transport("127.0.0.1", 0, files, std::chrono::milliseconds(2000));
  const auto port = static_cast<uint16_t>(
      std::stoi(server->endpoint().substr(server->endpoint().rfind(':') + 1)));

  SUBCASE("a valid client certificate") {
    std::thread device([&] { CHECK(send_as_device(port, d, "device", "frame-bytes-1234")); });
    const std::string got = drain(*server, 1500);
    device.join();
    CHECK(got == "frame-bytes-1234");
    CHECK(server->refused() == 0);
  }
  SUBCASE("no client certificate, then a certificate from another CA") {
    std::thread devices([&] {
      CHECK_FALSE(send_as_device(port, d, nullptr, "forged-1"));
      CHECK_FALSE(send_as_device(port, d, "rogue", "forged-2"));
    });
    const std::string got = drain(*server, 2500);
    devices.join();
    CHECK(got.empty());
    CHECK(server->refused() == 2);
    CHECK(server->stats().last_error.find("refused") != std::string::npos);
  }
  fs::remove_all(d);
}

TEST_CASE("tls-listen:// URIs: cert, key and ca are required and checked at set-up") {
  CHECK_THROWS_WITH_AS(make_tls_server_transport("127.0.0.1", 0, {}),
                       doctest::Contains("cert= missing"), std::runtime_error);
  CHECK_THROWS_WITH_AS(
      make_tls_server_transport("127.0.0.1", 0, {"/nonexistent.pem", "/x.key", "/ca.pem"}),
      doctest::Contains("cert='/nonexistent.pem'"), std::runtime_error);
  const LiveUri u = parse_live_uri("tls-listen://127.0.0.1:0?cert=a.pem&key=a.key&ca=c.pem");
  CHECK(u.scheme == "tls-listen");
  CHECK(u.query.at("ca") == "c.pem");
}
