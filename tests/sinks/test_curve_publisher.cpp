// ZeroMQ CURVE on the image publisher (docs/security.md), over real loopback sockets: a client
// whose key is on the allow list receives images; an unknown key and a plaintext client get
// nothing and are counted as refused; key files round-trip with the secret file at mode 0600.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/sinks/curve_keys.hpp"
#include "eit/sinks/zmq_publisher.hpp"

using namespace eit::sinks;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const char* name) {
  const fs::path d = fs::temp_directory_path() / fmt::format("eit-curve-{}-{}", name, getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Counts the images one SUB receives on its own thread.
struct Client {
  zmq::socket_t socket;
  std::atomic<uint64_t> images{0};
  std::atomic<bool> stop{false};
  std::thread thread;

  Client(zmq::context_t& ctx, const std::string& endpoint, const CurveKeyPair* client,
         const std::string& server_public)
      : socket(ctx, zmq::socket_type::sub) {
    socket.set(zmq::sockopt::rcvtimeo, 50);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::subscribe, "eit/");
    socket.set(zmq::sockopt::reconnect_ivl, 50);
    if (client) apply_curve_client(socket, server_public, *client);
    socket.connect(endpoint);
    thread = std::thread([this] {
      while (!stop) {
        std::vector<zmq::message_t> parts;
        if (!zmq::recv_multipart(socket, std::back_inserter(parts))) continue;
        if (parts.at(0).to_string().ends_with("/img")) ++images;
      }
    });
  }
  ~Client() {
    stop = true;
    thread.join();
  }
};

}  // namespace

TEST_CASE("keygen's certificates round-trip, the secret file is 0600 and refused when readable") {
  const fs::path d = fresh_dir("keys");
  const CurveKeyPair keys = generate_curve_keypair();
  CHECK(is_z85_key(keys.public_z85));
  CHECK(is_z85_key(keys.secret_z85));
  write_curve_certificates(d / "server", keys);
  struct stat st {};
  REQUIRE(stat((d / "server_secret").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const CurveKeyPair pub = read_curve_certificate(d / "server", false);
  CHECK(pub.public_z85 == keys.public_z85);
  CHECK(pub.secret_z85.empty());
  const CurveKeyPair both = read_curve_certificate(d / "server_secret", true);
  CHECK(both.public_z85 == keys.public_z85);
  CHECK(both.secret_z85 == keys.secret_z85);
  fs::copy_file(d / "server", d / "public_only");
  chmod((d / "public_only").c_str(), 0600);
  CHECK_THROWS_WITH_AS(read_curve_certificate(d / "public_only", true),
                       doctest::Contains("secret-key is missing"), std::runtime_error);
  fs::remove(d / "public_only");
  CHECK_THROWS_WITH_AS(write_curve_certificates(d / "server", keys), doctest::Contains("--force"),
                       std::runtime_error);
  chmod((d / "server_secret").c_str(), 0644);
  CHECK_THROWS_WITH_AS(read_curve_certificate(d / "server_secret", true),
                       doctest::Contains("chmod 600"), std::runtime_error);

  // Allow lists: a folder of public certificates (secret files skipped) or a file of keys.
  write_curve_certificates(d / "alice", generate_curve_keypair());
  const auto from_dir = read_curve_allow_list(d);
  CHECK(from_dir.size() == 2);
  std::ofstream(d / "keys.txt") << "# ward 3\n" << keys.public_z85 << "\n";
  CHECK(read_curve_allow_list(d / "keys.txt") == std::vector<std::string>{keys.public_z85});
  std::ofstream(d / "bad.txt") << "not-a-key\n";
  CHECK_THROWS_WITH_AS(read_curve_allow_list(d / "bad.txt"), doctest::Contains("line 1"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(read_curve_allow_list(d / "server_secret"), doctest::Contains("secret key"),
                       std::runtime_error);
  fs::remove_all(d);
}

TEST_CASE("CURVE publisher: an allowed key receives, an unknown key and plaintext get nothing") {
  const auto m = eit::test::random_model();
  const CurveKeyPair server = generate_curve_keypair();
  const CurveKeyPair alice = generate_curve_keypair();
  const CurveKeyPair mallory = generate_curve_keypair();
  ZmqPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.series.stream = "test";
  o.curve_server = server;
  o.curve_allowed = {alice.public_z85};
  ZmqPublisher pub(m, o);

  zmq::context_t clients(1);
  Client allowed(clients, pub.endpoint(), &alice, server.public_z85);
  Client unknown(clients, pub.endpoint(), &mallory, server.public_z85);
  Client plain(clients, pub.endpoint(), nullptr, "");

  std::vector<float> image(m.n_out(), 1.0f);
  eit::pipeline::FrameSlot f;
  f.image = image.data();
  pub.begin();
  // Publish until the allowed client hears images and both others have been refused (each at
  // least once), bounded at 10 s; then 200 more frames.
  uint64_t seq = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto publish = [&] {
    f.seq = ++seq;
    pub.publish(f);
    pub.tick(eit::pipeline::now_ns());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  while ((allowed.images == 0 || pub.health().curve_refused < 2 ||
          pub.health().curve_unknown_keys < 1) &&
         std::chrono::steady_clock::now() < give_up)
    publish();
  const uint64_t before = allowed.images;
  for (int i = 0; i < 200; ++i) publish();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  pub.tick(eit::pipeline::now_ns() + 20'000'000);

  const PublisherHealth h = pub.health();
  INFO(pub.health_line());
  CHECK(before > 0);
  CHECK(allowed.images >= before + 200);
  CHECK(unknown.images == 0);
  CHECK(plain.images == 0);
  CHECK(h.curve_accepted >= 1);
  CHECK(h.curve_unknown_keys >= 1);
  CHECK(h.curve_refused >= 2);  // the unknown key and the plaintext client
  CHECK(pub.health_line().find("CURVE admitted") != std::string::npos);
}

TEST_CASE("CURVE publisher: a secret key without an allow list is refused at set-up") {
  const auto m = eit::test::random_model();
  ZmqPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.curve_server = generate_curve_keypair();
  CHECK_THROWS_WITH_AS(ZmqPublisher(m, o), doctest::Contains("--curve-allow"), std::runtime_error);
}
