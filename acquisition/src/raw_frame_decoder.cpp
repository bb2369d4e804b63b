#include "eit/acquisition/raw_frame_decoder.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace eit::acquisition {

void decode_samples(const uint8_t* src, size_t n, SampleType type, double* dst) noexcept {
  if (type == SampleType::kFloat32) {
    for (size_t i = 0; i < n; ++i, src += 4) {
      const uint32_t u = uint32_t(src[0]) | uint32_t(src[1]) << 8 | uint32_t(src[2]) << 16 |
                         uint32_t(src[3]) << 24;
      dst[i] = std::bit_cast<float>(u);
    }
  } else {
    for (size_t i = 0; i < n; ++i, src += 8) {
      uint64_t u = 0;
      for (int b = 7; b >= 0; --b) u = (u << 8) | src[b];
      dst[i] = std::bit_cast<double>(u);
    }
  }
}

namespace {
DeviceLayout with_raw_count(DeviceLayout d) {
  if (d.raw_values == 0) d.raw_values = d.first_value + d.n_measurements();
  return d;
}
}  // namespace

RawFrameDecoder::RawFrameDecoder(const DeviceLayout& device, const recon::Protocol& model,
                                 SampleType type)
    : map_(with_raw_count(device), model), type_(type) {
  raw_.resize(map_.raw_scalars());
  buffer_.resize(raw_.size() * (type == SampleType::kFloat32 ? 4 : 8));
}

DecodeResult RawFrameDecoder::decode(std::span<const uint8_t> in,
                                     pipeline::FrameSlot& slot) noexcept {
  const size_t take = std::min(in.size(), buffer_.size() - fill_);
  std::memcpy(buffer_.data() + fill_, in.data(), take);
  fill_ += take;
  if (fill_ < buffer_.size()) return {take, false};
  fill_ = 0;
  decode_samples(buffer_.data(), raw_.size(), type_, raw_.data());
  map_.apply(raw_, std::span<float>(slot.values, map_.n_values()));
  slot.seq = seq_++;
  slot.device_time_ns = 0;
  ++stats_.frames;
  return {take, true};
}

bool RawFrameDecoder::flush(pipeline::FrameSlot&) noexcept {
  cut();
  return false;
}

void RawFrameDecoder::cut() noexcept {
  stats_.bytes_skipped += fill_;
  if (fill_ > 0) ++stats_.bad_frames;
  fill_ = 0;
}

}  // namespace eit::acquisition
