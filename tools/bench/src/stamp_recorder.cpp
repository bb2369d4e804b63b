#include "eit/bench/stamp_recorder.hpp"

#include <algorithm>

namespace eit::bench {
namespace {
constexpr size_t kRowStamps = pipeline::kStageCount + 1;  // the stages, then sent
}

std::string_view stamp_column_name(size_t column) noexcept {
  if (column < pipeline::kStageCount)
    return pipeline::stage_name(static_cast<pipeline::Stage>(column));
  if (column == kSentColumn) return "sent";
  if (column == kSubscriberColumn) return "subscribed";
  return "?";
}

StampRecorder::StampRecorder(size_t capacity, uint64_t first_seq)
    : capacity_(capacity),
      first_seq_(first_seq),
      stamps_(capacity * kRowStamps, 0),
      subscriber_(capacity, 0) {}

bool StampRecorder::record(const pipeline::FrameSlot& slot, int64_t sent_ns) noexcept {
  return record(slot.seq, std::span<const int64_t, pipeline::kStageCount>(slot.stamp_ns), sent_ns);
}

bool StampRecorder::record(uint64_t seq, std::span<const int64_t, pipeline::kStageCount> stamps,
                           int64_t sent_ns) noexcept {
  if (seq < first_seq_ || seq - first_seq_ >= capacity_) {
    ++out_of_range_;
    return false;
  }
  int64_t* row = stamps_.data() + (seq - first_seq_) * kRowStamps;
  if (row[static_cast<size_t>(pipeline::Stage::kPublished)] != 0) ++duplicates_;
  std::copy(stamps.begin(), stamps.end(), row);
  row[kSentColumn] = sent_ns;
  return true;
}

bool StampRecorder::record_subscriber(uint64_t seq, int64_t t_ns) noexcept {
  if (seq < first_seq_ || seq - first_seq_ >= capacity_) {
    ++subscriber_out_of_range_;
    return false;
  }
  subscriber_[seq - first_seq_] = t_ns;
  return true;
}

int64_t StampRecorder::stamp(uint64_t seq, size_t column) const noexcept {
  if (seq < first_seq_ || seq - first_seq_ >= capacity_ || column >= kStampColumns) return 0;
  const size_t i = seq - first_seq_;
  if (column == kSubscriberColumn) return subscriber_[i];
  return stamps_[i * kRowStamps + column];
}

bool StampRecorder::has_row(uint64_t seq) const noexcept {
  return stamp(seq, static_cast<size_t>(pipeline::Stage::kPublished)) != 0;
}

void StampRecorder::clear() noexcept {
  std::fill(stamps_.begin(), stamps_.end(), 0);
  std::fill(subscriber_.begin(), subscriber_.end(), 0);
  out_of_range_ = subscriber_out_of_range_ = duplicates_ = 0;
}

}  // namespace eit::bench
