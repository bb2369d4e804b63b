#pragma once
// ReplaySource: a Source that plays a recording, through a RecordingReader (random access, frame
// count known) or a StreamDecoder fed from the file (a captured serial log, a raw stream).
//
// Pacing is pipeline::PacedSource's (the one pacing implementation), wrapped around the file's
// frames read as fast as they come: open loop, frame i due at start + i / (rate · speed), start
// taken at the first read(), so a late consumer never shifts the schedule; kScheduled gets the
// due time, kReceived the release time. Unpaced replay (as fast as possible) stamps both with the
// decode time. Replay is lossless: a slow consumer delays frames, it never drops them. With loop
// the file starts over; seq keeps counting the file's frames, so a frame the codec rejects leaves
// a gap in seq (flagged kFlagGapBefore on the next frame, counted in bad_frames); it takes no
// time slot of the schedule.
//
// Threads: read() from the acquisition thread only; stop(), stats() and progress() from any
// thread. read() does not allocate; it waits (woken at once by stop()) up to `timeout`.
// Construction throws when pacing is asked for and no rate is known (names the file and --fps).
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/acquisition/stream_decoder.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/source.hpp"

namespace eit::acquisition {

struct ReplayOptions {
  RecordingOptions recording;  // format, variable, layout, … (see recording_reader.hpp)
  double fps = 0.0;            // the recording's rate when the file has none or is wrong; 0 = file
  double speed = 1.0;          // k× the recorded rate
  bool unpaced = false;        // as fast as possible
  bool loop = false;           // start over at the end
};

// Where a replay stands, for a progress line. frames_in_file is 0 when the codec cannot count
// ahead (stream decoders); then bytes_read / bytes_total tell the position.
struct ReplayProgress {
  uint64_t frame_in_file = 0;  // frames consumed in the current pass
  uint64_t frames_in_file = 0;
  uint64_t loops = 0;  // completed passes
  uint64_t bytes_read = 0;
  uint64_t bytes_total = 0;
  uint64_t delivered = 0;
};

class ReplaySource final : public pipeline::Source {
 public:
  ReplaySource(std::unique_ptr<RecordingReader> reader, const ReplayOptions& options);
  // `recorded_rate_hz`: what the stream's device ran at (0 = unknown; options.fps overrides).
  ReplaySource(const std::filesystem::path& path, std::unique_ptr<StreamDecoder> decoder,
               double recorded_rate_hz, const ReplayOptions& options);
  ~ReplaySource() override;

  std::string describe() const override;
  size_t n_values() const noexcept override { return n_values_; }
  double nominal_rate_hz() const noexcept override { return unpaced_ ? 0.0 : pace_hz_; }
  pipeline::ReadStatus read(pipeline::FrameSlot& slot, std::chrono::milliseconds timeout) override;
  void stop() noexcept override { paced_->stop(); }
  pipeline::SourceStats stats() const override;

  ReplayProgress progress() const noexcept;
  double recorded_rate_hz() const noexcept override { return recorded_hz_; }
  // Set-up findings (truncation, missing rate, …), for whoever opened it to report once;
  // not in stats().last_error, which is for problems while it plays (a status line would
  // repeat them every refresh).
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

 private:
  // The file's frames as a Source, unpaced: what paced_ wraps.
  class FileFrames final : public pipeline::Source {
   public:
    explicit FileFrames(ReplaySource& owner) : owner_(owner) {}
    std::string describe() const override { return owner_.describe(); }
    size_t n_values() const noexcept override { return owner_.n_values_; }
    double nominal_rate_hz() const noexcept override { return 0.0; }
    pipeline::ReadStatus read(pipeline::FrameSlot& slot,
                              std::chrono::milliseconds timeout) override {
      return owner_.read_file(slot, timeout);
    }
    void stop() noexcept override { owner_.stopped_.store(true, std::memory_order_relaxed); }
    pipeline::SourceStats stats() const override { return owner_.stats(); }

   private:
    ReplaySource& owner_;
  };

  enum class Produce { kFrame, kBad, kEnd };
  pipeline::ReadStatus read_file(pipeline::FrameSlot& slot, std::chrono::milliseconds timeout);
  Produce produce(pipeline::FrameSlot& slot) noexcept;
  void keep_origin(pipeline::FrameSlot& slot) noexcept;
  Produce produce_from_reader(pipeline::FrameSlot& slot) noexcept;
  Produce produce_from_decoder(pipeline::FrameSlot& slot) noexcept;
  void init_pacing(const ReplayOptions& options, const std::string& name);

  std::unique_ptr<RecordingReader> reader_;
  std::unique_ptr<StreamDecoder> decoder_;
  std::filesystem::path path_;
  int fd_ = -1;                 // decoder path: the file
  std::vector<uint8_t> chunk_;  // decoder path: bytes read, not yet decoded
  size_t chunk_pos_ = 0, chunk_len_ = 0;
  uint64_t file_pos_ = 0, file_size_ = 0;
  uint64_t decoder_bad_seen_ = 0;
  uint64_t good_in_pass_ = 0;  // frames read this pass: a loop over none would spin

  std::string format_;
  size_t n_values_ = 0;
  double recorded_hz_ = 0.0;  // the recording's rate (file or --fps)
  double pace_hz_ = 0.0;      // recorded_hz_ · speed
  bool unpaced_ = false;
  bool loop_ = false;
  std::vector<std::string> warnings_;

  FileFrames frames_{*this};
  std::unique_ptr<pipeline::PacedSource> paced_;  // around frames_; built by init_pacing
  uint64_t schedule_index_ = 0;  // frames consumed so far, all passes (= seq of the next one)
  bool gap_pending_ = false;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> frame_in_file_{0}, loops_{0}, delivered_{0}, bad_{0}, skipped_{0},
      bytes_read_{0}, last_bad_index_{0};
};

// Opens `path` as a replay for a model with `model_protocol`: the codec by options.recording.format
// (draeger, get, mat, openeit, csv, npy, f32, f64, or the stream decoders openeit-stream,
// f32-stream, f64-stream), else by extension and content. Throws on any set-up problem.
std::unique_ptr<ReplaySource> open_replay(const std::filesystem::path& path,
                                          const ReplayOptions& options,
                                          const recon::Protocol& model_protocol);
std::unique_ptr<pipeline::Source> open_recording(const std::filesystem::path& path,
                                                 const ReplayOptions& options,
                                                 const recon::Protocol& model_protocol);

}  // namespace eit::acquisition
