// How `eitstream worker` ends, against a real `nats-server -js`: SIGINT and SIGTERM give its bed
// back and print the summary (status 0); when the server stalls (SIGSTOP) that stop waits on
// JetStream, and a signal during the wait leaves at once, still with the summary.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <chrono>
#include <csignal>
#include <regex>
#include <string>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "cli_run.hpp"
#include "subprocess.hpp"
#include "worker_command.hpp"

using eit::test::contains;
using eit::test::leased_worker_command;
using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

// Sends 50 frames of bed `bed` through JetStream and waits until the worker has reconstructed
// them all: it then holds the bed.
// `total`: the frames the worker has reconstructed by then, all its beds together.
void feed_bed(const eit::test::NatsServer& server, Subprocess& worker, int bed, int total = 50) {
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=" + std::to_string(bed), "--count", "50",
                     "--fps", "100"});
  REQUIRE(device.wait(120s) == 0);
  REQUIRE(worker.wait_for_stderr("frames " + std::to_string(total) + ",", 60s));
}

}  // namespace

TEST_CASE("SIGINT and SIGTERM end worker with its bed given back and its summary and status 0") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  eit::test::WorkerModelDir models("eit-worker-stop-");
  int bed = 1;
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    Subprocess worker(leased_worker_command(server.url(), models, sig == SIGINT ? "wI" : "wT"));
    feed_bed(server, worker, bed++);
    worker.signal(sig);
    CHECK(worker.wait(30s) == 0);
    INFO(worker.out() << worker.err());
    CHECK(contains(worker.out(), "worker: beds held"));
    // (The second worker also takes the first one's bed, which nobody holds now.)
    CHECK(std::regex_search(worker.out(), std::regex(R"(released [1-9])")));
    CHECK_FALSE(contains(worker.out(), "left at a signal"));
  }
}

TEST_CASE("a signal while a worker waits on a stalled server leaves at once with its summary") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  eit::test::WorkerModelDir models("eit-worker-stop-");
  Subprocess worker(leased_worker_command(server.url(), models, "wS"));
  feed_bed(server, worker, 5);
  server.pause();
  worker.signal(SIGINT);
  // Giving the bed back asks JetStream, which answers nothing now: the worker says it waits.
  CHECK(worker.wait_for_stderr("worker: stopping: waiting", 10s));
  const auto t0 = std::chrono::steady_clock::now();
  worker.signal(SIGTERM);
  const int status = worker.wait(30s);
  const auto took = std::chrono::steady_clock::now() - t0;
  server.resume();
  INFO(worker.out() << worker.err());
  CHECK(status == 0);
  CHECK(contains(worker.out(), "frames 50,"));
  CHECK(contains(worker.out(), "left at a signal while stopping"));
  CHECK(took < 3s);  // a JetStream request alone would wait 5 s
}

TEST_CASE(
    "one signal on a stalled server ends a worker of three beds in one wait not one per bed") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  eit::test::WorkerModelDir models("eit-worker-stop-");
  Subprocess worker(leased_worker_command(server.url(), models, "w3"));
  for (int bed = 1; bed <= 3; ++bed) feed_bed(server, worker, bed, 50 * bed);
  server.pause();
  const auto t0 = std::chrono::steady_clock::now();
  worker.signal(SIGINT);
  // Each bed's resume point waits up to 5 s for a stalled server. One bed after another that
  // was 15.1 s here; the beds' stores now wait together: 5.1 s.
  const int status = worker.wait(60s);
  const auto took = std::chrono::steady_clock::now() - t0;
  server.resume();
  INFO(worker.out() << worker.err());
  CHECK(status == 0);
  CHECK(contains(worker.out(), "frames 150,"));
  CHECK(contains(worker.out(), "released 3"));
  CHECK(took < 10s);
}

#endif  // libnats
