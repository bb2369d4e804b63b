#pragma once
// MeasurementMap: maps one raw device frame onto a model's measurement order through an index
// table built once at set-up. It drops the entries a device records on driven electrodes (full
// n×n tables such as IIRC's and Montreal's, index n·drive + m), untwists "rotate_meas" order
// (Goe-MF II, Dräger) onto 'std' (or keeps it when the model uses it), reverses the sign where the
// device measures a pair or drives a pattern the other way round, and turns complex values into
// their real part, imaginary part or magnitude, or keeps both as interleaved (re, im) pairs (for a
// complex-conductivity gn model: 2·n_meas values per frame).
//
// Construction throws std::invalid_argument naming the device layout and the first model
// measurement it cannot supply. apply() is the per-frame path: no allocation, no throw; any
// thread may call it on a const map.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eit/recon/protocol.hpp"

namespace eit::acquisition {

enum class ComplexPart { kReal, kImag, kMagnitude, kInterleaved };
std::string_view to_string(ComplexPart part) noexcept;
ComplexPart parse_complex_part(std::string_view text);  // "real" | "imag" | "magnitude" |
                                                        // "interleaved"

// How a device lays out one frame: its protocol (which drives and pairs, in what order) and where
// the measurements sit among the frame's raw values.
struct DeviceLayout {
  int n_electrodes = 16;
  int drive_distance = 1;  // 1 adjacent, n/2 opposition
  int measure_step = 1;
  recon::MeasurementOrder order = recon::MeasurementOrder::kStd;
  bool full_table = false;  // every pair of every drive present (n per drive), touching or not
  size_t first_value = 0;   // index of the first measurement among the raw values
  size_t raw_values = 0;    // values per raw frame (complex: pairs counted once); 0 = just the
                            // measurements
  bool complex = false;     // raw values are interleaved (re, im) pairs
  ComplexPart part = ComplexPart::kReal;
  double scale = 1.0;  // −1 flips polarity; also a unit conversion
  // The model's own measurement table (layout "model", layout_of): used as it is, while the
  // options above are still the ones it was made with, instead of a table rebuilt from them
  // (which cannot express several rings, e.g. EIDORS' planar pattern).
  std::optional<recon::Protocol> own_table;

  // n_electrodes × (measurements per drive) for this layout.
  size_t n_measurements() const;
  // The raw frame length in scalars (pairs count twice when complex).
  size_t raw_scalars() const;
  std::string describe() const;  // e.g. "16 electrodes, full 16×16 table, std order, complex→real"
};

// The layout that is the model's own order (identity map), optionally complex.
DeviceLayout layout_of(const recon::Protocol& model);

// Parses a --layout name against the model: "model" (the model's own order), "std", "rotate_meas"
// (the model's drive and step, no measurements on driven electrodes), "full" (n×n table, std),
// "full_rotate" (n×n table, rotated).
DeviceLayout parse_layout(std::string_view name, const recon::Protocol& model);

class MeasurementMap {
 public:
  MeasurementMap() = default;
  MeasurementMap(const DeviceLayout& device, const recon::Protocol& model);

  const DeviceLayout& device() const noexcept { return device_; }
  // The model's n_meas, or 2·n_meas when the part is kInterleaved (re, im per measurement).
  size_t n_values() const noexcept { return index_.size() * (interleaved() ? 2 : 1); }
  bool interleaved() const noexcept { return device_.part == ComplexPart::kInterleaved; }
  size_t raw_scalars() const noexcept { return raw_scalars_; }  // what apply() reads
  // True when apply() is a plain copy (same order, real, no scale).
  bool is_identity() const noexcept { return identity_; }
  // Raw scalar position(s) and factor feeding model measurement k (for tests and docs).
  size_t source_index(size_t k) const noexcept { return index_[k]; }
  double factor(size_t k) const noexcept { return factor_[k]; }

  // raw.size() >= raw_scalars(), out.size() >= n_values(). Non-finite values pass through.
  void apply(std::span<const double> raw, std::span<float> out) const noexcept;

 private:
  DeviceLayout device_;
  std::vector<uint32_t> index_;  // raw scalar index of the value (complex: of the real part)
  std::vector<double> factor_;   // ±scale
  size_t raw_scalars_ = 0;
  bool identity_ = false;
};

}  // namespace eit::acquisition
