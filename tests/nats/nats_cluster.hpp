#pragma once
// Three real `nats-server -js` processes clustered on loopback ports (server names n0-PORT,
// n1-PORT, n2-PORT, cluster "eit"), each with its own store folder, started on other ports when
// a concurrent test took one first; any node can be killed (SIGKILL). Every process
// is killed and every folder removed when the object goes, also when a test fails. available()
// is false (the test skips, saying so) when the binary is not installed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "nats_server.hpp"

namespace eit::test {

class NatsCluster {
 public:
  static constexpr int kNodes = 3;

  NatsCluster() {
    dir_ =
        std::filesystem::temp_directory_path() / ("eit-nats-cluster-" + std::to_string(getpid()));
    if (!nats_server_installed()) return;
    // A port found free may be taken by another test's server before a node binds it: that node
    // exits (or the test would talk to the other server). All nodes again on other ports.
    for (int attempt = 0; attempt < kNatsStartAttempts; ++attempt) {
      for (int i = 0; i < kNodes; ++i) {
        client_port_[i] = unused_loopback_port();
        cluster_port_[i] = unused_loopback_port();
      }
      for (int i = 0; i < kNodes; ++i) start(i);
      if (all_ready()) return;
      for (int i = 0; i < kNodes; ++i) kill_node(i);
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
    FAIL_CHECK("a 3-node nats-server cluster did not start in " << kNatsStartAttempts << " tries");
  }
  ~NatsCluster() {
    for (int i = 0; i < kNodes; ++i) kill_node(i);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool available() const { return pid_[0] > 0; }
  std::string url(int i) const { return fmt::format("nats://127.0.0.1:{}", client_port_[i]); }
  // n0, n1, n2 and the client port, unique on this host. fmt rather than "n" + to_string: GCC 12
  // warns (-Wrestrict, a false positive) on the latter.
  std::string name(int i) const { return fmt::format("n{}-{}", i, client_port_[i]); }

  void kill_node(int i) {
    if (pid_[i] <= 0) return;
    ::kill(pid_[i], SIGKILL);
    waitpid(pid_[i], nullptr, 0);
    pid_[i] = -1;
  }

 private:
  // Every node alive and greeting as itself within kNatsReadyTimeout.
  bool all_ready() {
    std::array<std::string, kNodes> names;
    for (int i = 0; i < kNodes; ++i) names[i] = name(i);
    return nats_servers_ready(pid_, client_port_, names);
  }

  void start(int i) {
    const auto store = dir_ / name(i);
    std::filesystem::create_directories(store);
    std::string routes;
    for (int j = 0; j < kNodes; ++j)
      if (j != i)
        routes += (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") +
                  std::to_string(cluster_port_[j]);
    const std::string port = std::to_string(client_port_[i]);
    const std::string cluster = "nats://127.0.0.1:" + std::to_string(cluster_port_[i]);
    const std::string log = (store / "server.log").string(), sd = store.string(), n = name(i);
    pid_[i] = fork();
    if (pid_[i] == 0) {
      execl(nats_server_path().c_str(), "nats-server", "-js", "-a", "127.0.0.1", "-p", port.c_str(),
            "-sd", sd.c_str(), "-l", log.c_str(), "--server_name", n.c_str(), "--cluster_name",
            "eit", "--cluster", cluster.c_str(), "--routes", routes.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }

  std::filesystem::path dir_;
  std::array<int, kNodes> client_port_{}, cluster_port_{};
  std::array<pid_t, kNodes> pid_{-1, -1, -1};
};

}  // namespace eit::test
