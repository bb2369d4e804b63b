#include "eit/acquisition/openeit_line_decoder.hpp"

#include <cstring>

#include "openeit_line.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition {
namespace {

DeviceLayout openeit_for(const recon::Protocol& model) {
  const size_t n = static_cast<size_t>(model.n_electrodes);
  return detail::openeit_layout(n > 4 ? n * (n - 4) : 0);
}

}  // namespace

OpenEitLineDecoder::OpenEitLineDecoder(const DeviceLayout& device, const recon::Protocol& model,
                                       size_t max_line)
    : map_(device.raw_values != 0 ? device : [&] {
        DeviceLayout d = device;
        d.raw_values = d.n_measurements();
        return d;
      }(), model) {
  const size_t values = map_.raw_scalars();
  line_.resize(max_line != 0 ? max_line : 40 * values + 64);
  raw_.resize(values);
}

OpenEitLineDecoder::OpenEitLineDecoder(const recon::Protocol& model)
    : OpenEitLineDecoder(openeit_for(model), model) {}

bool OpenEitLineDecoder::finish_line(pipeline::FrameSlot& slot) noexcept {
  const size_t len = len_;
  len_ = 0;
  switch (detail::parse_openeit_line(std::string_view(line_.data(), len), raw_)) {
    case detail::OpenEitLine::kFrame:
      map_.apply(raw_, std::span<float>(slot.values, map_.n_values()));
      slot.seq = seq_++;
      slot.device_time_ns = 0;
      ++stats_.frames;
      return true;
    case detail::OpenEitLine::kBad:
      ++stats_.bad_frames;
      return false;
    case detail::OpenEitLine::kOther:
      stats_.bytes_skipped += len + 1;
      return false;
    case detail::OpenEitLine::kBlank:
      return false;
  }
  return false;
}

DecodeResult OpenEitLineDecoder::decode(std::span<const uint8_t> in,
                                        pipeline::FrameSlot& slot) noexcept {
  size_t pos = 0;
  while (pos < in.size()) {
    const auto* start = in.data() + pos;
    const auto* nl = static_cast<const uint8_t*>(std::memchr(start, '\n', in.size() - pos));
    const size_t chunk = nl ? static_cast<size_t>(nl - start) : in.size() - pos;
    const size_t used = chunk + (nl ? 1 : 0);
    if (discarding_) {
      stats_.bytes_skipped += used;
      if (nl) discarding_ = false;
      pos += used;
      continue;
    }
    if (len_ + chunk > line_.size()) {
      // The line overflows the buffer: drop what was kept and skip to its end.
      ++too_long_;
      ++stats_.bad_frames;
      stats_.bytes_skipped += len_ + used;
      len_ = 0;
      discarding_ = nl == nullptr;
      pos += used;
      continue;
    }
    std::memcpy(line_.data() + len_, start, chunk);
    len_ += chunk;
    pos += used;
    if (nl && finish_line(slot)) return {pos, true};
  }
  return {pos, false};
}

bool OpenEitLineDecoder::flush(pipeline::FrameSlot& slot) noexcept {
  const bool frame = !discarding_ && len_ > 0 && finish_line(slot);
  reset();
  return frame;
}

void OpenEitLineDecoder::cut() noexcept {
  // A line cut before its newline is a lost frame (an overlong one was counted when it overflowed).
  if (!discarding_ && len_ > 0) {
    ++stats_.bad_frames;
    stats_.bytes_skipped += len_;
  }
  reset();
}

void OpenEitLineDecoder::reset() noexcept {
  len_ = 0;
  discarding_ = false;
}

}  // namespace eit::acquisition
