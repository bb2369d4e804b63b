#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "eit/recon/protocol.hpp"
#include "test_data.hpp"

using namespace eit::recon;

TEST_CASE("adjacent 16-electrode protocol has 208 measurements, 13 per drive") {
  const Protocol p = make_protocol({});
  CHECK(p.drives.size() == 16);
  CHECK(p.n_meas() == 208);
  CHECK(p.drives[15].source == 15);
  CHECK(p.drives[15].sink == 0);
  // Drive 0→1 first measures u3 − u2 (pyEIT's 'std' order).
  CHECK(p.measurements[0].drive == 0);
  CHECK(p.measurements[0].positive == 3);
  CHECK(p.measurements[0].negative == 2);
  for (const auto& m : p.measurements) {
    const Drive d = p.drives[m.drive];
    CHECK(m.positive != d.source);
    CHECK(m.positive != d.sink);
    CHECK(m.negative != d.source);
    CHECK(m.negative != d.sink);
  }
}

TEST_CASE("rotate_meas order starts each drive's measurements at its source electrode") {
  ProtocolOptions o;
  o.order = MeasurementOrder::kRotateMeas;
  const Protocol p = make_protocol(o);
  REQUIRE(p.n_meas() == 208);
  // Drive 5→6: m runs 5,6,...; the first kept pair is m = 7 (u8 − u7).
  const auto first = std::find_if(p.measurements.begin(), p.measurements.end(),
                                  [](const Measurement& m) { return m.drive == 5; });
  CHECK(first->negative == 7);
  CHECK(first->positive == 8);
}

TEST_CASE("opposite drive and measuring on driven electrodes give the full table") {
  ProtocolOptions o;
  o.n_electrodes = 32;
  o.drive_distance = 16;
  o.measure_on_driven = true;
  CHECK(make_protocol(o).n_meas() == 32 * 32);
}

TEST_CASE("protocol options out of range are rejected with the offending value") {
  ProtocolOptions o;
  o.drive_distance = 16;
  CHECK_THROWS_WITH_AS(make_protocol(o), doctest::Contains("drive distance 16"),
                       std::invalid_argument);
  o = {};
  o.n_electrodes = 2;
  CHECK_THROWS_AS(make_protocol(o), std::invalid_argument);
}

TEST_CASE("measurement table equals pyEIT's meas_mat for h0=0.1") {
  const auto path = eit::test::shared_data_file("pyeit/h0_0.1/meas_mat.csv");
  if (!path) return;
  std::ifstream in(*path);
  const Protocol p = make_protocol({});
  std::string line;
  size_t row = 0;
  while (std::getline(in, line)) {
    int n, m, exc;
    char c1, c2;
    std::istringstream(line) >> n >> c1 >> m >> c2 >> exc;
    REQUIRE(row < p.n_meas());
    CHECK(p.measurements[row].positive == n);
    CHECK(p.measurements[row].negative == m);
    CHECK(p.measurements[row].drive == exc);
    ++row;
  }
  CHECK(row == 208);
}
