#include "eit/acquisition/replay_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::acquisition {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

}  // namespace

void ReplaySource::init_pacing(const ReplayOptions& o, const std::string& name) {
  if (!(o.fps >= 0.0) || !std::isfinite(o.fps))
    throw std::invalid_argument(fmt::format("{}: --fps {} must be a finite rate ≥ 0", name, o.fps));
  if (!(o.speed > 0.0) || !std::isfinite(o.speed))
    throw std::invalid_argument(fmt::format("{}: --speed {} must be > 0", name, o.speed));
  if (o.fps > 0.0 && recorded_hz_ > 0.0 && o.fps != recorded_hz_)
    warnings_.push_back(
        fmt::format("--fps {:g} overrides the {:g} Hz that {} states: it is paced, recorded and "
                    "timed (breaths) "
                    "as {:g} Hz; to play it faster or slower at its own rate, use --speed",
                    o.fps, recorded_hz_, name, o.fps));
  if (o.fps > 0.0) recorded_hz_ = o.fps;
  unpaced_ = o.unpaced;
  loop_ = o.loop;
  pace_hz_ = recorded_hz_ * o.speed;
  if (!unpaced_ && pace_hz_ <= 0.0)
    throw std::invalid_argument(fmt::format(
        "{}: the file gives no frame rate; give --fps, or replay as fast as possible", name));
  paced_ = std::make_unique<pipeline::PacedSource>(
      frames_, pipeline::PacingOptions{unpaced_ ? 0.0 : pace_hz_, 1.0});
}

ReplaySource::ReplaySource(std::unique_ptr<RecordingReader> reader, const ReplayOptions& options)
    : reader_(std::move(reader)) {
  const RecordingInfo& info = reader_->info();
  path_ = info.path;
  format_ = info.format;
  n_values_ = reader_->n_values();
  recorded_hz_ = info.rate_hz;
  warnings_ = info.warnings;
  file_size_ = info.bytes_total;
  init_pacing(options, path_.filename().string());
}

