#pragma once
// The JetStream streams eitstream keeps, one per kind of data, and their retention limits:
//
//   EIT_IMAGES   eit.*.*.img, eit.*.*.series, eit.*.*.global, eit.*.*.breath
//   EIT_RAW      eit.*.*.raw
//
// Limits by age and size (the oldest messages go first), and the replica count for a cluster.
#include <cstdint>

namespace eit::nats {

inline constexpr const char* kImageStream = "EIT_IMAGES";
inline constexpr const char* kRawStream = "EIT_RAW";

struct StreamLimits {
  int64_t max_age_s = 24 * 3600;            // keep a day of images and raw frames
  int64_t max_bytes = int64_t{8} << 30;     // per stream
  int replicas = 1;                         // 3 on a 3-node cluster
};

}  // namespace eit::nats
