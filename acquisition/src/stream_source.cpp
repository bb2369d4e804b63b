// StreamSource: decode what is buffered, then read more from the transport until a frame
// completes or the deadline passes.
#include "eit/acquisition/stream_source.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::acquisition {

StreamSource::StreamSource(std::unique_ptr<ByteTransport> transport,
                           std::unique_ptr<StreamDecoder> decoder, StreamSourceOptions options)
    : transport_(std::move(transport)), decoder_(std::move(decoder)), options_(options) {
  if (!transport_ || !decoder_)
    throw std::invalid_argument("StreamSource: no transport or decoder");
  size_t size = std::max<size_t>(options_.buffer_bytes, 256);
  if (transport_->datagrams()) size = std::max<size_t>(size, 65536);
  buffer_.resize(size);
}

std::string StreamSource::describe() const {
  return fmt::format("{} frames of {} values over {}", decoder_->name(), decoder_->n_values(),
                     transport_->describe());
}

void StreamSource::stop() noexcept {
  stopped_.store(true, std::memory_order_release);
  transport_->stop();
}

pipeline::ReadStatus StreamSource::read(pipeline::FrameSlot& slot, std::chrono::milliseconds timeout) {
  const auto deadline = ByteTransport::Clock::now() + timeout;
  for (;;) {
    if (stopped_.load(std::memory_order_acquire)) return pipeline::ReadStatus::kStopped;
    while (pos_ < len_) {
      const auto r = decoder_->decode({buffer_.data() + pos_, len_ - pos_}, slot);
      pos_ += r.consumed;
      if (r.frame && accept(slot)) return pipeline::ReadStatus::kFrame;
    }
    const auto t = transport_->read(buffer_, deadline);
    if (t.connection_lost) decoder_->cut();  // counts the frame the lost connection broke off
    switch (t.status) {
      case TransportStatus::kStopped:
        return pipeline::ReadStatus::kStopped;
      case TransportStatus::kTimeout:
        return pipeline::ReadStatus::kTimeout;
      case TransportStatus::kEnd:
        // A text frame whose terminator never came is completed once; then the end stands.
        if (!ended_ && decoder_->flush(slot) && accept(slot)) {
          ended_ = true;
          return pipeline::ReadStatus::kFrame;
        }
        ended_ = true;
        return pipeline::ReadStatus::kEnd;
      case TransportStatus::kData:
        break;
    }
    if (t.new_connection) {
      decoder_->cut();  // a frame the old connection broke off is lost
      after_reconnect_ = have_seq_;
    } else if (transport_->datagrams()) {
      decoder_->cut();  // a frame never spans datagrams: one left partial was truncated
    }
    pos_ = 0;
    len_ = t.size;
  }
}

bool StreamSource::accept(pipeline::FrameSlot& slot) noexcept {
  const int64_t t = pipeline::now_ns();
  slot.stamp(pipeline::Stage::kReceived, t);
  slot.stamp(pipeline::Stage::kScheduled, t);
  slot.flags = 0;
  if (decoder_->carries_seq()) {
    const uint64_t s = slot.seq;
    const uint64_t bad_now = decoder_->stats().bad_frames;
    if (have_seq_ && s != next_seq_) {
      if (s > next_seq_) {
        // Rejected or cut frames since the last good one were counted as bad already.
        const uint64_t gap = s - next_seq_, rejected = bad_now - bad_at_last_frame_;
        add(seq_gaps_, gap > rejected ? gap - rejected : 0);
        slot.flags |= pipeline::kFlagGapBefore;
      } else if (after_reconnect_ || next_seq_ - s > options_.restart_window ||
                 (late_run_ + 1 >= options_.restart_run && s == last_late_ + 1)) {
        restart_from_.store(next_seq_, std::memory_order_relaxed);
        restart_to_.store(s, std::memory_order_relaxed);
        add(restarts_, 1);
        slot.flags |= pipeline::kFlagGapBefore;
      } else {
        add(reordered_, 1);  // late: its place in the stream has passed
        late_run_ = (late_run_ > 0 && s == last_late_ + 1) ? late_run_ + 1 : 1;
        last_late_ = s;
        return false;
      }
    }
    late_run_ = 0;
    bad_at_last_frame_ = bad_now;
    have_seq_ = true;
    next_seq_ = s + 1;
  } else {
    slot.seq = local_seq_++;
  }
  after_reconnect_ = false;
  add(frames_, 1);
  return true;
}

pipeline::SourceStats StreamSource::stats() const {
  pipeline::SourceStats s;
  const auto d = decoder_->stats();
  const auto ts = transport_->stats();
  s.frames = frames_.load(std::memory_order_relaxed);
  s.bad_frames = d.bad_frames;
  s.bytes_skipped = d.bytes_skipped;
  s.seq_gaps = seq_gaps_.load(std::memory_order_relaxed);
  s.reordered = reordered_.load(std::memory_order_relaxed);
  s.reconnects = ts.reconnects;
  std::string error = ts.last_error;
  auto append = [&error](const std::string& more) {
    if (more.empty()) return;
    if (!error.empty()) error += "; ";
    error += more;
  };
  if (const auto restarts = restarts_.load(std::memory_order_relaxed)) {
    append(fmt::format("device seq restarted {} time(s), last at {} where {} was expected",
                       restarts, restart_to_.load(std::memory_order_relaxed),
                       restart_from_.load(std::memory_order_relaxed)));
  }
  append(decoder_->last_problem());
  s.last_error = std::move(error);
  return s;
}

}  // namespace eit::acquisition
