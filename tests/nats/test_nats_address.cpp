// NATS URIs: subjects per site and bed, and patient data never sent off this host unprotected.
// Parsing only: nothing here connects anywhere.
#include <doctest/doctest.h>

#include <stdexcept>

#include "eit/nats/nats_address.hpp"

using eit::nats::parse_nats_address;

TEST_CASE("a NATS URI names the server, site and bed, and the subjects eit.<site>.<bed>.<kind>") {
  const auto a = parse_nats_address("nats://127.0.0.1:4333?site=ward3&bed=12");
  CHECK(a.server_url == "nats://127.0.0.1:4333");
  CHECK(a.subject("img") == "eit.ward3.12.img");
  CHECK(a.subject("raw") == "eit.ward3.12.raw");
  const auto d = parse_nats_address("nats://localhost");
  CHECK(d.server_url == "nats://localhost:4222");
  CHECK(d.subject("series") == "eit.default.0.series");
}

TEST_CASE("a server off this host needs credentials and TLS unless insecure=1 says otherwise") {
  CHECK_THROWS_WITH_AS(parse_nats_address("nats://10.1.2.3:4222?bed=1"),
                       doctest::Contains("needs credentials"), std::invalid_argument);
  CHECK_THROWS_AS(parse_nats_address("nats://10.1.2.3:4222?bed=1&creds=/x.creds"),
                  std::invalid_argument);  // credentials without TLS
  const auto tls = parse_nats_address("nats://10.1.2.3:4222?creds=/x.creds&tls-ca=/ca.pem");
  CHECK(tls.server_url == "tls://10.1.2.3:4222");
  CHECK(parse_nats_address("nats://10.1.2.3?insecure=1").insecure);
}

TEST_CASE("bad NATS URIs are refused naming the option") {
  CHECK_THROWS_WITH_AS(parse_nats_address("nats://127.0.0.1?bed=a.b"),
                       doctest::Contains("bed 'a.b'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_nats_address("nats://127.0.0.1?colour=red"),
                       doctest::Contains("option 'colour' unknown"), std::invalid_argument);
  CHECK_THROWS_AS(parse_nats_address("http://127.0.0.1"), std::invalid_argument);
}

TEST_CASE(
    "an nkey user (public key and seed file) counts as credentials, and model= names the model") {
  const auto a =
      parse_nats_address("nats://10.1.2.3:4222?nkey=UABC&seed=/s.nk&tls-ca=/ca.pem&model=adult_32");
  CHECK(a.nkey == "UABC");
  CHECK(a.nkey_seed_file == "/s.nk");
  CHECK(a.model == "adult_32");
  CHECK_THROWS_WITH_AS(parse_nats_address("nats://127.0.0.1?nkey=UABC"),
                       doctest::Contains("go together"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_nats_address("nats://127.0.0.1?nkey=UABC&seed=/s&creds=/c"),
                       doctest::Contains("exclude each other"), std::invalid_argument);
  CHECK_THROWS_AS(parse_nats_address("nats://10.1.2.3?nkey=UABC&seed=/s.nk"),
                  std::invalid_argument);  // an nkey without TLS
  CHECK_THROWS_AS(parse_nats_address("nats://127.0.0.1?model=a.b"), std::invalid_argument);
}

TEST_CASE("a publisher's URI refuses the subscriber options since= and scale= naming them") {
  using eit::nats::parse_nats_publisher_address;
  CHECK_THROWS_WITH_AS(parse_nats_publisher_address("nats://127.0.0.1?bed=1&since=new"),
                       doctest::Contains("since= is a subscriber option"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_nats_publisher_address("nats://127.0.0.1?scale=0.5&bed=1"),
                       doctest::Contains("scale= is a subscriber option"), std::invalid_argument);
  CHECK(parse_nats_publisher_address("nats://127.0.0.1?site=icu&bed=1&model=m").model == "m");
}

TEST_CASE("a subscriber's URI refuses the publisher option model= naming it") {
  using eit::nats::parse_nats_subscriber_address;
  CHECK_THROWS_WITH_AS(parse_nats_subscriber_address("nats://127.0.0.1?site=icu&bed=1&model=m"),
                       doctest::Contains("model= is a publisher option"), std::invalid_argument);
  const auto a = parse_nats_subscriber_address("nats://127.0.0.1?site=icu&bed=1&since=all");
  CHECK(a.bed == "1");
  CHECK(a.model.empty());
}
