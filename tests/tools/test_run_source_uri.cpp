// `eitstream run --source URI` with a mistake in the URI's options ends at once with exit status
// 1 and names the URI, the option and what is expected (docs/protocol.md, "A source that never
// works"). The old run ignored unknown options and waited for the source timeout (status 5);
// phantom: specs are checked as strictly.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "cli_run.hpp"

using eit::test::contains;
using eit::test::run_eitstream;

namespace {

eit::test::CliResult run_source(const std::string& uri) {
  return run_eitstream(
      fmt::format("run --source '{}' --source-timeout 2 --frames 3 --endpoint 'tcp://127.0.0.1:*' "
                  "--backend cpu --quiet",
                  uri));
}

}  // namespace

TEST_CASE("run refuses unknown tcp and udp source options with status 1 naming them") {
  for (const auto& [option, key] :
       {std::pair{"idel=5", "idel"}, std::pair{"bogus=1", "bogus"}, std::pair{"Idle=5", "Idle"}}) {
    const std::string uri = std::string("tcp://127.0.0.1:27099?") + option;
    CAPTURE(uri);
    const auto r = run_source(uri);
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(contains(r.output, fmt::format("source '{}': option '{}' unknown; expected format, "
                                         "complex, scale, rate, idle, keepalive, connect_timeout",
                                         uri, key)));
  }
  const auto udp = run_source("udp://127.0.0.1:0?bogus=1");
  CAPTURE(udp.output);
  CHECK(udp.code == 1);
  CHECK(contains(udp.output, "option 'bogus' unknown; expected format, complex, scale, rate"));
}

TEST_CASE("run refuses an idle= out of range and names the whole URI in a number error") {
  const auto idle = run_source("tcp://127.0.0.1:27099?idle=-1");
  CAPTURE(idle.output);
  CHECK(idle.code == 1);
  CHECK(contains(idle.output, "idle=-1 is out of range; expected seconds, 0 (never) to 3600"));
  const auto scale = run_source("tcp://127.0.0.1:27099?scale=abc");
  CAPTURE(scale.output);
  CHECK(scale.code == 1);
  CHECK(contains(scale.output, "source 'tcp://127.0.0.1:27099?scale=abc': option scale='abc'"));
}

TEST_CASE("run refuses a phantom spec with an unknown key or positions that are not whole") {
  const auto key = run_source("phantom:breathing?rate=30&depth=2");
  CAPTURE(key.output);
  CHECK(key.code == 1);
  CHECK(
      contains(key.output, "unknown key 'depth' (expected rate, tidal, delay, lung or positions)"));
  const auto positions = run_source("phantom:breathing?positions=16.5");
  CAPTURE(positions.output);
  CHECK(positions.code == 1);
  CHECK(contains(positions.output, "positions=16.5 is not a whole number"));
}

TEST_CASE("run --source with an unknown scheme lists the schemes a source takes") {
  const auto r = run_source("carrier-pigeon://x");
  CAPTURE(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output,
                 "source 'carrier-pigeon://x': scheme 'carrier-pigeon' unknown; expected one of "
                 "tcp://, tcp-listen://, tls-connect://, tls-listen://, udp://, serial://, "
                 "file://, nats://"));
  CHECK_FALSE(contains(r.output, "pty"));  // a device link's
}

TEST_CASE("run checks a tls source's certificate files before it loads the model") {
  // The model does not exist either: the files' refusal must come first.
  const std::string none = "/nonexistent-eit-tls";
  const struct {
    std::string uri, said;
  } cases[] = {
      {fmt::format("tls-listen://127.0.0.1:0?cert={0}/server.pem&key={0}/server.key&ca={0}/ca.pem",
                   none),
       fmt::format("cert='{}/server.pem' cannot be read (No such file or directory)", none)},
      {fmt::format("tls-connect://127.0.0.1:1?ca={}/ca.pem", none),
       fmt::format("ca='{}/ca.pem' cannot be read (No such file or directory)", none)},
      {fmt::format("tls-connect://127.0.0.1:1?ca={0}/ca.pem&key={0}/d.key", none),
       "key= given without cert=; expected both"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.uri);
    const auto r = run_eitstream(
        fmt::format("run --model {}/model.h5 --source '{}' --frames 1 --quiet", none, c.uri));
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(contains(r.output, fmt::format("source '{}': {}", c.uri, c.said)));
    CHECK_FALSE(contains(r.output, "model.h5"));
  }
}

TEST_CASE("run checks a source URI's option values before it loads the model") {
  // The model does not exist: a value's refusal must come first, as the TLS files' does. Before,
  // the values were read only when the source opened, after the model had loaded.
  const struct {
    const char* uri;
    const char* said;
  } cases[] = {
      {"tcp-listen://127.0.0.1:0?idle=-1",
       "idle=-1 is out of range; expected seconds, 0 (never) to 3600"},
      {"udp://127.0.0.1:0?scale=0",
       "scale=0 is out of range; expected a finite number other than 0"},
      {"tcp://127.0.0.1:27099?rate=fast",
       "option rate='fast' is not a number; expected frames per second, above 0 up to 1e6"},
      {"serial:///dev/ttyNONE?format=ingest&bits=9", "bits=9 is out of range; expected 5..8"},
      {"file:///nonexistent.eitf?loop=2", "loop='2'; expected 0 or 1"},
      {"serial:///dev/ttyNONE?format=ingest&parity=even", "parity='even'; expected n, e or o"},
      {"file:///nonexistent.eitf?loop=true", "loop='true'; expected 0 or 1"},
      {"udp://127.0.0.1:0?format=openeit&complex=magnitude",
       "complex=magnitude has no effect with format=openeit"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.uri);
    const auto r = run_eitstream(fmt::format(
        "run --model /nonexistent-eit-model/model.h5 --source '{}' --frames 1 --quiet", c.uri));
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(contains(r.output, fmt::format("source '{}': {}", c.uri, c.said)));
    CHECK_FALSE(contains(r.output, "model.h5"));
  }
}