ReplaySource::ReplaySource(const std::filesystem::path& path,
                           std::unique_ptr<StreamDecoder> decoder, double recorded_rate_hz,
                           const ReplayOptions& options)
    : decoder_(std::move(decoder)), path_(path), chunk_(kChunkBytes) {
  const std::string name = path.filename().string();
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    throw std::runtime_error(
        fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  file_size_ = std::filesystem::file_size(path);
  format_ = fmt::format("{} stream", decoder_->name());
  n_values_ = decoder_->n_values();
  recorded_hz_ = recorded_rate_hz;
  try {
    init_pacing(options, name);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

ReplaySource::~ReplaySource() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ReplaySource::describe() const {
  std::string s = fmt::format("replay {} ({}", path_.filename().string(), format_);
  if (reader_) s += fmt::format(", {} frames", reader_->info().n_frames);
  if (recorded_hz_ > 0) s += fmt::format(", recorded at {:g} Hz", recorded_hz_);
  if (unpaced_) {
    s += ", as fast as possible";
  } else if (pace_hz_ != recorded_hz_) {
    s += fmt::format(", played at {:g} Hz", pace_hz_);
  }
  if (loop_) s += ", looping";
  return s + ")";
}

// A recording that keeps each frame's place in the stream it came from (an eitstream raw file)
// replays with that seq, its gaps and drops, and times from its seq, not renumbered 0..n-1. Not
// when looping: the seqs would repeat.
void ReplaySource::keep_origin(pipeline::FrameSlot& slot) noexcept {
  FrameOrigin o, first;
  if (!reader_ || loop_ ||
      !reader_->origin(frame_in_file_.load(std::memory_order_relaxed) - 1, o) ||
      !reader_->origin(0, first))
    return;
  slot.seq = o.seq;
  slot.device_time_ns = recorded_hz_ > 0 && o.seq >= first.seq
                            ? std::llround(double(o.seq - first.seq) * 1e9 / recorded_hz_)
                            : slot.device_time_ns;
  if (o.gap_before) slot.flags |= pipeline::kFlagGapBefore;
  slot.dropped_before += o.dropped_before;
}

ReplaySource::Produce ReplaySource::produce_from_reader(pipeline::FrameSlot& slot) noexcept {
  const size_t n = reader_->info().n_frames;
  uint64_t i = frame_in_file_.load(std::memory_order_relaxed);
  if (i >= n) {
    // A pass without one readable frame would loop forever, reading only bad frames.
    if (!loop_ || n == 0 || good_in_pass_ == 0) return Produce::kEnd;
    i = 0;
    good_in_pass_ = 0;
    loops_.fetch_add(1, std::memory_order_relaxed);
  }
  frame_in_file_.store(i + 1, std::memory_order_relaxed);
  if (!reader_->read(i, std::span<float>(slot.values, n_values_))) {
    bad_.fetch_add(1, std::memory_order_relaxed);
    last_bad_index_.store(i, std::memory_order_relaxed);
    return Produce::kBad;
  }
  ++good_in_pass_;
  return Produce::kFrame;
}

ReplaySource::Produce ReplaySource::produce_from_decoder(pipeline::FrameSlot& slot) noexcept {
  bool flushed = false;
  for (;;) {
    bool frame = false;
    if (chunk_pos_ < chunk_len_) {
      const auto r = decoder_->decode(
          std::span<const uint8_t>(chunk_.data() + chunk_pos_, chunk_len_ - chunk_pos_), slot);
      // A decoder must consume input; guard against one that does not, to never spin.
      chunk_pos_ = r.consumed == 0 && !r.frame ? chunk_len_ : chunk_pos_ + r.consumed;
      frame = r.frame;
    } else if (file_pos_ < file_size_) {
      const ssize_t got = ::pread(fd_, chunk_.data(), chunk_.size(), static_cast<off_t>(file_pos_));
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        bad_.fetch_add(1, std::memory_order_relaxed);
        return Produce::kEnd;
      }
      chunk_pos_ = 0;
      chunk_len_ = static_cast<size_t>(got);
      file_pos_ += static_cast<uint64_t>(got);
      bytes_read_.store(file_pos_, std::memory_order_relaxed);
    } else if (!flushed) {
      flushed = true;
      frame = decoder_->flush(slot);
    } else {
      // A pass without one frame (nothing in the file decodes) would spin a core forever.
      if (!loop_ || file_size_ == 0 || good_in_pass_ == 0) return Produce::kEnd;
      good_in_pass_ = 0;
      file_pos_ = 0;
      decoder_->reset();
      flushed = false;
      frame_in_file_.store(0, std::memory_order_relaxed);
      loops_.fetch_add(1, std::memory_order_relaxed);
      if (stopped_.load(std::memory_order_relaxed)) return Produce::kEnd;
    }
    const DecoderStats st = decoder_->stats();
    skipped_.store(st.bytes_skipped, std::memory_order_relaxed);
    if (st.bad_frames != decoder_bad_seen_) {
      bad_.fetch_add(st.bad_frames - decoder_bad_seen_, std::memory_order_relaxed);
      last_bad_index_.store(frame_in_file_.load(std::memory_order_relaxed),
                            std::memory_order_relaxed);
      decoder_bad_seen_ = st.bad_frames;
      gap_pending_ = true;
    }
    if (frame) {
      frame_in_file_.fetch_add(1, std::memory_order_relaxed);
      ++good_in_pass_;
      return Produce::kFrame;
    }
  }
}

ReplaySource::Produce ReplaySource::produce(pipeline::FrameSlot& slot) noexcept {
  return reader_ ? produce_from_reader(slot) : produce_from_decoder(slot);
}

pipeline::ReadStatus ReplaySource::read(pipeline::FrameSlot& slot,
                                        std::chrono::milliseconds timeout) {
  return paced_->read(slot, timeout);
}

// One frame of the file, as fast as it decodes (the pacing is paced_'s).
pipeline::ReadStatus ReplaySource::read_file(pipeline::FrameSlot& slot,
                                             std::chrono::milliseconds timeout) {
  if (stopped_.load(std::memory_order_relaxed)) return pipeline::ReadStatus::kStopped;
  const int64_t deadline =
      pipeline::now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  for (;;) {
    const Produce p = produce(slot);
    if (p == Produce::kEnd) return pipeline::ReadStatus::kEnd;
    if (p == Produce::kBad) {
      // The frame's seq is used up; the next frame shows the gap.
      ++schedule_index_;
      gap_pending_ = true;
      if (stopped_.load(std::memory_order_relaxed)) return pipeline::ReadStatus::kStopped;
      if (pipeline::now_ns() >= deadline) return pipeline::ReadStatus::kTimeout;
      continue;
    }
    const int64_t t = pipeline::now_ns();
    slot.stamp(pipeline::Stage::kScheduled, t);  // PacedSource restamps both when pacing
    slot.stamp(pipeline::Stage::kReceived, t);
    slot.seq = schedule_index_;
    slot.device_time_ns =
        recorded_hz_ > 0 ? std::llround(double(schedule_index_) * 1e9 / recorded_hz_) : 0;
    if (gap_pending_) slot.flags |= pipeline::kFlagGapBefore;
    gap_pending_ = false;
    keep_origin(slot);
    ++schedule_index_;
    delivered_.fetch_add(1, std::memory_order_relaxed);
    return pipeline::ReadStatus::kFrame;
  }
}

pipeline::SourceStats ReplaySource::stats() const {
  pipeline::SourceStats s;
  s.frames = delivered_.load(std::memory_order_relaxed);
  s.bad_frames = bad_.load(std::memory_order_relaxed);
  s.bytes_skipped = skipped_.load(std::memory_order_relaxed);
  if (s.bad_frames > 0) {
    s.last_error = fmt::format("{}: {} frame(s) could not be decoded, the last at frame {}",
                               path_.filename().string(), s.bad_frames,
                               last_bad_index_.load(std::memory_order_relaxed) + 1);
  }
  return s;
}

ReplayProgress ReplaySource::progress() const noexcept {
  ReplayProgress p;
  p.frame_in_file = frame_in_file_.load(std::memory_order_relaxed);
  p.frames_in_file = reader_ ? reader_->info().n_frames : 0;
  p.loops = loops_.load(std::memory_order_relaxed);
  p.bytes_total = file_size_;
  p.bytes_read = reader_ ? (p.frames_in_file ? file_size_ * p.frame_in_file / p.frames_in_file : 0)
                         : bytes_read_.load(std::memory_order_relaxed);
  p.delivered = delivered_.load(std::memory_order_relaxed);
  return p;
}

}  // namespace eit::acquisition
