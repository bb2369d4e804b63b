#pragma once
// ListenCounts: what `eitstream listen` counts of the images it receives, kept per series (the
// header's series_id), so that a publisher restart or a second stream on the same endpoint starts
// a series of its own instead of looking like images out of order.
//
// Per series, counting starts at the first image listen received of it (frames before that were
// sent before listen joined, or lost on the way; only the series-end's frames_sent tells):
//   missing by seq     seq numbers between the first and the newest image received that never
//                      came (late arrivals fill their gap again)
//   reported dropped   of those, the frames the publisher says its pipeline dropped: the sum of
//                      dropped_before of every image but the first of its series (the first one's
//                      covers frames before listen's first seq), so it never exceeds the above
//   duplicates         an image whose series and seq were already received
//   out of order       an image behind the newest of its series, not received before
//   sent not received  at a series-end with frames_sent: frames_sent minus the images listen
//                      received of that series (includes images sent before listen joined)
// Duplicates are told apart within the last kSeqWindow seq numbers of a series; an image further
// behind is counted out of order. One thread; allocates once per new series.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace eit::cli {

struct ListenTotals {
  uint64_t series = 0;  // distinct series_ids of images
  uint64_t missing = 0, reported_dropped = 0, duplicates = 0, out_of_order = 0;
  uint64_t sent_not_received = 0;
  uint64_t series_with_sent = 0;  // series whose series-end gave frames_sent
};

enum class Arrival { kNewSeries, kInOrder, kOutOfOrder, kDuplicate };

class ListenCounts {
 public:
  static constexpr uint64_t kSeqWindow = 4096;

  Arrival on_image(uint64_t series_id, uint64_t seq, uint32_t dropped_before);
  // A series-end message; frames_sent when it carried one. Each series is reconciled once.
  void on_series_end(uint64_t series_id, std::optional<uint64_t> frames_sent);
  ListenTotals totals() const;

 private:
  struct Series {
    uint64_t low = 0, high = 0;  // lowest and highest seq received
    uint64_t received = 0;       // distinct seqs received
    uint64_t reported_dropped = 0;
    bool ended = false;
    std::vector<uint64_t> seen;  // bit (seq % kSeqWindow): received, for seq in (high - W, high]
    bool test(uint64_t seq) const;
    void set(uint64_t seq);
    void clear_range(uint64_t from, uint64_t to);  // [from, to)
  };
  std::unordered_map<uint64_t, Series> series_;
  uint64_t duplicates_ = 0, out_of_order_ = 0, sent_not_received_ = 0, series_with_sent_ = 0;
};

}  // namespace eit::cli
