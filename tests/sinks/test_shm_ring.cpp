// shm:// in one process: ordering, overruns counted exactly, attach before and after the
// publisher, set-up errors that name the value, stale rings, series end and publisher restart,
// and an allocation-free publish()/next() (counting_new.hpp).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>

#include "../pipeline/pipeline_test_support.hpp"
#include "counting_new.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/sinks/shm_layout.hpp"
#include "eit/sinks/shm_publisher.hpp"
#include "eit/sinks/shm_reader.hpp"
#include "shm_test_support.hpp"

using namespace eit::sinks;
using eit::test::PatternFrame;
using eit::test::RawRing;
using eit::test::shm_image_intact;
using eit::test::shm_test_uri;

namespace {

constexpr int64_t kMs = 1'000'000;

ShmPublisherOptions options(const std::string& uri, uint32_t slots) {
  ShmPublisherOptions o;
  o.uri = uri;
  o.slots = slots;
  o.series.stream = "shm-test";
  return o;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE(
    "shm: a reader gets every image in order, a stalled one is lapped and counts it exactly") {
  const auto model = eit::test::random_model(64);
  const std::string uri = shm_test_uri("lap");
  ShmPublisher pub(model, options(uri, 16));
  ShmReader keeping_up(uri), stalled(uri);
  PatternFrame f(64);
  const uint64_t n = 1000;
  for (uint64_t k = 0; k < n; ++k) {
    pub.publish(f.set(k));
    REQUIRE(keeping_up.next(100 * kMs) == ShmRead::kImage);
    CHECK(keeping_up.header().seq == k);
    CHECK(shm_image_intact(keeping_up.header(), keeping_up.payload()));
  }
  CHECK(keeping_up.counts().overruns == 0);
  CHECK(pub.stats().sent == n);
  CHECK(pub.stats().dropped == 0);
  // The stalled reader wakes up now: lapped, it skips to the newest image and counts the rest.
  uint64_t got = 0, last = 0;
  while (stalled.next(0) == ShmRead::kImage) {
    CHECK(shm_image_intact(stalled.header(), stalled.payload()));
    if (got > 0) CHECK(stalled.header().seq == last + 1);
    last = stalled.header().seq;
    ++got;
  }
  CHECK(last == n - 1);
  CHECK(got == 1);
  CHECK(stalled.counts().images == got);
  CHECK(stalled.counts().overruns == n - got);
}

TEST_CASE(
    "shm: the series end is seen after the last image, and a restarted publisher is noticed") {
  const auto model = eit::test::random_model(64);
  const std::string uri = shm_test_uri("restart");
  PatternFrame f(64);
  auto first = std::make_unique<ShmPublisher>(model, options(uri, 8));
  ShmReader reader(uri);
  CHECK(reader.series_id() == first->series_id());
  CHECK(reader.series_json().find("\"type\":\"series\"") != std::string::npos);
  for (uint64_t k = 0; k < 3; ++k) first->publish(f.set(k));
  first->end();
  for (uint64_t k = 0; k < 3; ++k) {
    REQUIRE(reader.next(10 * kMs) == ShmRead::kImage);
    CHECK(reader.header().seq == k);
  }
  CHECK(reader.next(10 * kMs) == ShmRead::kEnded);
  const uint64_t old_id = first->series_id();
  first.reset();
  ShmPublisher second(model, options(uri, 8));
  CHECK(second.replaced_stale().empty());  // the first unlinked its name when it went
  CHECK(reader.next(10 * kMs) == ShmRead::kRestarted);
  ShmReader again(uri);
  CHECK(again.series_id() == second.series_id());
  CHECK(again.series_id() != old_id);
}

TEST_CASE(
    "shm: attach before the publisher exists fails naming the ring, attach_when_ready waits") {
  const auto model = eit::test::random_model(64);
  const std::string uri = shm_test_uri("attach");
  const std::string err = error_of([&] { ShmReader r(uri); });
  CHECK(err.find(uri) != std::string::npos);
  CHECK(err.find("no such ring") != std::string::npos);
  auto waiting =
      std::async(std::launch::async, [&] { return ShmReader::attach_when_ready(uri, 5000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ShmPublisher pub(model, options(uri, 8));
  auto reader = waiting.get();
  PatternFrame f(64);
  pub.publish(f.set(42));
  REQUIRE(reader->next(100 * kMs) == ShmRead::kImage);
  CHECK(reader->header().seq == 42);
  CHECK(reader->header().series_id == pub.series_id());
}

TEST_CASE("shm: set-up errors name the value: bad name, wrong magic, version, size, a live name") {
  const auto model = eit::test::random_model(64);
  CHECK(error_of([&] { ShmReader r("shm://a/b"); }).find("'a/b'") != std::string::npos);
  CHECK(error_of([&] { ShmPublisher p(model, options("shm://", 8)); }).find("shm name ''") !=
        std::string::npos);
  const std::string uri = shm_test_uri("errors");
  ShmPublisher pub(model, options(uri, 8));
  CHECK(error_of([&] {
          ShmPublisher p(model, options(uri, 8));
        }).find(fmt::format("in use by a running publisher (process {})", getpid())) !=
        std::string::npos);
  RawRing raw(uri);
  raw->version = 99;
  CHECK(error_of([&] {
          ShmReader r(uri);
        }).find("ring layout version 99, this reader reads version 1") != std::string::npos);
  raw->version = kShmLayoutVersion;
  raw->total_bytes += 64;
  CHECK(error_of([&] { ShmReader r(uri); }).find("size mismatch") != std::string::npos);
  raw->total_bytes -= 64;
  raw->magic.store(0x12345678);
  CHECK(error_of([&] { ShmReader r(uri); }).find("magic 0x12345678") != std::string::npos);
  raw->magic.store(kShmMagic);
  ShmReader fine(uri);
  CHECK(fine.slot_count() == 8);
}

TEST_CASE("shm: a ring left by a publisher that died is replaced, and the publisher says so") {
  const auto model = eit::test::random_model(64);
  const std::string uri = shm_test_uri("stale");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ShmPublisher dying(model, options(uri, 8));
    _exit(0);  // no destructor: the ring stays behind, unlinked by nobody
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  ShmPublisher pub(model, options(uri, 8));
  CHECK(pub.replaced_stale() ==
        fmt::format("replaced a stale ring left by process {} (no longer running)", child));
  ShmReader reader(uri);
  CHECK(reader.series_id() == pub.series_id());

  // An empty object (its creator died before sizing it) is replaced too.
  const std::string empty_uri = shm_test_uri("empty");
  const std::string object = shm_object_name(shm_name_of(empty_uri));
  const int fd = shm_open(object.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  close(fd);
  CHECK(error_of([&] { ShmReader r(empty_uri); }).find("smaller than the 256-byte ring header") !=
        std::string::npos);
  ShmPublisher over_empty(model, options(empty_uri, 8));
  CHECK(over_empty.replaced_stale().starts_with("replaced an object that is not a ring"));
}

TEST_CASE("shm: publish() and next() allocate nothing per image") {
  const auto model = eit::test::random_model(1024);
  const std::string uri = shm_test_uri("alloc");
  ShmPublisher pub(model, options(uri, 32));
  ShmReader reader(uri, {ShmWaitMode::kSpin});
  PatternFrame f(1024);
  f.set(0);
  const uint64_t before = eit::test::t_allocations;
  uint64_t read = 0;
  for (uint64_t k = 0; k < 2000; ++k) {
    f.slot.seq = k;
    pub.publish(f.slot);
    if (k % 40 == 0)  // reads in bursts, lapped each time (32 slots): that path counts too
      while (reader.next(0) == ShmRead::kImage) ++read;
  }
  CHECK(eit::test::t_allocations - before == 0);
  CHECK(read > 0);
  CHECK(reader.counts().overruns > 0);
  CHECK(reader.counts().images + reader.counts().overruns <= 2000);
}

TEST_CASE(
    "shm: a balanced reader with CPUs to spare polls for paced images, a spinning one never") {
  // 100 images/s from a publisher thread (publish stamps = the real publish time); the reader
  // predicts each next one from the publish stamps (pipeline::ArrivalWindow) and polls around it.
  const auto model = eit::test::random_model(64);
  const std::string uri = shm_test_uri("paced");
  ShmPublisher pub(model, options(uri, 64));
  auto read_paced = [&](ShmWaitMode mode) {
    ShmReaderOptions ro;
    ro.wait = mode;
    ShmReader reader(uri, ro);
    const uint64_t n = 30;
    std::thread publisher([&] {
      PatternFrame f(64);
      const int64_t t0 = eit::pipeline::now_ns() + 10 * kMs;
      for (uint64_t k = 0; k < n; ++k) {
        const int64_t due = t0 + static_cast<int64_t>(k) * 10 * kMs;
        std::this_thread::sleep_for(std::chrono::nanoseconds(due - eit::pipeline::now_ns()));
        auto& slot = f.set(k);
        slot.stamp(eit::pipeline::Stage::kPublished, eit::pipeline::now_ns());
        pub.publish(slot);
      }
    });
    for (uint64_t k = 0; k < n; ++k) {
      REQUIRE(reader.next(1000 * kMs) == ShmRead::kImage);
      CHECK(reader.header().seq == k);
    }
    publisher.join();
    return reader.counts();
  };
  const ShmReaderCounts balanced = read_paced(ShmWaitMode::kBalanced);
  MESSAGE("balanced reader: " << balanced.met_polling << " of 30 images met polling, "
                              << balanced.wakeups << " futex wake-ups");
  if (std::thread::hardware_concurrency() >= ShmReader::kPollAheadMinCpus) {
    // A quiet machine meets most; a loaded one misses windows (late timed wake-ups): this checks
    // the wiring, not how often it wins.
    CHECK(balanced.met_polling >= 1);
    CHECK(balanced.met_polling <= 30);
  } else {
    CHECK(balanced.met_polling == 0);  // too few CPUs: the reader sleeps until woken
  }
  CHECK(read_paced(ShmWaitMode::kSpin).met_polling == 0);
}
