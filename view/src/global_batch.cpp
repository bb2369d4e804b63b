#include "eit/view/global_batch.hpp"

#include "eit/sinks/json_text.hpp"

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

namespace eit::view {
namespace {
constexpr size_t kHeaderBytes = 40;

template <typename T>
T read_le(std::span<const std::byte> b, size_t offset) {
  T v;
  std::memcpy(&v, b.data() + offset, sizeof v);  // little-endian host (x86-64, aarch64)
  return v;
}
}  // namespace

std::optional<GlobalPoint> decode_global(std::span<const std::byte> body) noexcept {
  if (body.size() < kHeaderBytes || std::memcmp(body.data(), "EIXG", 4) != 0) return std::nullopt;
  if (read_le<uint16_t>(body, 4) != 1) return std::nullopt;
  const uint16_t n = read_le<uint16_t>(body, 6);
  if (n == 0 || body.size() != kHeaderBytes + size_t{n} * sizeof(double)) return std::nullopt;
  GlobalPoint p;
  p.seq = read_le<uint64_t>(body, 8);
  p.t_acquired_ns = read_le<int64_t>(body, 16);
  p.frame = read_le<uint64_t>(body, 32);
  p.value = read_le<double>(body, kHeaderBytes);
  return p;
}

void GlobalBatch::add(const GlobalPoint& p, int64_t now_ns) {
  if (points_.empty()) first_ns_ = now_ns;
  points_.push_back(p);
}

bool GlobalBatch::due(int64_t now_ns) const noexcept {
  return !points_.empty() && (points_.size() >= max_points_ || now_ns - first_ns_ >= interval_ns_);
}

std::string GlobalBatch::take_json(const std::string& stream, int64_t wall_minus_mono_ns) {
  nlohmann::json seq = nlohmann::json::array(), frame = nlohmann::json::array(),
                 value = nlohmann::json::array(), wall = nlohmann::json::array();
  for (const auto& p : points_) {
    seq.push_back(p.seq);
    frame.push_back(p.frame);
    // NaN (invalid frames) becomes null, which the page leaves out of the waveform.
    value.push_back(std::isfinite(p.value) ? nlohmann::json(p.value) : nlohmann::json());
    wall.push_back(static_cast<double>(p.t_acquired_ns + wall_minus_mono_ns) / 1e6);
  }
  points_.clear();
  return sinks::json_text(nlohmann::json{{"type", "global"},
                                         {"stream", stream},
                                         {"seq", seq},
                                         {"frame", frame},
                                         {"value", value},
                                         {"t_wall_ms", wall}});
}

}  // namespace eit::view
