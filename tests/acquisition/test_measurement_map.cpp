#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "eit/acquisition/measurement_map.hpp"
#include "eit/recon/protocol.hpp"
#include "eit/recon/protocol_rings.hpp"

using namespace eit::acquisition;
using eit::recon::MeasurementOrder;
using eit::recon::Protocol;
using eit::recon::ProtocolOptions;

namespace {

// A value that names one physical measurement: drive (source, sink), pair (positive, negative).
double code(int n, int source, int sink, int positive, int negative) {
  return ((source * n + sink) * n + positive) * n + negative + 1.0;
}

// A raw frame in `device` layout whose every measurement carries its code.
std::vector<double> coded_frame(const DeviceLayout& d) {
  ProtocolOptions o;
  o.n_electrodes = d.n_electrodes;
  o.drive_distance = d.drive_distance;
  o.measure_step = d.measure_step;
  o.order = d.order;
  o.measure_on_driven = d.full_table;
  const Protocol p = eit::recon::make_protocol(o);
  std::vector<double> raw(d.raw_scalars(), -1.0);
  const size_t stride = d.complex ? 2 : 1;
  for (size_t j = 0; j < p.n_meas(); ++j) {
    const auto& m = p.measurements[j];
    const auto& dr = p.drives[m.drive];
    raw[(d.first_value + j) * stride] =
        code(d.n_electrodes, dr.source, dr.sink, m.positive, m.negative);
    if (d.complex) raw[(d.first_value + j) * stride + 1] = 0.5;
  }
  return raw;
}

// Every model value must carry the code of the model's own measurement k.
void check_mapped(const std::vector<float>& out, const Protocol& model) {
  REQUIRE(out.size() == model.n_meas());
  for (size_t k = 0; k < model.n_meas(); ++k) {
    const auto& m = model.measurements[k];
    const auto& d = model.drives[m.drive];
    CHECK(out[k] ==
          static_cast<float>(code(model.n_electrodes, d.source, d.sink, m.positive, m.negative)));
  }
}

}  // namespace

TEST_CASE("rotate_meas device order is untwisted onto the model's std order") {
  const Protocol model = eit::recon::make_protocol({});
  DeviceLayout dev;
  dev.order = MeasurementOrder::kRotateMeas;
  const MeasurementMap map(dev, model);
  CHECK_FALSE(map.is_identity());
  std::vector<float> out(map.n_values());
  map.apply(coded_frame(dev), out);
  check_mapped(out, model);
  // Drive 2→3: std starts at u1 − u0 (model index 26); rotated order starts at u5 − u4 and
  // reaches u1 − u0 after the 12 pairs m = 4..15, at raw index 26 + 12.
  CHECK(map.source_index(26) == 38);
}

TEST_CASE("a model in rotate_meas order keeps a rotate_meas device as an identity map") {
  ProtocolOptions o;
  o.order = MeasurementOrder::kRotateMeas;
  const Protocol model = eit::recon::make_protocol(o);
  DeviceLayout dev;
  dev.order = MeasurementOrder::kRotateMeas;
  const MeasurementMap map(dev, model);
  CHECK(map.is_identity());
}

TEST_CASE("a full 16x16 table drops the entries on driven electrodes (index 16*drive+meas)") {
  const Protocol model = eit::recon::make_protocol({});
  DeviceLayout dev;
  dev.full_table = true;
  const MeasurementMap map(dev, model);
  REQUIRE(map.n_values() == 208);
  // Drive 0→1 keeps m = 2..14: raw indices 2..14; drive 1→2 keeps m = 3..15: raw 19..31.
  CHECK(map.source_index(0) == 2);
  CHECK(map.source_index(12) == 14);
  CHECK(map.source_index(13) == 16 + 3);
  std::vector<float> out(208);
  map.apply(coded_frame(dev), out);
  check_mapped(out, model);
}

TEST_CASE("a full table in rotated order maps too, and so does a 32-electrode opposition layout") {
  {
    const Protocol model = eit::recon::make_protocol({});
    DeviceLayout dev;
    dev.full_table = true;
    dev.order = MeasurementOrder::kRotateMeas;
    const MeasurementMap map(dev, model);
    std::vector<float> out(208);
    map.apply(coded_frame(dev), out);
    check_mapped(out, model);
  }
  {
    ProtocolOptions o;
    o.n_electrodes = 32;
    o.drive_distance = 16;
    const Protocol model = eit::recon::make_protocol(o);
    CHECK(model.n_meas() == 896);
    DeviceLayout dev;
    dev.n_electrodes = 32;
    dev.drive_distance = 16;
    const MeasurementMap map(dev, model);
    CHECK(map.is_identity());
  }
}

TEST_CASE("measurements placed after other values in the raw frame are found at their offset") {
  const Protocol model = eit::recon::make_protocol({});
  DeviceLayout dev;
  dev.order = MeasurementOrder::kRotateMeas;
  dev.first_value = 10;
  dev.raw_values = 256;
  const MeasurementMap map(dev, model);
  CHECK(map.raw_scalars() == 256);
  std::vector<float> out(208);
  map.apply(coded_frame(dev), out);
  check_mapped(out, model);
}

