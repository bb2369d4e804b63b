// Reciprocal rows of the Gauss–Newton Jacobian (contract: gn_reciprocity.hpp).
#include "gn_reciprocity.hpp"

#include <array>
#include <cmath>
#include <map>
#include <utility>

namespace eit::recon::detail {

std::vector<JacobianRow> all_rows(const Protocol& protocol) {
  std::vector<JacobianRow> rows;
  rows.reserve(protocol.n_meas());
  for (const Measurement& m : protocol.measurements) {
    const Drive& d = protocol.drives[static_cast<size_t>(m.drive)];
    rows.push_back({d.source, d.sink, m.positive, m.negative, 1.0});
  }
  return rows;
}

ReciprocalRows group_reciprocal_rows(const Protocol& protocol) {
  ReciprocalRows g;
  const size_t n = protocol.n_meas();
  g.group.resize(n);
  g.sign.resize(n);
  std::vector<int> count;
  // Canonical key: each electrode pair ordered (a flip changes the sign), then the two pairs
  // ordered (the dot product is symmetric).
  std::map<std::array<int, 4>, int> index;
  for (size_t k = 0; k < n; ++k) {
    const Measurement& m = protocol.measurements[k];
    const Drive& d = protocol.drives[static_cast<size_t>(m.drive)];
    std::pair<int, int> a{d.source, d.sink}, b{m.positive, m.negative};
    int s = 1;
    if (a.first > a.second) std::swap(a.first, a.second), s = -s;
    if (b.first > b.second) std::swap(b.first, b.second), s = -s;
    if (b < a) std::swap(a, b);
    const auto [it, fresh] =
        index.try_emplace({a.first, a.second, b.first, b.second}, static_cast<int>(g.rows.size()));
    if (fresh) {
      g.rows.push_back({a.first, a.second, b.first, b.second, 1.0});
      count.push_back(0);
    }
    g.group[k] = it->second;
    g.sign[k] = static_cast<int8_t>(s);
    ++count[static_cast<size_t>(it->second)];
  }
  g.inv_scale.resize(g.rows.size());
  for (size_t q = 0; q < g.rows.size(); ++q) {
    const double c = std::sqrt(static_cast<double>(count[q]));
    g.rows[q].factor = c;
    g.inv_scale[q] = 1.0 / c;
  }
  return g;
}

}  // namespace eit::recon::detail
