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

TEST_CASE("pattern all ignores rings, bad ring options are refused by name") {
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
  CHECK(parse_ring_pattern("square") == RingPattern::kSquare);
  CHECK(parse_ring_pattern("zigzag") == RingPattern::kZigzag);
  CHECK_THROWS_AS(parse_ring_pattern("planar-offset"), std::invalid_argument);
}

TEST_CASE("square: the path of 2 rings of 4 and its adjacent protocol (hand table)") {
  // Rings: bottom 0..3, top 4..7. Path bottom 0, top 0, top 1, bottom 1, bottom 2, top 2, …
  CHECK(ring_path(RingPattern::kSquare, 8, 2) == std::vector<int>{0, 4, 5, 1, 2, 6, 7, 3});
  RingProtocolOptions o = planar(8, 2);
  o.pattern = RingPattern::kSquare;
  const Protocol p = make_ring_protocol(o);
  const int drives[8][2] = {{0, 4}, {4, 5}, {5, 1}, {1, 2}, {2, 6}, {6, 7}, {7, 3}, {3, 0}};
  REQUIRE(p.drives.size() == 8);
  for (int d = 0; d < 8; ++d) {
    CHECK(p.drives[static_cast<size_t>(d)].source == drives[d][0]);
    CHECK(p.drives[static_cast<size_t>(d)].sink == drives[d][1]);
  }
  // Drive 0 (path positions 0→1): pairs (m+1, m) along the path for m = 2..6, as electrodes.
  check_rows(of_drive(p, 0), {{0, 1, 5}, {0, 2, 1}, {0, 6, 2}, {0, 7, 6}, {0, 3, 7}});
  CHECK(p.n_meas() == 8 * 5);
}

TEST_CASE("square 2 x 16 follows EIDORS' square32 electrode map, skip-4 gives 928 measurements") {
  // square32 in mk_thorax_model_grychtol2016a: m(1) = 1, m(i) = m(i−1) + [48 1 −48 1](i−1 mod 4),
  // over EIDORS electrodes 1..16 (bottom ring) and 49..64 (top ring): here 0..15 and 16..31.
  const int steps[4] = {48, 1, -48, 1};
  std::vector<int> eidors{1};
  for (int i = 1; i < 32; ++i) eidors.push_back(eidors.back() + steps[(i - 1) % 4]);
  std::vector<int> want;
  for (int e : eidors) want.push_back(e <= 16 ? e - 1 : e - 49 + 16);
  CHECK(ring_path(RingPattern::kSquare, 32, 2) == want);

  RingProtocolOptions o = planar(32, 2);
  o.pattern = RingPattern::kSquare;
  o.base.drive_distance = 5;  // mk_stim_patterns(32, 1, [0 5], [0 5], {'no_meas_current'})
  o.base.measure_step = 5;
  const Protocol p = make_ring_protocol(o);
  CHECK(p.n_meas() == 928);
  // "Every second stimulation is cross-plane": drive 0 is positions 0→5, bottom 0 → top 2;
  // drive 1 is 1→6, top 0 → top 3; drive 2 is 2→7, top 1 → bottom 3; drive 3 is 3→8, bottom 1 →
  // bottom 4.
  const int want_drives[4][2] = {{0, 18}, {16, 19}, {17, 3}, {1, 4}};
  for (int d = 0; d < 4; ++d) {
    CHECK(p.drives[static_cast<size_t>(d)].source == want_drives[d][0]);
    CHECK(p.drives[static_cast<size_t>(d)].sink == want_drives[d][1]);
  }
}

TEST_CASE("zigzag alternates rings, square and zigzag need 2 rings") {
  CHECK(ring_path(RingPattern::kZigzag, 8, 2) == std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7});
  RingProtocolOptions o = planar(8, 2);
  o.pattern = RingPattern::kZigzag;
  const Protocol p = make_ring_protocol(o);
  CHECK(p.drives[1].source == 4);
  CHECK(p.drives[1].sink == 1);
  // Drive 1 (positions 1→2): m = 3..7 along the path 0 4 1 5 2 6 3 7.
  check_rows(of_drive(p, 1), {{1, 2, 5}, {1, 6, 2}, {1, 3, 6}, {1, 7, 3}, {1, 0, 7}});
  o.n_rings = 3;
  o.base.n_electrodes = 12;
  CHECK_THROWS_WITH_AS(make_ring_protocol(o), doctest::Contains("needs 2 rings"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ring_path(RingPattern::kSquare, 10, 2), doctest::Contains("even"),
                       std::invalid_argument);
}
