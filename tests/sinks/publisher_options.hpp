#pragma once
// The options the ZmqPublisher tests start from: an ephemeral port on loopback TCP (read back with
// ZmqPublisher::endpoint()), topics under eit/test/.
#include "eit/sinks/zmq_publisher.hpp"

namespace eit::test {

inline sinks::ZmqPublisherOptions loopback_publisher_options(sinks::ZmqPattern pattern,
                                                             bool lossless) {
  sinks::ZmqPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.pattern = pattern;
  o.lossless = lossless;
  o.series.stream = "test";
  return o;
}

}  // namespace eit::test
