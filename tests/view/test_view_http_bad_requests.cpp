// Requests no browser sends, through a real socket to the live view's server: a path with bytes
// that are not UTF-8 (the error reply once put it into JSON, which threw and ended the whole
// process: acquisition, publishing and recordings with it), and recapture counts that are not
// whole numbers. Each gets an error reply and the server keeps serving.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>

#include "eit/view/view_server.hpp"

namespace {

// One request on a fresh connection; the reply's first bytes (status line and headers, body).
std::string exchange(uint16_t port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  std::string out;
  char b[4096];
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until && out.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) != 1) continue;
    const ssize_t n = recv(fd, b, sizeof b, 0);
    if (n <= 0) break;
    out.append(b, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

std::string get(const std::string& method, const std::string& target) {
  return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
}

}  // namespace

TEST_CASE("view server: a path that is not UTF-8 gets an error reply and the server serves on") {
  eit::view::ViewServerOptions o;
  o.port = 0;
  eit::view::ViewServer server(o);
  server.start();
  CHECK(exchange(server.port(), get("GET", "/\xff")).starts_with("HTTP/1.1 404"));
  CHECK(exchange(server.port(), get("POST", "/\xc3")).starts_with("HTTP/1.1 405"));
  CHECK(exchange(server.port(), get("GET", "/api/\xe9tat")).starts_with("HTTP/1.1 404"));
  CHECK(exchange(server.port(), get("GET", "/api/state")).starts_with("HTTP/1.1 200"));
}

TEST_CASE("view server: recapture takes only a whole number of frames in range") {
  eit::view::ViewServerOptions o;
  o.port = 0;
  eit::view::ViewServer server(o);
  std::atomic<size_t> asked{0};
  server.set_recapture([&](size_t frames) {
    asked = frames;
    return std::string();
  });
  server.start();
  for (const char* bad : {"-5", "5abc", "", "0", "100001"}) {
    INFO(bad);
    CHECK(exchange(server.port(), get("POST", std::string("/api/recapture?frames=") + bad))
              .starts_with("HTTP/1.1 400"));
  }
  CHECK(asked == 0);
  CHECK(
      exchange(server.port(), get("POST", "/api/recapture?frames=25")).starts_with("HTTP/1.1 200"));
  CHECK(asked == 25);
  CHECK(exchange(server.port(), get("POST", "/api/recapture")).starts_with("HTTP/1.1 200"));
  CHECK(asked == 50);  // the default
}
