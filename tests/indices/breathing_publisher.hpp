#pragma once
// Set-up shared by the IndicesPublisher tests: an engine that reads Breathing's grid at its frame
// rate, and a feed that publishes Breathing's images through one reused FrameSlot.
#include <cstddef>
#include <vector>

#include "breathing_images.hpp"
#include "eit/indices/indices_engine.hpp"
#include "eit/indices/indices_publisher.hpp"
#include "eit/pipeline/frame.hpp"

namespace eit::test {

// An engine over b's grid at b's frame rate; the other IndicesOptions keep their defaults.
inline indices::IndicesEngine breathing_engine(const Breathing& b) {
  indices::IndicesOptions o;
  o.rate_hz = b.rate_hz;
  return indices::IndicesEngine(indices::BodyLayout::from_grid(b.grid()), o);
}

// Publishes b's image number `image` as the frame with sequence number `seq`. Borrows b.
class BreathingFeed {
 public:
  explicit BreathingFeed(const Breathing& b) : b_(b) {}
  void publish(indices::IndicesPublisher& pub, size_t seq, size_t image) {
    b_.frame(image, image_);
    slot_.seq = seq;
    slot_.image = image_.data();
    pub.publish(slot_);
  }

 private:
  const Breathing& b_;
  std::vector<float> image_;
  pipeline::FrameSlot slot_;
};

}  // namespace eit::test
