#pragma once
// Stimulation and measurement protocol: which electrode pairs are driven and which pairs are
// measured, in the order a frame's values arrive. Follows pyEIT's protocol.create exactly:
//   drive k = [k, (k + drive_distance) % n]   (current +1 in at the first, out at the second)
//   measurement = u[el (m + step) % n] − u[el m]
// with m = 0..n−1 ('std') or starting at the drive's source electrode ('rotate_meas').
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eit::recon {

enum class MeasurementOrder { kStd, kRotateMeas };
std::string_view to_string(MeasurementOrder order) noexcept;
MeasurementOrder parse_measurement_order(std::string_view text);  // "std" | "rotate_meas"

struct ProtocolOptions {
  int n_electrodes = 16;
  int drive_distance = 1;  // 1 adjacent, n/2 opposite
  int measure_step = 1;    // distance between the two measuring electrodes
  MeasurementOrder order = MeasurementOrder::kStd;
  bool measure_on_driven = false;  // keep pairs touching a driven electrode (pyEIT meas_current)
};

struct Drive {
  int source;  // electrode index receiving +1 unit current
  int sink;    // electrode index receiving −1
};

struct Measurement {
  int drive;     // index into Protocol::drives
  int positive;  // v = u[positive] − u[negative]
  int negative;
};

struct Protocol {
  int n_electrodes = 0;
  std::vector<Drive> drives;
  std::vector<Measurement> measurements;  // the order frames must arrive in
  ProtocolOptions options;                // what produced it (kept in the Model file)

  size_t n_meas() const noexcept { return measurements.size(); }
};

// Throws std::invalid_argument naming the bad option and its allowed range.
Protocol make_protocol(const ProtocolOptions& options);

}  // namespace eit::recon
