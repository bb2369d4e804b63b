#pragma once
// RawFrameDecoder: headerless fixed-size frames of little-endian float32 or float64 values on a
// byte stream (a raw capture, a pipe, a file). With no framing there is nothing to resynchronise
// on: frame boundaries are counted from the start of the stream (or the last reset()). A partial
// frame at flush() is dropped and its bytes counted as skipped. decode() never allocates or
// throws. One thread at a time.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "eit/acquisition/measurement_map.hpp"
#include "eit/acquisition/stream_decoder.hpp"

namespace eit::acquisition {

enum class SampleType { kFloat32, kFloat64 };

class RawFrameDecoder final : public StreamDecoder {
 public:
  // `device` gives the frame's value count (raw_values, or its measurements when 0).
  RawFrameDecoder(const DeviceLayout& device, const recon::Protocol& model, SampleType type);

  std::string_view name() const noexcept override {
    return type_ == SampleType::kFloat32 ? "raw-f32" : "raw-f64";
  }
  size_t n_values() const noexcept override { return map_.n_values(); }
  size_t frame_bytes() const noexcept { return buffer_.size(); }
  DecodeResult decode(std::span<const uint8_t> in, pipeline::FrameSlot& slot) noexcept override;
  bool flush(pipeline::FrameSlot& slot) noexcept override;
  void reset() noexcept override { fill_ = 0; }
  void cut() noexcept override;
  DecoderStats stats() const noexcept override { return stats_; }

 private:
  MeasurementMap map_;
  SampleType type_;
  std::vector<uint8_t> buffer_;
  std::vector<double> raw_;
  size_t fill_ = 0;
  uint64_t seq_ = 0;
  DecoderStats stats_;
};

// Decodes n little-endian samples at src into dst (shared with the raw file reader).
void decode_samples(const uint8_t* src, size_t n, SampleType type, double* dst) noexcept;

}  // namespace eit::acquisition
