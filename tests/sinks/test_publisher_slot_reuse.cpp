// Which pool slot carries the next image: the previous image's when the consumer side has given
// it back, as it has at any paced rate, so that every image is copied into memory still in the
// sink thread's cache (a 20,000-value image is 80 KB; cycling through every slot made each copy
// miss the cache).
// Over inproc the consumer's message is the publisher's slot itself, so its address tells which
// slot was lent.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "publisher_options.hpp"

using namespace eit::pipeline;
using namespace eit::sinks;

namespace {

// The next message's parts (series or image), or an empty vector after the receive timeout.
std::vector<zmq::message_t> next_message(zmq::socket_t& pull) {
  std::vector<zmq::message_t> parts;
  (void)zmq::recv_multipart(pull, std::back_inserter(parts));
  return parts;
}

}  // namespace

TEST_CASE("zmq publisher: an image goes out in the previous image's slot when that slot is back") {
  const auto m = eit::test::random_model();
  auto ctx = std::make_shared<zmq::context_t>(1);
  auto options = eit::test::loopback_publisher_options(ZmqPattern::kPush, true);
  options.endpoint = "inproc://eit-test-slot-reuse";
  ZmqPublisher pub(m, options, ctx);
  zmq::socket_t pull(*ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvtimeo, 5000);
  pull.connect(pub.endpoint());

  std::vector<float> values(m.n_meas(), 0.0f), image(m.n_out(), 1.0f);
  FrameSlot f;
  f.values = values.data();
  f.image = image.data();
  auto publish_and_receive = [&] {
    f.seq++;
    f.stamp(Stage::kPublished, now_ns());
    pub.publish(f);
    auto parts = next_message(pull);
    REQUIRE(parts.size() == 3);  // topic, header, image
    return parts;
  };
  pub.begin();
  REQUIRE(next_message(pull).size() == 2);  // the series message

  const void* first = publish_and_receive()[2].data();  // received, then given back
  auto held = publish_and_receive();
  CHECK(held[2].data() == first);  // the same slot again: it was free
  // While the consumer still holds that slot, the next image takes another.
  auto next = publish_and_receive();
  const void* second = next[2].data();
  CHECK(second != first);
  next.clear();
  held.clear();
  // Both back: the previous image's slot again, not the one that has been back longer.
  CHECK(publish_and_receive()[2].data() == second);
  CHECK(pub.stats().sent == 4);
  CHECK(pub.health().copied_sends == 0);
}
