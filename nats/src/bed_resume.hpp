#pragma once
// A bed's resume point: the last raw stream sequence through which every frame of the bed was
// reconstructed, its image stored and the frame acknowledged. Kept beside the bed's lease, in the
// key-value bucket EIT_BEDS as `r.<site>.<bed>` = "<sequence> <EIT_RAW's creation time, ns>".
//
// Why: a worker taking a bed deletes the bed's consumer and makes it anew (bed_consumer.hpp). One
// that dies in between leaves no consumer, and the next taker would start from --since (by
// default the bed's whole history). With the point stored before the consumer is deleted, the
// next taker starts after it instead. The stream's creation time tells a point of an EIT_RAW that
// was deleted and made again (its sequences start at 1 again) from one of the stream as it is.
//
// ResumeWriter: the bed thread's writes while it runs, at most one a second, as asynchronous
// publishes on the bed's JetStream context (their failures are counted by its ack handler).
// load_resume_point/store_resume_point: set-up path, blocking requests.
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
};

// $KV.EIT_BEDS.r.<site>.<bed>: the subject a put of the bed's key publishes on.
std::string resume_subject(const std::string& site, const std::string& bed);

std::optional<ResumePoint> parse_resume_point(std::string_view text) noexcept;

// The stored point, or nullopt when there is none. On failure `error` says what.
natsStatus load_resume_point(jsCtx* js, const std::string& subject,
                             std::optional<ResumePoint>* point, std::string* error);
natsStatus store_resume_point(jsCtx* js, const std::string& subject, ResumePoint point,
                              std::string* error);

class ResumeWriter {
 public:
  // `failures`: the bed context's count of failed resume-point publishes.
  ResumeWriter(std::string subject, const std::atomic<uint64_t>* failures)
      : subject_(std::move(subject)), failures_(failures) {}

  // The point as the bed's consumer was (re)made: already stored.
  void opened(ResumePoint point) noexcept { acked_ = written_ = point; }
  // After an acknowledgement through `sequence`.
  void acked(uint64_t sequence) noexcept { acked_.acked_through = sequence; }
  const ResumePoint& point() const noexcept { return acked_; }

  // Publishes the point when it moved and a second passed since the last publish. Never blocks
  // (the publish is asynchronous); allocates only inside libnats, at most once a second.
  void maybe_write(jsCtx* js, int64_t now_ns) noexcept;
  // Stores the point now if it moved (blocking; when the bed thread ends).
  natsStatus flush(jsCtx* js, std::string* error);

 private:
  bool moved() noexcept;

  std::string subject_;
  const std::atomic<uint64_t>* failures_;
  uint64_t failures_seen_ = 0;
  ResumePoint acked_, written_;
  int64_t next_write_ns_ = 0;
  std::array<char, 48> text_{};
};

}  // namespace eit::nats
