#pragma once
// OpenEitLineDecoder: OpenEIT's text frames on a byte stream (the device's UART at 115200 8N1, a
// captured log, a file): one frame per line, "magnitudes: v,v,…," ending in "\n" or "\r\n".
// Lines are collected in a bounded buffer allocated at construction; a line longer than the
// buffer is skipped to its end and counted (too_long_lines, bad_frames, bytes_skipped); a
// "magnitudes" line with a non-numeric token or the wrong value count is a bad frame; other
// lines (debug text, blank) are skipped bytes. decode() never allocates or throws.
// One thread at a time.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eit/acquisition/measurement_map.hpp"
#include "eit/acquisition/stream_decoder.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::acquisition {

class OpenEitLineDecoder final : public StreamDecoder {
 public:
  // `device.raw_values` values per line (0: n·(n−4) for the model's n electrodes, OpenEIT's
  // opposition layout). max_line 0 = 40 bytes per value + 64. Throws when the layout cannot feed
  // the model.
  OpenEitLineDecoder(const DeviceLayout& device, const recon::Protocol& model, size_t max_line = 0);
  // OpenEIT's own layout for the model's electrode count (8, 16 or 32).
  explicit OpenEitLineDecoder(const recon::Protocol& model);

  std::string_view name() const noexcept override { return "openeit-lines"; }
  size_t n_values() const noexcept override { return map_.n_values(); }
  DecodeResult decode(std::span<const uint8_t> in, pipeline::FrameSlot& slot) noexcept override;
  bool flush(pipeline::FrameSlot& slot) noexcept override;
  void reset() noexcept override;
  void cut() noexcept override;
  DecoderStats stats() const noexcept override { return stats_; }

  uint64_t too_long_lines() const noexcept { return too_long_; }
  const MeasurementMap& map() const noexcept { return map_; }

 private:
  bool finish_line(pipeline::FrameSlot& slot) noexcept;

  MeasurementMap map_;
  std::vector<char> line_;
  std::vector<double> raw_;
  size_t len_ = 0;
  bool discarding_ = false;  // inside a line that overflowed the buffer
  uint64_t seq_ = 0;
  uint64_t too_long_ = 0;
  DecoderStats stats_;
};

}  // namespace eit::acquisition
