#include "listen_counts.hpp"

#include <algorithm>

namespace eit::cli {

bool ListenCounts::Series::test(uint64_t seq) const {
  const uint64_t bit = seq % kSeqWindow;
  return (seen[bit / 64] >> (bit % 64)) & 1;
}

void ListenCounts::Series::set(uint64_t seq) {
  const uint64_t bit = seq % kSeqWindow;
  seen[bit / 64] |= uint64_t{1} << (bit % 64);
}

void ListenCounts::Series::clear_range(uint64_t from, uint64_t to) {
  if (to - from >= kSeqWindow) {
    std::fill(seen.begin(), seen.end(), 0);
    return;
  }
  for (uint64_t seq = from; seq != to; ++seq) {
    const uint64_t bit = seq % kSeqWindow;
    seen[bit / 64] &= ~(uint64_t{1} << (bit % 64));
  }
}

Arrival ListenCounts::on_image(uint64_t series_id, uint64_t seq, uint32_t dropped_before) {
  Series& s = series_[series_id];
  if (s.received == 0) {
    // The first image of this series that listen got: where its counting starts. Its
    // dropped_before covers frames before that, so it is not counted.
    s.low = s.high = seq;
    s.received = 1;
    s.seen.assign(kSeqWindow / 64, 0);
    s.set(seq);
    return Arrival::kNewSeries;
  }
  if (seq > s.high) {
    s.clear_range(s.high + 1, seq + 1);  // bits of seqs that left the window
    s.high = seq;
    s.set(seq);
    ++s.received;
    s.reported_dropped += dropped_before;
    return Arrival::kInOrder;
  }
  const bool in_window = seq + kSeqWindow > s.high;
  if (in_window && s.test(seq)) {
    ++duplicates_;
    return Arrival::kDuplicate;
  }
  if (in_window) s.set(seq);
  s.low = std::min(s.low, seq);
  ++s.received;
  s.reported_dropped += dropped_before;
  ++out_of_order_;
  return Arrival::kOutOfOrder;
}

void ListenCounts::on_series_end(uint64_t series_id, std::optional<uint64_t> frames_sent) {
  Series& s = series_[series_id];
  if (s.ended) return;  // a repeated end must not count the same images twice
  s.ended = true;
  if (!frames_sent) return;
  ++series_with_sent_;
  if (*frames_sent > s.received) sent_not_received_ += *frames_sent - s.received;
}

ListenTotals ListenCounts::totals() const {
  ListenTotals t;
  for (const auto& [id, s] : series_) {
    if (s.received == 0) continue;  // only its end was seen
    ++t.series;
    const uint64_t span = s.high - s.low + 1;
    // An image too far behind to check for a duplicate counts as received: never below zero.
    t.missing += span > s.received ? span - s.received : 0;
    t.reported_dropped += s.reported_dropped;
  }
  t.duplicates = duplicates_;
  t.out_of_order = out_of_order_;
  t.sent_not_received = sent_not_received_;
  t.series_with_sent = series_with_sent_;
  return t;
}

}  // namespace eit::cli
