// The view's adapter of the indices stage's binary `global` message (docs/protocol.md, "Indices"):
// decodes the 40-byte header and the first region sum, refuses what is not such a message, and
// batches points into the page's JSON `global` message.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "eit/view/global_batch.hpp"

using namespace eit::view;

namespace {

// A message as the protocol describes it, written field by field (not with the publisher's struct).
std::vector<std::byte> global_message(uint64_t seq, uint64_t frame, int64_t t_ns,
                                      std::vector<double> values) {
  std::vector<std::byte> b(40 + 8 * values.size());
  auto put = [&](size_t at, const auto& v) { std::memcpy(b.data() + at, &v, sizeof v); };
  std::memcpy(b.data(), "EIXG", 4);
  put(4, uint16_t{1});
  put(6, static_cast<uint16_t>(values.size()));
  put(8, seq);
  put(16, t_ns);
  put(24, uint32_t{0});
  put(28, uint32_t{0});
  put(32, frame);
  for (size_t i = 0; i < values.size(); ++i) put(40 + 8 * i, values[i]);
  return b;
}

}  // namespace

TEST_CASE("global adapter: decodes seq, frame, time and the global value") {
  const auto m = global_message(1234, 17, 5'000'000'000, {-2.5, 1.0, 3.0});
  const auto p = decode_global(m);
  REQUIRE(p);
  CHECK(p->seq == 1234);
  CHECK(p->frame == 17);
  CHECK(p->t_acquired_ns == 5'000'000'000);
  CHECK(p->value == -2.5);
}

TEST_CASE("global adapter: refuses a wrong magic, version, length or an empty value list") {
  auto m = global_message(1, 1, 1, {1.0});
  auto bad = m;
  bad[0] = std::byte{'X'};
  CHECK_FALSE(decode_global(bad));
  bad = m;
  bad[4] = std::byte{2};
  CHECK_FALSE(decode_global(bad));
  bad = m;
  bad.pop_back();
  CHECK_FALSE(decode_global(bad));
  CHECK_FALSE(decode_global(global_message(1, 1, 1, {})));
  CHECK_FALSE(decode_global(std::span(m).first(39)));
}

TEST_CASE("global adapter: batches by time or count into one JSON message, NaN as null") {
  GlobalBatch batch(40, 3);
  CHECK_FALSE(batch.due(0));
  batch.add({10, 0, 1'000'000, 1.5}, 0);
  CHECK_FALSE(batch.due(39'000'000));
  CHECK(batch.due(40'000'000));
  batch.add({11, 1, 2'000'000, std::numeric_limits<double>::quiet_NaN()}, 1);
  const auto j = nlohmann::json::parse(batch.take_json("bed1", 1'000'000'000'000));
  CHECK(batch.empty());
  CHECK(j["type"] == "global");
  CHECK(j["stream"] == "bed1");
  CHECK(j["seq"] == nlohmann::json({10, 11}));
  CHECK(j["frame"] == nlohmann::json({0, 1}));
  CHECK(j["value"][0] == 1.5);
  CHECK(j["value"][1].is_null());
  CHECK(j["t_wall_ms"][0].get<double>() == doctest::Approx(1'000'001.0));
  for (uint64_t s = 0; s < 3; ++s) batch.add({s, s, 0, 0.0}, 0);
  CHECK(batch.due(0));  // full
}
