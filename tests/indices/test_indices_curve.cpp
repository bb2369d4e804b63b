// IndicesPublisher with CURVE (docs/security.md), over real ZeroMQ on loopback: a subscriber whose
// key is on the allow list receives the per-frame global messages; one with an unknown key and a
// plaintext one receive nothing, and the unknown key is counted.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "breathing_publisher.hpp"
#include "eit/indices/indices_publisher.hpp"
#include "eit/sinks/curve_keys.hpp"

using namespace eit::indices;
namespace sinks = eit::sinks;

namespace {

// A SUB on `endpoint` (CURVE client with `client` when server_public is not empty).
zmq::socket_t subscriber(zmq::context_t& ctx, const std::string& endpoint,
                         const std::string& server_public, const sinks::CurveKeyPair& client) {
  zmq::socket_t sub(ctx, zmq::socket_type::sub);
  if (!server_public.empty()) sinks::apply_curve_client(sub, server_public, client);
  sub.set(zmq::sockopt::subscribe, "eit/c/global");
  sub.connect(endpoint);
  return sub;
}

size_t received(zmq::socket_t& sub) {
  size_t n = 0;
  zmq::message_t part;
  while (sub.recv(part, zmq::recv_flags::dontwait)) {
    if (!part.more()) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("indices over CURVE: an allowed key receives, an unknown key and plaintext do not") {
  const auto server = sinks::generate_curve_keypair();
  const auto alice = sinks::generate_curve_keypair();
  const auto mallory = sinks::generate_curve_keypair();
  eit::test::Breathing b;
  IndicesPublisherOptions po;
  po.endpoint = "tcp://127.0.0.1:*";
  po.stream = "c";
  po.curve_server = server;
  po.curve_allowed = {alice.public_z85};
  IndicesPublisher pub(eit::test::breathing_engine(b), po);
  CHECK(pub.curve());
  zmq::context_t ctx(1);
  auto good = subscriber(ctx, pub.endpoint(), server.public_z85, alice);
  auto bad = subscriber(ctx, pub.endpoint(), server.public_z85, mallory);
  auto plain = subscriber(ctx, pub.endpoint(), "", {});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // handshakes, slow joiners

  pub.begin();
  eit::test::BreathingFeed feed(b);
  size_t got_good = 0, got_bad = 0, got_plain = 0;
  for (size_t k = 0; k < 100; ++k) feed.publish(pub, k, k);
  pub.end();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (got_good < 100 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    got_good += received(good);
    got_bad += received(bad);
    got_plain += received(plain);
  }
  CHECK(got_good == 100);
  CHECK(got_bad == 0);
  CHECK(got_plain == 0);
  CHECK(pub.curve_admitted() >= 1);
  CHECK(pub.curve_refused() >= 1);
}

TEST_CASE("indices CURVE without an allow list is refused at set-up") {
  eit::test::Breathing b;
  IndicesPublisherOptions po;
  po.endpoint = "tcp://127.0.0.1:*";
  po.curve_server = sinks::generate_curve_keypair();
  CHECK_THROWS_WITH_AS(IndicesPublisher(eit::test::breathing_engine(b), po),
                       doctest::Contains("allow list"), std::runtime_error);
}
