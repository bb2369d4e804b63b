#pragma once
// StreamSource: a Source made of a ByteTransport (where bytes come from) and a StreamDecoder
// (what they mean). It stamps Stage::kReceived (and kScheduled, the same instant: a live source
// does not pace itself), keeps the device's seq when the decoder carries one (counting gaps,
// flagging the frame after a gap with kFlagGapBefore, dropping and counting frames that arrive
// out of order) or numbers frames itself when it does not. A lost frame is counted once: frames
// the decoder rejected (or a broken connection cut) since the last good one are taken to fill
// the gap before the next, so they are not counted again as missing by seq.
//
// A seq that goes back right after a reconnect, or by more than restart_window, or a run of
// restart_run late frames numbered one after the other (a UDP device that restarted: the first
// restart_run − 1 of them are dropped as late) is taken as the device having restarted
// (counted in seq_restarts, reported in last_error), not as reordering.
//
// Owns the transport, the decoder and one receive buffer allocated at construction; read()
// allocates nothing. Threads: as Source (read() on one thread; stop()/stats() from any).
#include <atomic>
#include <memory>
#include <vector>

#include "eit/acquisition/byte_transport.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/acquisition/stream_decoder.hpp"

namespace eit::acquisition {

struct StreamSourceOptions {
  size_t buffer_bytes = 64 * 1024;  // at least one datagram (65,507 bytes) for UDP
  uint64_t restart_window = 1024;   // a seq this far behind means a restart, not reordering
  uint64_t restart_run = 4;         // …as do this many late frames in a row, each seq +1
  double nominal_rate_hz = 0.0;
};

class StreamSource final : public pipeline::Source {
 public:
  StreamSource(std::unique_ptr<ByteTransport> transport, std::unique_ptr<StreamDecoder> decoder,
               StreamSourceOptions options = {});

  std::string describe() const override;
  size_t n_values() const noexcept override { return decoder_->n_values(); }
  double nominal_rate_hz() const noexcept override { return options_.nominal_rate_hz; }
  pipeline::ReadStatus read(pipeline::FrameSlot& slot, std::chrono::milliseconds timeout) override;
  void stop() noexcept override;
  pipeline::SourceStats stats() const override;

  // The transport's address (bound port of a listener, pty path, …); see ByteTransport.
  std::string endpoint() const { return transport_->endpoint(); }
  uint64_t seq_restarts() const noexcept { return restarts_.load(std::memory_order_relaxed); }

 private:
  bool accept(pipeline::FrameSlot& slot) noexcept;
  static void add(std::atomic<uint64_t>& c, uint64_t n) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::unique_ptr<ByteTransport> transport_;
  std::unique_ptr<StreamDecoder> decoder_;
  StreamSourceOptions options_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0, len_ = 0;
  std::atomic<bool> stopped_{false};
  bool ended_ = false;

  bool have_seq_ = false, after_reconnect_ = false;
  uint64_t late_run_ = 0, last_late_ = 0;  // consecutive late frames, each one after the last
  uint64_t next_seq_ = 0, local_seq_ = 0;
  uint64_t bad_at_last_frame_ = 0;  // the decoder's bad_frames when the last frame was accepted
  std::atomic<uint64_t> frames_{0}, seq_gaps_{0}, reordered_{0}, restarts_{0};
  std::atomic<uint64_t> restart_from_{0}, restart_to_{0};
};

}  // namespace eit::acquisition
