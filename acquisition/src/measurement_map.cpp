#include "eit/acquisition/measurement_map.hpp"

#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

namespace eit::acquisition {

std::string_view to_string(ComplexPart part) noexcept {
  switch (part) {
    case ComplexPart::kReal:
      return "real";
    case ComplexPart::kImag:
      return "imag";
    case ComplexPart::kMagnitude:
      return "magnitude";
    case ComplexPart::kInterleaved:
      return "interleaved";
  }
  return "real";
}

ComplexPart parse_complex_part(std::string_view text) {
  if (text == "real") return ComplexPart::kReal;
  if (text == "imag") return ComplexPart::kImag;
  if (text == "magnitude") return ComplexPart::kMagnitude;
  if (text == "interleaved") return ComplexPart::kInterleaved;
  throw std::invalid_argument(fmt::format(
      "complex part '{}': expected 'real', 'imag', 'magnitude' or 'interleaved'", text));
}

namespace {

recon::ProtocolOptions protocol_options(const DeviceLayout& d) {
  recon::ProtocolOptions o;
  o.n_electrodes = d.n_electrodes;
  o.drive_distance = d.drive_distance;
  o.measure_step = d.measure_step;
  o.order = d.order;
  o.measure_on_driven = d.full_table;
  return o;
}

// One number per (source, sink, positive, negative) electrode quadruple.
uint64_t key(int n, int source, int sink, int positive, int negative) {
  return ((uint64_t(source) * n + sink) * n + positive) * n + negative;
}

// The device's table: the model's own while the layout still has the options it came with (a
// caller may change them after layout_of), else the one-ring table those options describe.
recon::Protocol device_table(const DeviceLayout& d) {
  if (d.own_table) {
    const recon::ProtocolOptions& o = d.own_table->options;
    if (o.n_electrodes == d.n_electrodes && o.drive_distance == d.drive_distance &&
        o.measure_step == d.measure_step && o.order == d.order &&
        o.measure_on_driven == d.full_table)
      return *d.own_table;
  }
  return recon::make_protocol(protocol_options(d));
}

}  // namespace

size_t DeviceLayout::n_measurements() const { return device_table(*this).n_meas(); }

size_t DeviceLayout::raw_scalars() const {
  const size_t values = raw_values != 0 ? raw_values : first_value + n_measurements();
  return complex ? 2 * values : values;
}

std::string DeviceLayout::describe() const {
  std::string s = fmt::format("{} electrodes, drive distance {}, step {}, ", n_electrodes,
                              drive_distance, measure_step);
  if (full_table) s += fmt::format("full {}×{} table, ", n_electrodes, n_electrodes);
  s += fmt::format("{} order", recon::to_string(order));
  if (first_value != 0) s += fmt::format(", from value {}", first_value);
  if (raw_values != 0) s += fmt::format(" of {}", raw_values);
  if (complex) s += fmt::format(", complex→{}", to_string(part));
  if (scale != 1.0) s += fmt::format(", ×{}", scale);
  return s;
}

DeviceLayout layout_of(const recon::Protocol& model) {
  DeviceLayout d;
  d.n_electrodes = model.options.n_electrodes;
  d.drive_distance = model.options.drive_distance;
  d.measure_step = model.options.measure_step;
  d.order = model.options.order;
  d.full_table = model.options.measure_on_driven;
  d.own_table = model;
  return d;
}

DeviceLayout parse_layout(std::string_view name, const recon::Protocol& model) {
  DeviceLayout d = layout_of(model);
  if (name == "model") return d;
  d.own_table.reset();
  d.full_table = false;
  if (name == "std") {
    d.order = recon::MeasurementOrder::kStd;
  } else if (name == "rotate_meas") {
    d.order = recon::MeasurementOrder::kRotateMeas;
  } else if (name == "full") {
    d.full_table = true;
    d.order = recon::MeasurementOrder::kStd;
  } else if (name == "full_rotate") {
    d.full_table = true;
    d.order = recon::MeasurementOrder::kRotateMeas;
  } else {
    throw std::invalid_argument(fmt::format(
        "layout '{}': expected 'model', 'std', 'rotate_meas', 'full' or 'full_rotate'", name));
  }
  return d;
}

MeasurementMap::MeasurementMap(const DeviceLayout& device, const recon::Protocol& model)
    : device_(device) {
  const int n = device.n_electrodes;
  if (n != model.n_electrodes)
    throw std::invalid_argument(fmt::format("device layout ({}): {} electrodes, model has {}",
                                            device.describe(), n, model.n_electrodes));
  const recon::Protocol dev = device_table(device);
  if (device.raw_values != 0 && device.first_value + dev.n_meas() > device.raw_values)
    throw std::invalid_argument(fmt::format(
        "device layout ({}): {} measurements from value {} exceed the {} values of a frame",
        device.describe(), dev.n_meas(), device.first_value, device.raw_values));
  if (!std::isfinite(device.scale) || device.scale == 0.0)
    throw std::invalid_argument(
        fmt::format("device layout: scale {} must be finite and non-zero", device.scale));
  if (device.part == ComplexPart::kInterleaved && !device.complex)
    throw std::invalid_argument(fmt::format(
        "device layout ({}): complex part 'interleaved' needs complex values, the frames are real",
        device.describe()));

  std::unordered_map<uint64_t, uint32_t> where;
  where.reserve(dev.n_meas());
  for (size_t j = 0; j < dev.n_meas(); ++j) {
    const recon::Measurement& m = dev.measurements[j];
    const recon::Drive& d = dev.drives[m.drive];
    where.emplace(key(n, d.source, d.sink, m.positive, m.negative), uint32_t(j));
  }

  const size_t stride = device.complex ? 2 : 1;
  raw_scalars_ = device.raw_scalars();
  index_.resize(model.n_meas());
  factor_.resize(model.n_meas());
  identity_ = !device.complex && device.scale == 1.0;
  for (size_t k = 0; k < model.n_meas(); ++k) {
    const recon::Measurement& m = model.measurements[k];
    const recon::Drive& d = model.drives[m.drive];
    // The same physical measurement may be recorded with the drive or the pair reversed:
    // each reversal flips the sign (u[a] − u[b] = −(u[b] − u[a]); reversed current likewise).
    const struct {
      int s, t, p, q;
      double sign;
    } candidates[4] = {{d.source, d.sink, m.positive, m.negative, 1.0},
                       {d.source, d.sink, m.negative, m.positive, -1.0},
                       {d.sink, d.source, m.positive, m.negative, -1.0},
                       {d.sink, d.source, m.negative, m.positive, 1.0}};
    bool found = false;
    for (const auto& c : candidates) {
      const auto it = where.find(key(n, c.s, c.t, c.p, c.q));
      if (it == where.end()) continue;
      index_[k] = uint32_t((device.first_value + it->second) * stride);
      factor_[k] = c.sign * device.scale;
      found = true;
      break;
    }
    if (!found)
      throw std::invalid_argument(fmt::format(
          "device layout ({}) has no value for model measurement {} (drive {}→{}, u{} − u{})",
          device.describe(), k, d.source, d.sink, m.positive, m.negative));
    if (index_[k] != (device.first_value + k) * stride || factor_[k] != 1.0) identity_ = false;
  }
}

void MeasurementMap::apply(std::span<const double> raw, std::span<float> out) const noexcept {
  const size_t n = index_.size();
  if (!device_.complex) {
    for (size_t k = 0; k < n; ++k) out[k] = static_cast<float>(factor_[k] * raw[index_[k]]);
    return;
  }
  if (device_.part == ComplexPart::kInterleaved) {
    for (size_t k = 0; k < n; ++k) {
      out[2 * k] = static_cast<float>(factor_[k] * raw[index_[k]]);
      out[2 * k + 1] = static_cast<float>(factor_[k] * raw[index_[k] + 1]);
    }
    return;
  }
  for (size_t k = 0; k < n; ++k) {
    const double re = raw[index_[k]];
    const double im = raw[index_[k] + 1];
    double v = re;
    if (device_.part == ComplexPart::kImag) v = im;
    if (device_.part == ComplexPart::kMagnitude) v = std::hypot(re, im);
    out[k] = static_cast<float>(factor_[k] * v);
  }
}

}  // namespace eit::acquisition
