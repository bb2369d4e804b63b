// shm:// across a process boundary (fork): a reader that sleeps on the shared futex receives
// every image bit-exact and in order; a spinning reader facing a publisher that overwrites a
// 2-slot ring as fast as it can never returns a torn image, and accounts for every image.
#include <doctest/doctest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <thread>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/sinks/shm_publisher.hpp"
#include "eit/sinks/shm_reader.hpp"
#include "shm_test_support.hpp"

using namespace eit::sinks;
using eit::test::PatternFrame;
using eit::test::shm_image_intact;
using eit::test::shm_test_uri;

namespace {

// The first two CPUs this process may run on, or {-1, -1} on a single CPU.
std::pair<int, int> two_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {-1, -1};
  int found[2] = {-1, -1}, n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < 2; ++c)
    if (CPU_ISSET(c, &set)) found[n++] = c;
  return n == 2 ? std::pair{found[0], found[1]} : std::pair{-1, -1};
}

void pin_to(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)sched_setaffinity(0, sizeof set, &set);
}

// Pins this thread to one CPU until destroyed (then restores what it had).
struct CpuPin {
  cpu_set_t saved;
  explicit CpuPin(int cpu) {
    CPU_ZERO(&saved);
    (void)sched_getaffinity(0, sizeof saved, &saved);
    pin_to(cpu);
  }
  ~CpuPin() { (void)sched_setaffinity(0, sizeof saved, &saved); }
};

struct ChildReport {
  uint64_t images = 0, out_of_order = 0, damaged = 0, overruns = 0, torn = 0, ended = 0,
           wakeups = 0;
};

// Forks a reader of `uri` that reads until the series ends and reports through a pipe.
class ReaderProcess {
 public:
  // cpu ≥ 0: the child runs on that CPU only.
  ReaderProcess(const std::string& uri, ShmWaitMode mode, int cpu = -1) {
    int to_parent[2];
    REQUIRE(pipe(to_parent) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      pin_to(cpu);
      close(to_parent[0]);
      _exit(run(uri, mode, to_parent[1]));
    }
    close(to_parent[1]);
    fd_ = to_parent[0];
    char ready = 0;
    REQUIRE(read(fd_, &ready, 1) == 1);
    REQUIRE(ready == 'r');
  }
  ChildReport finish() {
    ChildReport r;
    const ssize_t n = read(fd_, &r, sizeof r);
    close(fd_);
    int status = 0;
    waitpid(pid_, &status, 0);
    REQUIRE(n == static_cast<ssize_t>(sizeof r));
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return r;
  }

 private:
  static int run(const std::string& uri, ShmWaitMode mode, int fd) {
    try {
      ShmReader reader(uri, {mode});
      if (write(fd, "r", 1) != 1) return 2;
      ChildReport r;
      uint64_t last = 0;
      while (true) {
        const ShmRead got = reader.next(5'000'000'000);
        if (got == ShmRead::kEnded) {
          r.ended = 1;
          break;
        }
        if (got != ShmRead::kImage) break;
        if (r.images > 0 && reader.header().seq <= last) ++r.out_of_order;
        if (!shm_image_intact(reader.header(), reader.payload())) ++r.damaged;
        last = reader.header().seq;
        ++r.images;
      }
      r.overruns = reader.counts().overruns;
      r.torn = reader.counts().torn;
      r.wakeups = reader.counts().wakeups;
      return write(fd, &r, sizeof r) == sizeof r ? 0 : 3;
    } catch (...) {
      return 4;
    }
  }
  pid_t pid_ = -1;
  int fd_ = -1;
};

ShmPublisherOptions options(const std::string& uri, uint32_t slots) {
  ShmPublisherOptions o;
  o.uri = uri;
  o.slots = slots;
  return o;
}

}  // namespace

TEST_CASE("shm: a reader process asleep on the shared futex gets every image bit-exact, in order") {
  const auto model = eit::test::random_model(1024);
  const std::string uri = shm_test_uri("process");
  ShmPublisher pub(model, options(uri, 512));
  ReaderProcess child(uri, ShmWaitMode::kBalanced);
  PatternFrame f(1024);
  const uint64_t n = 400;
  for (uint64_t k = 0; k < n; ++k) {
    pub.publish(f.set(k));
    // Pauses far longer than the reader's spin: it goes to sleep and only the futex wakes it.
    if (k % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pub.end();
  const ChildReport r = child.finish();
  CHECK(r.images == n);
  CHECK(r.out_of_order == 0);
  CHECK(r.damaged == 0);
  CHECK(r.overruns == 0);
  CHECK(r.ended == 1);
  // The publisher's wake crossed the process boundary (a private futex never would).
  CHECK(r.wakeups > 0);
}

TEST_CASE("shm: a torn image is never returned while the publisher laps a 2-slot ring") {
  // 256 KiB images: a copy takes long enough to overlap the publisher's even on a loaded machine.
  const size_t pixels = 65536;
  const auto model = eit::test::random_model(static_cast<int>(pixels));
  const std::string uri = shm_test_uri("torn");
  ShmPublisher pub(model, options(uri, 2));
  // Publisher and reader on different CPUs: forked onto the parent's CPU, the reader would mostly
  // run while the publisher waits for that CPU, never at the same moment.
  const auto [writer_cpu, reader_cpu] = two_cpus();
  ReaderProcess child(uri, ShmWaitMode::kSpin, reader_cpu);
  CpuPin pin(writer_cpu);
  PatternFrame f(pixels);
  // At least 2,000 images and 300 ms, so that the reader (a process scheduled on its own) copies
  // many slots while they are being overwritten.
  uint64_t n = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (n < 2'000 || std::chrono::steady_clock::now() < until) pub.publish(f.set(n++));
  pub.end();
  const ChildReport r = child.finish();
  MESSAGE("reader: " << r.images << " images, " << r.overruns << " lapped, " << r.torn
                     << " torn copies discarded");
  CHECK(r.images > 0);
  CHECK(r.damaged == 0);
  CHECK(r.out_of_order == 0);
  CHECK(r.images + r.overruns == n);  // every image either read or counted as missed
  CHECK(r.ended == 1);
}

TEST_CASE("shm: a reader killed while asleep leaves no sleeper behind for the publisher to wake") {
  const auto model = eit::test::random_model(64);
  const std::string uri = shm_test_uri("killed-asleep");
  ShmPublisher publisher(model, options(uri, 8));
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      ShmReader reader(uri, {ShmWaitMode::kBalanced});
      (void)reader.next(60'000'000'000);  // sleeps on the futex until killed
    } catch (...) {
    }
    _exit(0);
  }
  eit::test::RawRing ring(uri);
  bool asleep = false;
  for (int waited = 0; waited < 5000 && !asleep; waited += 5) {
    asleep = ring->waiters.load() != 0;
    if (!asleep) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(asleep);
  REQUIRE(kill(child, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  PatternFrame frames(64);
  for (uint64_t seq = 0; seq < 3; ++seq) publisher.publish(frames.set(seq));
  // Old ring: the dead reader's count stayed (98 after 100 killed readers in the resource audit)
  // and every later image cost the publisher a FUTEX_WAKE system call.
  CHECK(ring->waiters.load() == 0);
}
