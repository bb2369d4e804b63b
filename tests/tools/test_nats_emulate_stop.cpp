// `emulate --to nats://…` at its end waits (up to 5 s) for JetStream to store what it sent. When
// the server stalls (SIGSTOP) that wait runs long; a signal during it must end it at once, with
// the summary counting what was not stored, as a signal ends every other wait of emulate.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "cli_run.hpp"
#include "subprocess.hpp"

using eit::test::contains;
using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("a signal during emulate's wait for a stalled NATS server ends it at once") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=7", "--count", "30", "--fps", "50"});
  REQUIRE(device.wait_for_stdout("emulate: sending", 60s));
  server.pause();  // nothing is stored from here on: the end's wait cannot finish
  std::this_thread::sleep_for(1500ms);  // the 30 frames (0.6 s) are sent; the wait has begun
  const auto t0 = std::chrono::steady_clock::now();
  device.signal(SIGINT);
  const int status = device.wait(30s);
  const auto took = std::chrono::steady_clock::now() - t0;
  server.resume();
  INFO(device.out() << device.err());
  CHECK(status != -1);
  CHECK(contains(device.out(), "emulate: done: 30 frames sent"));
  CHECK(contains(device.out(), "not received when emulate stopped waiting at a signal"));
  // Old link: the JetStream wait could not be cut; it ran its whole 5 s (3.5 s after this signal).
  CHECK(took < 1500ms);
}

#endif  // libnats
