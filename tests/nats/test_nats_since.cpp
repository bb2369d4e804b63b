// since= of a bed's URI, read by one parser (nats::parse_since) for run, reconstruct, listen and
// view, and checked the same way by parse_nats_address. Parsing only: nothing connects.
#include <doctest/doctest.h>

#include <stdexcept>

#include "eit/nats/nats_address.hpp"

using eit::nats::parse_nats_address;
using eit::nats::parse_since;
using eit::nats::Since;

TEST_CASE("since= is absent, all, new or a time in seconds since the epoch") {
  CHECK(parse_since("nats://127.0.0.1?site=icu&bed=5").kind == Since::Kind::kAbsent);
  CHECK(parse_since("nats://127.0.0.1?since=all&bed=5").kind == Since::Kind::kAll);
  CHECK(parse_since("nats://127.0.0.1?bed=5&since=new").kind == Since::Kind::kNew);
  const Since t = parse_since("nats://127.0.0.1?bed=5&since=1700000000.5");
  CHECK(t.kind == Since::Kind::kTime);
  CHECK(t.epoch_ns == 1'700'000'000'500'000'000);
}

TEST_CASE("an empty or malformed since= is refused naming the URI and what is expected") {
  for (const char* uri : {"nats://127.0.0.1:4222?site=icu&bed=5&since=",
                          "nats://127.0.0.1:4222?site=icu&bed=5&since=soon",
                          "nats://127.0.0.1:4222?site=icu&bed=5&since=-3",
                          "nats://127.0.0.1:4222?site=icu&bed=5&since=inf"}) {
    CAPTURE(uri);
    CHECK_THROWS_WITH_AS(parse_since(uri), doctest::Contains("is not 'all', 'new' or seconds"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(parse_nats_address(uri),
                         doctest::Contains((std::string("'") + uri + "': since=").c_str()),
                         std::invalid_argument);
  }
}
