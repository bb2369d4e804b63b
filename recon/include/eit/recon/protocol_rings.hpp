#pragma once
// Protocols for electrodes in several rings (3-D models; electrodes numbered ring by ring from the
// lowest, n = N / n_rings per ring). The result is an ordinary Protocol: its drive and measurement
// tables are what a Model stores and what frames follow; Protocol::options keeps the base options
// (drive distance, step, order, measure_on_driven).
//
//   kAll     all N electrodes as one ring: make_protocol(base) exactly (pyEIT's layout).
//   kPlanar  EIDORS' mk_stim_patterns(n, n_rings, [0 d], [0 step], …) layout: for each ring r and
//            each electrode k of it a drive within that ring, source r·n + k, sink
//            r·n + (k + d) % n; for every drive the measurements of every ring q within that ring,
//            v = u[q·n + (m + step) % n] − u[q·n + m], rings ascending, m = 0..n−1 ('std') or from
//            the drive's position in its ring ('rotate_meas'). Skip-k drives: d = k + 1.
//   kSquare  two rings of n (n even): the 2n electrodes form one path that steps between the rings
//            every second electrode, bottom 0, top 0, top 1, bottom 1, bottom 2, top 2, top 3, …
//            (Grychtol, Müller & Adler 2016, EIDORS mk_thorax_model_grychtol2016a '2x16_square':
//            electrode map square32, then mk_stim_patterns(32, 1, [0 5], [0 5], …) over that
//            order). The drives and measurements of kAll run along the path: with d = 5 and
//            step = 5 (skip 4) it is EIDORS' square pattern.
//   kZigzag  two rings of n: the path alternates rings, bottom 0, top 0, bottom 1, top 1, …
//            (EIDORS' '2x16_odd-even' order, there starting on the top ring; mk_circ_tank's
//            'zigzag' places electrodes this way with the rings offset by half a pitch).
// Measurements on a driven electrode are left out unless base.measure_on_driven; exclude_next = K
// (EIDORS' no_meas_current_nextK) also leaves out those on the K electrodes either side of a driven
// one in its ring. Pure; throws std::invalid_argument naming the option and its range.
#include <string_view>
#include <vector>

#include "eit/recon/protocol.hpp"

namespace eit::recon {

enum class RingPattern { kAll, kPlanar, kSquare, kZigzag };
std::string_view to_string(RingPattern pattern) noexcept;
RingPattern parse_ring_pattern(std::string_view text);  // "all" | "planar" | "square" | "zigzag"

// The path of kSquare and kZigzag: path[i] = the electrode (ring-by-ring numbering) at position i.
// Throws std::invalid_argument unless 2 rings (and, for kSquare, an even count per ring).
std::vector<int> ring_path(RingPattern pattern, int n_electrodes, int n_rings);

struct RingProtocolOptions {
  ProtocolOptions base;  // n_electrodes = N in all rings
  int n_rings = 1;
  RingPattern pattern = RingPattern::kAll;
  int exclude_next = 0;  // 0..3
};

Protocol make_ring_protocol(const RingProtocolOptions& options);

}  // namespace eit::recon
