#pragma once
// The bench subscriber child's loop for `--transport shm` (subscriber_process.hpp): attaches a
// ShmReader to the ring, says "ready\n" on stdout, then records (seq, now_ns() once the image is
// copied out of the ring and validated) for every image until the series ends, or until 300 ms
// pass without an image after the parent closed stdin. spin: the reader busy-polls the ring (the
// pair of --latency-mode spin), else it spins briefly and sleeps on the ring's futex. Images the
// reader was lapped on are not received (the run's lost count shows them).
#include <string>

#include "eit/bench/subscriber_process.hpp"

namespace eit::bench {

// Fills `out`; returns false when it could not write "ready" (the parent is gone). Throws
// std::runtime_error naming the ring when it cannot attach.
bool receive_shm_images(const std::string& uri, size_t capacity, bool spin, SubscriberReport& out);

}  // namespace eit::bench
