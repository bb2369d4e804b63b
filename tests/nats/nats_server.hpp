#pragma once
// A real `nats-server -js` for tests: started on a free loopback port (another one when a
// concurrent test's server took it first) with its own store folder, killed (SIGKILL) and
// restarted on the same port on demand, removed at the end. available() is false (and the test
// skips, saying so) when the binary is not installed.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "loopback_port.hpp"

namespace eit::test {

// Where nats-server is installed, or "" when it is not.
inline std::string nats_server_path() {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/usr/local/bin"}) {
    const auto p = std::filesystem::path(dir) / "nats-server";
    if (std::filesystem::exists(p)) return p.string();
  }
  return {};
}

inline bool nats_server_installed() { return !nats_server_path().empty(); }

// For a test's first line: true, and the test's output says it was skipped, when `servers` (a
// NatsServer or NatsCluster) could not start because nats-server is not installed.
template <typename Servers>
bool skipped_without_nats(const Servers& servers) {
  if (servers.available()) return false;
  MESSAGE("SKIPPED: nats-server is not installed");
  return true;
}

// Whether the server on loopback `port` greets a new connection with an INFO line carrying
// `server_name` (so it is the one a test started, not another test's on a port taken first).
inline bool nats_greets_as(int port, const std::string& server_name) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  std::string info;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const timeval limit{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    char buf[512];
    while (info.find('\n') == std::string::npos && info.size() < 16384) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      info.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return info.rfind("INFO", 0) == 0 &&
         info.find("\"server_name\":\"" + server_name + "\"") != std::string::npos;
}

// How often a server (or cluster) is started on fresh ports, and how long each start may take.
inline constexpr int kNatsStartAttempts = 5;
inline constexpr std::chrono::seconds kNatsReadyTimeout{30};

// Waits until every server `pids[i]` started here greets on `ports[i]` as `names[i]` (not another
// test's server on the same port); false after kNatsReadyTimeout, or at once when one has exited
// (its port was taken meanwhile; its pid is then set to -1, it is reaped).
inline bool nats_servers_ready(std::span<pid_t> pids, std::span<const int> ports,
                               std::span<const std::string> names) {
  const auto end = std::chrono::steady_clock::now() + kNatsReadyTimeout;
  std::vector<bool> ready(pids.size(), false);
  while (std::chrono::steady_clock::now() < end) {
    bool all = true;
    for (size_t i = 0; i < pids.size(); ++i) {
      if (waitpid(pids[i], nullptr, WNOHANG) == pids[i]) {
        pids[i] = -1;
        return false;
      }
      ready[i] = ready[i] || nats_greets_as(ports[i], names[i]);
      all = all && ready[i];
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

class NatsServer {
 public:
  NatsServer() {
    if (!nats_server_installed()) return;
    // A port found free may be taken by another test's server before ours binds it: then ours
    // exits and the test would talk to the other one. Another port, a few times.
    for (int attempt = 0; attempt < kNatsStartAttempts && !available(); ++attempt) {
      port_ = unused_loopback_port();
      dir_ = std::filesystem::temp_directory_path() /
             ("eit-nats-" + std::to_string(getpid()) + "-" + std::to_string(port_));
      std::filesystem::create_directories(dir_);
      launch();
      if (!available()) {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
      }
    }
    if (!available()) FAIL_CHECK("nats-server did not start in " << kNatsStartAttempts << " tries");
  }
  ~NatsServer() {
    kill_now();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool available() const { return pid_ > 0; }
  int port() const { return port_; }
  const std::string& name() const { return name_; }  // --server_name, unique on this host
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

  // Starts the server again after kill_now(): same port, same store.
  void start() {
    if (!launch()) FAIL_CHECK("nats-server did not start again on port " << port_);
  }

  // SIGSTOP and SIGCONT: a server that keeps its connections open and answers nothing, as on a
  // stalled host.
  void pause() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
  }
  void resume() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
  }
  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  // Starts the server on port_; false (and not available()) when it exited or did not answer as
  // itself within kNatsReadyTimeout.
  bool launch() {
    name_ = "eit-test-" + std::to_string(getpid()) + "-" + std::to_string(port_);
    pid_ = fork();
    if (pid_ == 0) {
      const std::string port = std::to_string(port_), store = dir_.string();
      const std::string log = (dir_ / "server.log").string();
      execl(nats_server_path().c_str(), "nats-server", "-js", "-a", "127.0.0.1", "-p", port.c_str(),
            "-sd", store.c_str(), "-l", log.c_str(), "--server_name", name_.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    if (!nats_servers_ready({&pid_, 1}, {&port_, 1}, {&name_, 1})) kill_now();
    return available();
  }

  int port_ = 0;
  std::string name_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

}  // namespace eit::test
