#pragma once
// A real `nats-server -js` for tests: started on a free loopback port with its own store folder,
// killed (SIGKILL) and restarted on the same port on demand, removed at the end. available() is
// false (and the test skips, saying so) when the binary is not installed.
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
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

class NatsServer {
 public:
  NatsServer() : port_(unused_loopback_port()) {
    dir_ = std::filesystem::temp_directory_path() /
           ("eit-nats-" + std::to_string(getpid()) + "-" + std::to_string(port_));
    std::filesystem::create_directories(dir_);
    if (nats_server_installed()) start();
  }
  ~NatsServer() {
    kill_now();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool available() const { return pid_ > 0; }
  int port() const { return port_; }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

  void start() {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string port = std::to_string(port_), store = dir_.string();
      const std::string log = (dir_ / "server.log").string();
      execl(nats_server_path().c_str(), "nats-server", "-js", "-a", "127.0.0.1", "-p",
            port.c_str(), "-sd", store.c_str(), "-l", log.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    wait_until_ready();
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
  void wait_until_ready() {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      // Ready when it accepts a connection and greets with its INFO line.
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(port_));
      char greeting[4] = {};
      const bool ready = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                         ::read(fd, greeting, sizeof greeting) == 4 &&
                         std::string(greeting, 4) == "INFO";
      close(fd);
      if (ready) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  int port_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

}  // namespace eit::test
