#include <stdexcept>

#include <fmt/format.h>

#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition::detail {

DeviceLayout with_overrides(DeviceLayout native, const RecordingOptions& o,
                            const recon::Protocol& model) {
  DeviceLayout l = native;
  if (!o.layout.empty()) {
    l = parse_layout(o.layout, model);
    l.first_value = native.first_value;
    l.raw_values = native.raw_values;
    l.complex = native.complex;
  }
  l.part = o.complex_part;
  l.scale = o.invert ? -native.scale : native.scale;
  return l;
}

DeviceLayout generic_layout(const fs::path& path, size_t values, bool complex,
                            const RecordingOptions& o, const recon::Protocol& model) {
  DeviceLayout l = layout_of(model);
  const size_t n = static_cast<size_t>(model.n_electrodes);
  if (o.layout.empty()) {
    if (values == model.n_meas()) {
      // the model's own order
    } else if (values == n * n) {
      l.full_table = true;
      l.order = recon::MeasurementOrder::kStd;
    } else {
      throw std::invalid_argument(fmt::format(
          "{}: {} values per frame, expected the model's {} measurements or a full {}×{} table "
          "({}); say which with --layout",
          file_label(path), values, model.n_meas(), n, n, n * n));
    }
  }
  l.raw_values = values;
  l.complex = complex;
  return with_overrides(l, o, model);
}

DeviceLayout openeit_layout(size_t values) {
  for (int n : {8, 16, 32}) {
    if (values == static_cast<size_t>(n * (n - 4))) {
      DeviceLayout l;
      l.n_electrodes = n;
      l.drive_distance = n / 2;
      l.measure_step = 1;
      l.order = recon::MeasurementOrder::kStd;
      l.raw_values = values;
      return l;
    }
  }
  throw std::invalid_argument(fmt::format(
      "OpenEIT frame of {} values: expected 32, 192 or 896 (8, 16 or 32 electrodes)", values));
}

}  // namespace eit::acquisition::detail
