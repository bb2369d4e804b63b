// The per-frame path of the indices allocates nothing: IndicesEngine::push over a minute of
// breathing at 50 frames/s (breaths completing, per-breath indices computed) and the breath JSON,
// counted per thread by counting_new.hpp (every malloc, operator new included; operator new alone
// under a sanitizer).
#include <doctest/doctest.h>

#include <vector>

#include "breathing_images.hpp"
#include "counting_new.hpp"
#include "eit/indices/breath_json.hpp"
#include "eit/indices/indices_engine.hpp"

using eit::test::t_allocations;

using namespace eit::indices;

TEST_CASE("IndicesEngine::push and the breath message allocate nothing per frame") {
  eit::test::Breathing b;
  b.right_delay_s = 0.2;
  IndicesOptions o;
  o.rate_hz = b.rate_hz;
  IndicesEngine e(BodyLayout::from_grid(b.grid()), o);
  const size_t n = 3000;
  std::vector<std::vector<float>> frames(n);
  for (size_t k = 0; k < n; ++k) b.frame(k, frames[k]);
  std::vector<char> json(breath_json_capacity(e.layout()));
  size_t breaths = 0, bytes = 0;
  const uint64_t before = t_allocations;
  for (size_t k = 0; k < n; ++k)
    if (const auto* r = e.push(frames[k], k, static_cast<int64_t>(k))) {
      ++breaths;
      bytes += write_breath_json(*r, e.layout(), "s", true, json);
    }
  const uint64_t allocations = t_allocations - before;
  CHECK(allocations == 0);
  CHECK(breaths >= 15);
  CHECK(bytes > 0);
}
