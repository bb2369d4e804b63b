#include "eit/recon/protocol.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace eit::recon {

std::string_view to_string(MeasurementOrder order) noexcept {
  return order == MeasurementOrder::kStd ? "std" : "rotate_meas";
}

MeasurementOrder parse_measurement_order(std::string_view text) {
  if (text == "std") return MeasurementOrder::kStd;
  if (text == "rotate_meas") return MeasurementOrder::kRotateMeas;
  throw std::invalid_argument(
      fmt::format("measurement order '{}': expected 'std' or 'rotate_meas'", text));
}

Protocol make_protocol(const ProtocolOptions& o) {
  const int n = o.n_electrodes;
  if (n < 4)
    throw std::invalid_argument(fmt::format("protocol: {} electrodes, need at least 4", n));
  if (o.drive_distance < 1 || o.drive_distance >= n)
    throw std::invalid_argument(fmt::format(
        "protocol: drive distance {} out of range, expected 1..{}", o.drive_distance, n - 1));
  if (o.measure_step < 1 || o.measure_step >= n)
    throw std::invalid_argument(fmt::format(
        "protocol: measurement step {} out of range, expected 1..{}", o.measure_step, n - 1));

  Protocol p;
  p.n_electrodes = n;
  p.options = o;
  for (int k = 0; k < n; ++k) p.drives.push_back({k, (k + o.drive_distance) % n});
  for (int d = 0; d < n; ++d) {
    const Drive drive = p.drives[d];
    const int first = o.order == MeasurementOrder::kStd ? 0 : drive.source;
    for (int i = 0; i < n; ++i) {
      const int m = (first + i) % n;
      const int pos = (m + o.measure_step) % n;
      const bool touches_drive =
          m == drive.source || m == drive.sink || pos == drive.source || pos == drive.sink;
      if (touches_drive && !o.measure_on_driven) continue;
      p.measurements.push_back({d, pos, m});
    }
  }
  return p;
}

}  // namespace eit::recon
