#pragma once
// StampRecorder: every timestamp of every frame of a benchmark run, in arrays allocated once for
// a fixed number of frames (indexed by seq − first_seq), so recording on the per-frame path is a
// bounds check and a few stores: no allocation, lock or log.
//
// Columns are the pipeline's stages (pipeline::Stage: scheduled … published, where "published"
// is when the publish stage took the frame), then kSentColumn (the ZeroMQ send call returned)
// and kSubscriberColumn (the subscriber, in this or another process, had the whole message).
// A stamp of 0 means "never stamped".
//
// Threads: record() from one thread (the publish stage, through StampSink), record_subscriber()
// from one thread (the subscriber, or the parent after reading a child's times); the two write
// disjoint arrays.
// Everything else only after those threads have stopped (or before they start).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "eit/pipeline/frame.hpp"

namespace eit::bench {

inline constexpr size_t kSentColumn = pipeline::kStageCount;
inline constexpr size_t kSubscriberColumn = pipeline::kStageCount + 1;
inline constexpr size_t kStampColumns = pipeline::kStageCount + 2;

// "scheduled", …, "published", "sent", "subscribed".
std::string_view stamp_column_name(size_t column) noexcept;

class StampRecorder {
 public:
  // Room for seq in [first_seq, first_seq + capacity).
  explicit StampRecorder(size_t capacity, uint64_t first_seq = 0);

  size_t capacity() const noexcept { return capacity_; }
  uint64_t first_seq() const noexcept { return first_seq_; }

  // Copies the slot's stage stamps and the time its send completed into its row. False (and
  // counted) when seq is out of range.
  bool record(const pipeline::FrameSlot& slot, int64_t sent_ns) noexcept;
  // Same, from raw stamps (for callers that keep their own copies).
  bool record(uint64_t seq, std::span<const int64_t, pipeline::kStageCount> stamps,
              int64_t sent_ns) noexcept;
  // The subscriber's receive time for seq. False (and counted) when out of range.
  bool record_subscriber(uint64_t seq, int64_t t_ns) noexcept;

  // 0 when never stamped.
  int64_t stamp(uint64_t seq, size_t column) const noexcept;
  bool has_row(uint64_t seq) const noexcept;

  uint64_t out_of_range() const noexcept { return out_of_range_; }
  uint64_t subscriber_out_of_range() const noexcept { return subscriber_out_of_range_; }
  // Rows recorded by record() more than once (a seq seen twice: a source or pipeline bug).
  uint64_t duplicates() const noexcept { return duplicates_; }

  // Forgets everything recorded (for reuse across runs); does not allocate.
  void clear() noexcept;

 private:
  size_t capacity_;
  uint64_t first_seq_;
  std::vector<int64_t> stamps_;      // capacity × (kStageCount + 1: sent), row-major
  std::vector<int64_t> subscriber_;  // capacity
  uint64_t out_of_range_ = 0;
  uint64_t subscriber_out_of_range_ = 0;
  uint64_t duplicates_ = 0;
};

}  // namespace eit::bench
