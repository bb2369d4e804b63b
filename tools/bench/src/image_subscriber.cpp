#include "eit/bench/image_subscriber.hpp"

#include <cstring>
#include <span>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/image_batch.hpp"
#include "eit/sinks/image_header.hpp"

namespace eit::bench {

ImageSubscriber::ImageSubscriber(zmq::context_t& context, const std::string& endpoint,
                                 size_t capacity, bool pull)
    : capacity_(capacity) {
  times_.reserve(capacity);
  try {
    socket_ = zmq::socket_t(context, pull ? zmq::socket_type::pull : zmq::socket_type::sub);
    socket_.set(zmq::sockopt::rcvhwm, 100'000);  // the subscriber is the measuring device: keep up
    if (!pull) socket_.set(zmq::sockopt::subscribe, "eit/");
    socket_.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(
        fmt::format("bench subscriber: cannot connect to '{}': {}", endpoint, e.what()));
  }
}

bool ImageSubscriber::receive_one() {
  if (!socket_.recv(topic_, zmq::recv_flags::dontwait)) return false;
  // Take the rest of the multipart message; the image's time is when its last part is in.
  size_t parts = 1;
  if (topic_.more()) {
    (void)socket_.recv(header_, zmq::recv_flags::none);
    ++parts;
    if (header_.more()) {
      (void)socket_.recv(payload_, zmq::recv_flags::none);
      ++parts;
      while (payload_.more()) {  // not our format: count the parts and discard them
        (void)socket_.recv(payload_, zmq::recv_flags::none);
        ++parts;
      }
    }
  }
  const int64_t t = pipeline::now_ns();
  const std::string_view topic(static_cast<const char*>(topic_.data()), topic_.size());
  const std::span headers(static_cast<const std::byte*>(header_.data()), header_.size());
  const std::span payloads(static_cast<const std::byte*>(payload_.data()), payload_.size());
  if (topic.ends_with(sinks::kImageTopicSuffix) && parts == 3) {
    const auto h = sinks::decode_image_message(headers, payloads);
    if (!h) {
      ++counts_.malformed;
      return true;
    }
    note_image(h->seq, t);
  } else if (topic.ends_with(sinks::kImageBatchTopicSuffix) && parts == 3) {
    // Every image of a batch arrived when the message did.
    const size_t n = sinks::for_each_batched_image(
        headers, payloads, [&](const sinks::ImageHeader& h, auto) { note_image(h.seq, t); });
    if (n == 0)
      ++counts_.malformed;
    else
      ++counts_.batches;
  } else if (topic.ends_with("/series") && parts == 2) {
    ++counts_.series;
    const std::string_view body(static_cast<const char*>(header_.data()), header_.size());
    if (body.find("\"series-end\"") != std::string_view::npos) counts_.series_end = true;
  } else {
    ++counts_.malformed;
  }
  return true;
}

void ImageSubscriber::note_image(uint64_t seq, int64_t t_ns) noexcept {
  ++counts_.images;
  if (times_.size() < capacity_)
    times_.push_back({seq, t_ns});
  else
    ++counts_.overflow;
}

size_t ImageSubscriber::poll(int timeout_ms) {
  const uint64_t before = counts_.images;
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) > 0)
    while (receive_one()) {
    }
  return static_cast<size_t>(counts_.images - before);
}

size_t ImageSubscriber::drain() {
  const uint64_t before = counts_.images;
  while (receive_one()) {
  }
  return static_cast<size_t>(counts_.images - before);
}

}  // namespace eit::bench
