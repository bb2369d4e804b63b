// The live view's server out of file descriptors: a failed accept leaves the listen socket
// readable, so the server must pause before trying again (the old one re-accepted at once and
// spun a core for as long as the shortage lasted), count the failures, and serve the waiting
// browser once descriptors are back.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "eit/view/view_server.hpp"
#include "fd_exhaustion.hpp"

namespace {

// Reads what the server sends within `ms`; empty when nothing came.
std::string read_within(int fd, int ms) {
  std::string out;
  char b[4096];
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) != 1) continue;
    const ssize_t n = recv(fd, b, sizeof b, 0);
    if (n <= 0) break;
    out.append(b, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

TEST_CASE("view server: out of file descriptors it pauses between accepts and serves afterwards") {
  eit::view::ViewServerOptions o;
  o.port = 0;
  std::mutex reports_mutex;
  std::vector<std::string> reports;
  o.report = [&](const std::string& line) {
    std::lock_guard lock(reports_mutex);
    reports.push_back(line);
  };
  eit::view::ViewServer server(o);
  server.start();
  const int browser = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(browser >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(server.port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  uint64_t failures = 0;
  {
    eit::test::FdExhaustion exhausted;
    REQUIRE(connect(browser, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    failures = server.stats().accept_failures;
  }
  INFO("accept failures in 600 ms: " << failures);
  CHECK(failures >= 1);
  CHECK(failures <= 12);  // one per 100 ms pause; the old loop made thousands
  const std::string request =
      "GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  REQUIRE(send(browser, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  const std::string reply = read_within(browser, 3000);
  close(browser);
  CHECK(reply.find("200 OK") != std::string::npos);
  CHECK(reply.find("\"accept_failures\"") != std::string::npos);
  CHECK(reply.find("Too many open files") != std::string::npos);
  server.stop();
  // One line when accepting starts to fail, one when it works again: not one per failure.
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].find("cannot accept a connection (Too many open files)") != std::string::npos);
  CHECK(reports[1].find("accepting connections again") != std::string::npos);
}
