// Headers of raw-frame messages (see raw_frame_headers.hpp).
#include "raw_frame_headers.hpp"

#include "eit/nats/nats_frames.hpp"

namespace eit::nats {

const char* header_of(natsMsg* msg, const char* name) noexcept {
  const char* value = nullptr;
  return natsMsgHeader_Get(msg, name, &value) == NATS_OK ? value : nullptr;
}

double stated_rate_hz(natsMsg* msg) noexcept {
  return frame_rate_from_header(header_of(msg, kRateHeader));
}

}  // namespace eit::nats
