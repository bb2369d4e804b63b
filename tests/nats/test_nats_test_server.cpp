// The tests' own nats-server helper: a server counts as started only when the one on its port
// greets with its name, so a test never goes on with another test's server that took the port.
#include <doctest/doctest.h>

#include "nats_server.hpp"

TEST_CASE("the test nats-server is ready only when its port greets with its own name") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  CHECK(eit::test::nats_greets_as(server.port(), server.name()));
  CHECK_FALSE(eit::test::nats_greets_as(server.port(), "another-tests-server"));
  server.kill_now();
  CHECK_FALSE(eit::test::nats_greets_as(server.port(), server.name()));  // nothing listens
  server.start();  // the same port and store again
  CHECK(server.available());
  CHECK(eit::test::nats_greets_as(server.port(), server.name()));
}
