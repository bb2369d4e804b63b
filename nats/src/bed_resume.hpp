#pragma once
// A bed's resume point: the last raw stream sequence through which every frame of the bed was
// reconstructed, its image stored and the frame acknowledged. Kept beside the bed's lease, in the
// key-value bucket EIT_BEDS as `r.<site>.<bed>` = "<sequence> <EIT_RAW's creation time, ns>", with
// the header `Eit-Consumer: <name>`, the bed's consumer its holder reads (bed_consumer.hpp). The
// name is a header, not a third field, so that an eitstream from before per-holder consumers still
// parses the value (it ignores the header, and reads the shared eitworker-<site>-<bed>); a point
// without the header (written by one) names that shared consumer.
//
// Why: a worker taking a bed deletes the former holder's consumer and makes its own
// (bed_consumer.hpp). One that dies in between leaves no consumer, and the next taker would start
// from --since (by default the bed's whole history). With the point stored before the consumer is
// deleted, the next taker starts after it instead. The stream's creation time tells a point of an
// EIT_RAW that was deleted and made again (its sequences start at 1 again) from one of the stream
// as it is.
//
// Fencing: every write is a compare-and-set on the key's revision (the publish kvStore_Update
// makes: Nats-Expected-Last-Subject-Sequence; no message at all for the first), against the
// revision this worker last read or wrote. A worker taking a bed writes the point over the
// revision it reads, so a former holder that was frozen (SIGSTOP, a stalled VM) and wakes after the
// takeover has its next write refused: it can neither move the point back (the next taker would
// redo frames) nor go on with a bed that is no longer its own.
//
// ResumeWriter: the bed thread's writes while it runs, at most one a second and one at a time, as
// asynchronous publishes on the bed's JetStream context; libnats' ack thread reports each outcome
// (on_ack). Each names the consumer the point was opened with. load_resume_point and
// store_resume_point: set-up path, blocking requests.
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nats/nats.h>

namespace eit::nats {

struct ResumePoint {
  uint64_t acked_through = 0;  // raw stream sequence; 0: nothing yet
  int64_t raw_created_ns = 0;  // EIT_RAW's creation time when the point was stored
  std::string consumer;        // the holder's consumer on EIT_RAW; empty: none named
};

// The header of a stored point that names its consumer.
inline constexpr const char* kConsumerHeader = "Eit-Consumer";

// $KV.EIT_BEDS.r.<site>.<bed>: the subject a put of the bed's key publishes on.
std::string resume_subject(const std::string& site, const std::string& bed);

// The value's two numbers (the consumer, a header, is not in it).
std::optional<ResumePoint> parse_resume_point(std::string_view text) noexcept;

// The stored point, or nullopt when there is none, and the key's revision (the stream sequence of
// its last message, a deletion included; 0: never written). On failure `error` says what.
natsStatus load_resume_point(jsCtx* js, const std::string& subject,
                             std::optional<ResumePoint>* point, uint64_t* revision,
                             std::string* error);
// Stores `point` if the key's revision is still `*revision` (0: never written); on success
// `*revision` is the new one. A refusal (another worker wrote since) returns NATS_MISMATCH.
natsStatus store_resume_point(jsCtx* js, const std::string& subject, ResumePoint point,
                              uint64_t* revision, std::string* error);

class ResumeWriter {
 public:
  explicit ResumeWriter(std::string subject) : subject_(std::move(subject)) {}

  // The point as the bed's consumer was (re)made: already stored, at `revision`, naming the
  // consumer every later write names too. Allocates (set-up path).
  void opened(ResumePoint point, uint64_t revision);
  // After an acknowledgement through `sequence`.
  void acked(uint64_t sequence) noexcept { acked_.acked_through = sequence; }
  const ResumePoint& point() const noexcept { return acked_; }
  // The revision last written (or read at the consumer's set-up); 0 before.
  uint64_t revision() const noexcept { return revision_.load(std::memory_order_acquire); }
  // A write was refused: another worker wrote the point since, so the bed is no longer ours.
  bool superseded() const noexcept { return superseded_.load(std::memory_order_acquire); }

  // Publishes the point when it moved, a second passed since the last publish and the previous
  // one was answered. Never blocks (the publish is asynchronous); allocates only inside libnats,
  // at most once a second.
  void maybe_write(jsCtx* js, int64_t now_ns) noexcept;
  // Waits (blocking, up to 5 s) until the write in flight, if any, is answered: revision() is then
  // the last one this worker wrote.
  void settle(jsCtx* js) noexcept;
  // Stores the point now if it moved (blocking; when the bed thread ends). NATS_MISMATCH: the
  // point was superseded.
  natsStatus flush(jsCtx* js, std::string* error);
  // libnats' ack thread: the outcome of a publish maybe_write made.
  void on_ack(const jsPubAck* ack, const jsPubAckErr* error) noexcept;

 private:
  bool moved() noexcept;
  void written() noexcept;  // what acked_ says is stored (or on its way)

  std::string subject_;
  ResumePoint acked_;  // its consumer: the one every write names
  uint64_t written_through_ = 0;
  int64_t written_created_ns_ = 0;
  std::atomic<uint64_t> revision_{0};
  std::atomic<bool> in_flight_{false}, superseded_{false};
  std::atomic<uint64_t> failures_{0};  // publishes not stored (sent again), superseded excluded
  uint64_t failures_seen_ = 0;
  int64_t next_write_ns_ = 0;
  std::array<char, 48> text_{};
};

}  // namespace eit::nats