TEST_CASE("complex values become real part, imaginary part or magnitude, scale flips polarity") {
  const Protocol model = eit::recon::make_protocol({});
  DeviceLayout dev;
  dev.full_table = true;
  dev.complex = true;
  std::vector<double> raw(512);
  for (size_t j = 0; j < 256; ++j) {
    raw[2 * j] = 3.0 + double(j);
    raw[2 * j + 1] = 4.0;
  }
  std::vector<float> out(208);
  dev.part = ComplexPart::kReal;
  MeasurementMap(dev, model).apply(raw, out);
  CHECK(out[0] == doctest::Approx(3.0 + 2));
  dev.part = ComplexPart::kImag;
  MeasurementMap(dev, model).apply(raw, out);
  CHECK(out[0] == doctest::Approx(4.0));
  dev.part = ComplexPart::kMagnitude;
  MeasurementMap(dev, model).apply(raw, out);
  CHECK(out[0] == doctest::Approx(std::hypot(5.0, 4.0)));
  dev.scale = -1.0;
  MeasurementMap(dev, model).apply(raw, out);
  CHECK(out[0] == doctest::Approx(-std::hypot(5.0, 4.0)));

  // Interleaved: both parts, in the model's order, each with the sign and scale.
  dev.part = ComplexPart::kInterleaved;
  dev.scale = -2.0;
  const MeasurementMap both(dev, model);
  CHECK(both.n_values() == 2 * 208);
  std::vector<float> pairs(2 * 208);
  both.apply(raw, pairs);
  dev.part = ComplexPart::kReal;
  MeasurementMap(dev, model).apply(raw, out);
  for (size_t k = 0; k < 208; ++k) {
    CHECK(pairs[2 * k] == out[k]);
    CHECK(pairs[2 * k + 1] == doctest::Approx(-8.0));
  }
  // Real frames cannot give interleaved pairs.
  dev.complex = false;
  dev.part = ComplexPart::kInterleaved;
  CHECK_THROWS_WITH_AS(MeasurementMap(dev, model), doctest::Contains("needs complex values"),
                       std::invalid_argument);
}

TEST_CASE("a pair measured the other way round is found with its sign reversed") {
  // A model measuring u[m] − u[m+1] (step n−1 in pyEIT's terms) from a step-1 device.
  ProtocolOptions o;
  o.measure_step = 15;
  const Protocol model = eit::recon::make_protocol(o);
  DeviceLayout dev;
  const MeasurementMap map(dev, model);
  REQUIRE(map.n_values() == 208);
  for (size_t k = 0; k < map.n_values(); ++k) CHECK(map.factor(k) == -1.0);
}

TEST_CASE("a layout that cannot supply the model's measurements is refused with a clear message") {
  const Protocol model = eit::recon::make_protocol({});
  DeviceLayout dev;
  dev.n_electrodes = 32;
  CHECK_THROWS_WITH_AS(MeasurementMap(dev, model), doctest::Contains("32 electrodes, model has 16"),
                       std::invalid_argument);
  ProtocolOptions o;
  o.measure_on_driven = true;  // the model wants pairs on driven electrodes: 208 cannot give them
  const Protocol full_model = eit::recon::make_protocol(o);
  CHECK_THROWS_WITH_AS(MeasurementMap(DeviceLayout{}, full_model),
                       doctest::Contains("has no value for model measurement"),
                       std::invalid_argument);
  DeviceLayout short_frame;
  short_frame.raw_values = 100;
  CHECK_THROWS_WITH_AS(MeasurementMap(short_frame, model),
                       doctest::Contains("exceed the 100 values"), std::invalid_argument);
}

TEST_CASE("layout names parse against the model and unknown names are refused") {
  const Protocol model = eit::recon::make_protocol({});
  CHECK(parse_layout("full", model).full_table);
  CHECK(parse_layout("rotate_meas", model).order == MeasurementOrder::kRotateMeas);
  CHECK(parse_layout("model", model).n_measurements() == 208);
  CHECK_THROWS_AS(parse_layout("twisted", model), std::invalid_argument);
  CHECK(parse_complex_part("magnitude") == ComplexPart::kMagnitude);
  CHECK(parse_complex_part("interleaved") == ComplexPart::kInterleaved);
  CHECK_THROWS_AS(parse_complex_part("phase"), std::invalid_argument);
}

TEST_CASE("layout 'model' of a two-ring planar model maps the model's own table as identity") {
  eit::recon::RingProtocolOptions o;
  o.base.n_electrodes = 32;
  o.n_rings = 2;
  o.pattern = eit::recon::RingPattern::kPlanar;
  o.exclude_next = 1;  // fewer measurements than any one-ring table of 32 electrodes
  const Protocol model = eit::recon::make_ring_protocol(o);
  const DeviceLayout dev = parse_layout("model", model);
  CHECK(dev.n_measurements() == model.n_meas());
  const MeasurementMap map(dev, model);
  CHECK(map.is_identity());
  std::vector<double> raw(model.n_meas());
  for (size_t k = 0; k < raw.size(); ++k) raw[k] = 0.5 + double(k);
  std::vector<float> out(model.n_meas());
  map.apply(raw, out);
  for (size_t k = 0; k < out.size(); ++k) CHECK(out[k] == static_cast<float>(raw[k]));
  // A one-ring layout cannot supply the cross-ring measurements: named, as before.
  CHECK_THROWS_AS(MeasurementMap(parse_layout("std", model), model), std::invalid_argument);
  // Options changed after layout_of: the table those options describe, not the model's.
  DeviceLayout changed = layout_of(model);
  changed.full_table = true;
  CHECK(changed.n_measurements() == 32u * 32u);
}
