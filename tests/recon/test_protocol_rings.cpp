// Multi-ring protocols (EIDORS mk_stim_patterns layout, "planar") against tables derived by hand.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "eit/recon/protocol_rings.hpp"

using namespace eit::recon;

namespace {

RingProtocolOptions planar(int n, int rings) {
  RingProtocolOptions o;
  o.base.n_electrodes = n;
  o.n_rings = rings;
  o.pattern = RingPattern::kPlanar;
  return o;
}

std::vector<Measurement> of_drive(const Protocol& p, int drive) {
  std::vector<Measurement> out;
  for (const Measurement& m : p.measurements)
    if (m.drive == drive) out.push_back(m);
  return out;
}

void check_rows(const std::vector<Measurement>& got, const std::vector<Measurement>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("row " << i);
    CHECK(got[i].drive == want[i].drive);
    CHECK(got[i].positive == want[i].positive);
    CHECK(got[i].negative == want[i].negative);
  }
}

}  // namespace

TEST_CASE("planar, 2 rings of 4: drives within each ring, every ring measured (hand table)") {
  const Protocol p = make_ring_protocol(planar(8, 2));
  REQUIRE(p.drives.size() == 8);
  const int drives[8][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}, {6, 7}, {7, 4}};
  for (int d = 0; d < 8; ++d) {
    CHECK(p.drives[static_cast<size_t>(d)].source == drives[d][0]);
    CHECK(p.drives[static_cast<size_t>(d)].sink == drives[d][1]);
  }
  CHECK(p.n_meas() == 40);  // per drive: 1 on its own ring, 4 on the other
  // Drive 0 (0→1): ring 0 keeps only u3 − u2; ring 1 all four, m = 4..7.
  check_rows(of_drive(p, 0), {{0, 3, 2}, {0, 5, 4}, {0, 6, 5}, {0, 7, 6}, {0, 4, 7}});
  // Drive 4 (4→5): ring 0 all four; ring 1 keeps only u7 − u6.
  check_rows(of_drive(p, 4), {{4, 1, 0}, {4, 2, 1}, {4, 3, 2}, {4, 0, 3}, {4, 7, 6}});
  // The whole table is drive-major, as frames arrive.
  for (size_t k = 1; k < p.measurements.size(); ++k)
    CHECK(p.measurements[k].drive >= p.measurements[k - 1].drive);
}

TEST_CASE("planar rotate_meas starts every ring at the drive's source position") {
  RingProtocolOptions o = planar(8, 2);
  o.base.order = MeasurementOrder::kRotateMeas;
  const Protocol p = make_ring_protocol(o);
  // Drive 1 (1→2): ring 0 from m = 1: only u0 − u3 survives; ring 1 from m = 5.
  check_rows(of_drive(p, 1), {{1, 0, 3}, {1, 6, 5}, {1, 7, 6}, {1, 4, 7}, {1, 5, 4}});
}

TEST_CASE("planar skip-k drives, exclude_next and measure_on_driven") {
  RingProtocolOptions o = planar(16, 2);
  o.base.drive_distance = 3;  // skip 2
  Protocol p = make_ring_protocol(o);
  CHECK(p.drives[8].source == 8);
  CHECK(p.drives[8].sink == 11);
  CHECK(p.drives[7].sink == 2);  // (7 + 3) % 8 on ring 0
  // Drive 0 (0→3) on ring 0 of 8: pairs (m, m+1) touching 0 or 3 are m = 7, 0, 2, 3: 4 left.
  CHECK(of_drive(p, 0).size() == 4 + 8);

  o = planar(12, 2);
  o.exclude_next = 1;
  p = make_ring_protocol(o);
  // Drive 0 (0→1), ring 0 of 6: electrodes 5, 0, 1, 2 are out, only u4 − u3 remains.
  check_rows(of_drive(p, 0), {{0, 4, 3}, {0, 7, 6}, {0, 8, 7}, {0, 9, 8}, {0, 10, 9},
                              {0, 11, 10}, {0, 6, 11}});
  o.base.measure_on_driven = true;
  CHECK(make_ring_protocol(o).n_meas() == 12 * 12);

  // 2 × 16 planar adjacent: the 928 measurements of a 32-electrode two-ring belt.
  CHECK(make_ring_protocol(planar(32, 2)).n_meas() == 32 * 29);
}

TEST_CASE("pattern all ignores rings; bad ring options are refused by name") {
  RingProtocolOptions all;
  all.base.n_electrodes = 16;
  all.n_rings = 2;
  ProtocolOptions one;
  one.n_electrodes = 16;
  const Protocol a = make_ring_protocol(all), b = make_protocol(one);
  REQUIRE(a.n_meas() == b.n_meas());
  for (size_t k = 0; k < a.n_meas(); ++k) {
    CHECK(a.measurements[k].positive == b.measurements[k].positive);
    CHECK(a.measurements[k].negative == b.measurements[k].negative);
  }
  CHECK_THROWS_WITH_AS(make_ring_protocol(planar(16, 3)), doctest::Contains("3 rings"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_ring_protocol(planar(12, 4)), doctest::Contains("per ring"),
                       std::invalid_argument);
  RingProtocolOptions far = planar(16, 2);
  far.base.drive_distance = 8;
  CHECK_THROWS_WITH_AS(make_ring_protocol(far), doctest::Contains("electrodes of a ring"),
                       std::invalid_argument);
  CHECK(parse_ring_pattern("planar") == RingPattern::kPlanar);
  CHECK_THROWS_AS(parse_ring_pattern("square"), std::invalid_argument);
}
