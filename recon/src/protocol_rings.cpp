#include "eit/recon/protocol_rings.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::recon {

std::string_view to_string(RingPattern pattern) noexcept {
  switch (pattern) {
    case RingPattern::kAll:
      return "all";
    case RingPattern::kPlanar:
      return "planar";
    case RingPattern::kSquare:
      return "square";
    case RingPattern::kZigzag:
      return "zigzag";
  }
  return "all";
}

RingPattern parse_ring_pattern(std::string_view text) {
  if (text == "all") return RingPattern::kAll;
  if (text == "planar") return RingPattern::kPlanar;
  if (text == "square") return RingPattern::kSquare;
  if (text == "zigzag") return RingPattern::kZigzag;
  throw std::invalid_argument(
      fmt::format("ring pattern '{}': expected 'all', 'planar', 'square' or 'zigzag'", text));
}

std::vector<int> ring_path(RingPattern pattern, int n_all, int n_rings) {
  const bool square = pattern == RingPattern::kSquare;
  if (!square && pattern != RingPattern::kZigzag)
    throw std::invalid_argument(
        fmt::format("protocol: pattern '{}' has no electrode path", to_string(pattern)));
  const int n = n_rings > 0 ? n_all / n_rings : 0;
  if (n_rings != 2 || n_all % 2 != 0 || n < 2 || (square && n % 2 != 0))
    throw std::invalid_argument(fmt::format(
        "protocol: pattern '{}' needs 2 rings of the same{} count, got {} electrodes on {} "
        "ring(s)",
        to_string(pattern), square ? " even" : "", n_all, n_rings));
  std::vector<int> path(static_cast<size_t>(n_all));
  for (int i = 0; i < n_all; ++i) {
    // square: in each group of 4 positions, rings bottom, top, top, bottom; electrode i / 2.
    const int ring = square ? ((i % 4 == 1 || i % 4 == 2) ? 1 : 0) : i % 2;
    path[static_cast<size_t>(i)] = ring * n + i / 2;
  }
  return path;
}

namespace {

// Distance along the ring between two electrodes of one ring of n; n + 1 across rings.
int ring_distance(int a, int b, int n) {
  if (a / n != b / n) return n + 1;
  const int d = ((a - b) % n + n) % n;
  return std::min(d, n - d);
}

}  // namespace

Protocol make_ring_protocol(const RingProtocolOptions& r) {
  const ProtocolOptions& o = r.base;
  const int n_all = o.n_electrodes;
  if (r.n_rings < 1 || n_all % r.n_rings != 0)
    throw std::invalid_argument(fmt::format(
        "protocol: {} electrodes on {} rings, expected rings ≥ 1 dividing the electrodes", n_all,
        r.n_rings));
  if (r.exclude_next < 0 || r.exclude_next > 3)
    throw std::invalid_argument(
        fmt::format("protocol: exclude_next {} out of range, expected 0..3", r.exclude_next));
  if (r.pattern == RingPattern::kSquare || r.pattern == RingPattern::kZigzag) {
    // One ring along the path, then each position renamed to the electrode standing there.
    const std::vector<int> path = ring_path(r.pattern, n_all, r.n_rings);
    Protocol p = make_ring_protocol({o, 1, RingPattern::kAll, r.exclude_next});
    for (Drive& d : p.drives)
      d = {path[static_cast<size_t>(d.source)], path[static_cast<size_t>(d.sink)]};
    for (Measurement& m : p.measurements)
      m = {m.drive, path[static_cast<size_t>(m.positive)], path[static_cast<size_t>(m.negative)]};
    return p;
  }
  const bool planar = r.pattern == RingPattern::kPlanar;
  const int rings = planar ? r.n_rings : 1;
  const int n = n_all / rings;
  if (planar && n < 4)
    throw std::invalid_argument(
        fmt::format("protocol: {} electrodes per ring, planar patterns need at least 4", n));
  if (o.drive_distance < 1 || o.drive_distance >= n || o.measure_step < 1 || o.measure_step >= n)
    throw std::invalid_argument(fmt::format(
        "protocol: drive distance {} and measurement step {} must be in 1..{} (below the {} "
        "electrodes of a ring)",
        o.drive_distance, o.measure_step, n - 1, n));
  if (!planar && r.exclude_next == 0) return make_protocol(o);

  Protocol p;
  p.n_electrodes = n_all;
  p.options = o;
  for (int ring = 0; ring < rings; ++ring)
    for (int k = 0; k < n; ++k)
      p.drives.push_back({ring * n + k, ring * n + (k + o.drive_distance) % n});
  for (size_t d = 0; d < p.drives.size(); ++d) {
    const Drive drive = p.drives[d];
    const int first = o.order == MeasurementOrder::kStd ? 0 : drive.source % n;
    for (int q = 0; q < rings; ++q)
      for (int i = 0; i < n; ++i) {
        const int m = q * n + (first + i) % n;
        const int pos = q * n + ((first + i) % n + o.measure_step) % n;
        bool skip = false;
        for (int e : {m, pos})
          for (int driven : {drive.source, drive.sink})
            skip = skip || ring_distance(e, driven, n) <= r.exclude_next;
        if (skip && !o.measure_on_driven) continue;
        p.measurements.push_back({static_cast<int>(d), pos, m});
      }
  }
  // Caught here, not when the model is saved ('H is 423 × 0').
  if (p.measurements.empty())
    throw std::invalid_argument(fmt::format(
        "protocol: {} electrodes per ring with exclude_next {} leave no measurement; give fewer "
        "excluded neighbours or more electrodes",
        n, r.exclude_next));
  return p;
}

}  // namespace eit::recon
