// `eitstream bench --cpus` (eit/bench/cpu_pinning.hpp): which CPU each of a run's threads gets,
// auto's choice and refusal, and pinning a thread — checked from inside it with
// sched_getaffinity where the process may use at least 2 CPUs — reported, never fatal, when the
// CPU is not the process's to use; and the report of a ZeroMQ I/O thread's placement.
#include <doctest/doctest.h>

#include <sched.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "eit/bench/cpu_pinning.hpp"
#include "eit/sinks/zmq_io_placement.hpp"

using eit::bench::allowed_cpus;
using eit::bench::assign_cpus;
using eit::bench::CpuRequest;
using eit::bench::ThreadCpu;
using eit::bench::threads_to_pin;

namespace {

// The last CPU this process may use; -1 when it may use only one.
int last_of_several_cpus() {
  const std::vector<int> cpus = allowed_cpus();
  return cpus.size() >= 2 ? cpus.back() : -1;
}

std::vector<int> cpus_of(const std::vector<ThreadCpu>& t) {
  std::vector<int> out;
  for (const auto& x : t) out.push_back(x.cpu);
  return out;
}

}  // namespace

TEST_CASE("a run pins source and subscriber first, then the reconstructor and sink it has") {
  CHECK(threads_to_pin(false, false) == std::vector<std::string>{"source", "subscriber"});
  CHECK(threads_to_pin(true, false) ==
        std::vector<std::string>{"source", "subscriber", "reconstructor"});
  CHECK(threads_to_pin(false, true) == std::vector<std::string>{"source", "subscriber", "sink 0"});
  CHECK(threads_to_pin(true, true).size() == 4);
}

TEST_CASE("--cpus auto takes distinct allowed CPUs, without CPU 0 when there is room") {
  CpuRequest a;
  a.automatic = true;
  const auto four = threads_to_pin(true, true);
  CHECK(cpus_of(assign_cpus(a, four, {0, 1, 2, 3, 4, 5})) == std::vector<int>{1, 2, 3, 4});
  CHECK(cpus_of(assign_cpus(a, four, {0, 1, 2, 3})) == std::vector<int>{0, 1, 2, 3});  // no room
  CHECK(cpus_of(assign_cpus(a, four, {4, 6, 8, 10, 12})) == std::vector<int>{4, 6, 8, 10});
  const auto pinned = assign_cpus(a, four, {0, 1, 2, 3, 4});
  CHECK(pinned[1].thread == "subscriber");
  CHECK(pinned[1].cpu == 2);
  CHECK(pinned[1].error == ThreadCpu::kNotReported);  // planned, not yet tried
  CHECK(a.text() == "auto");
}

TEST_CASE("--cpus auto refuses a run with more threads than allowed CPUs, naming both") {
  CpuRequest a;
  a.automatic = true;
  CHECK_THROWS_WITH_AS(
      assign_cpus(a, threads_to_pin(true, false), {0, 1}),
      "--cpus auto: this run has 3 threads to pin (source, subscriber, reconstructor) but the "
      "process may run on 2 CPU(s) (0,1); give --cpus LIST to share CPUs, or leave --cpus out",
      std::invalid_argument);
  CHECK(assign_cpus(a, threads_to_pin(false, false), {0, 1}).size() == 2);
}

TEST_CASE("a given --cpus list is taken in thread order, round robin when shorter, none: none") {
  CpuRequest l;
  l.list = {5, 3};
  CHECK(cpus_of(assign_cpus(l, threads_to_pin(true, true), {})) == std::vector<int>{5, 3, 5, 3});
  l.list = {7, 6, 5, 4, 3};
  CHECK(cpus_of(assign_cpus(l, threads_to_pin(false, false), {})) == std::vector<int>{7, 6});
  CHECK(l.text() == "7,6,5,4,3");
  CHECK(assign_cpus(CpuRequest{}, threads_to_pin(true, true), {0, 1, 2, 3}).empty());
  CHECK_FALSE(CpuRequest{}.any());
  CHECK(eit::bench::cpu_of(assign_cpus(l, threads_to_pin(false, false), {}), "subscriber") == 6);
  CHECK(eit::bench::cpu_of({}, "source") == -1);
}

TEST_CASE("a pinned thread runs only on its CPU, one it may not use is reported, not fatal") {
  const std::vector<int> allowed = allowed_cpus();
  REQUIRE_FALSE(allowed.empty());
  if (allowed.size() < 2) {
    MESSAGE("SKIPPED: the process may use only one CPU");
    return;
  }
  const int cpu = allowed[1];
  int error = -1;
  std::vector<int> seen;
  std::thread([&] {
    error = eit::bench::pin_this_thread(cpu);
    seen = allowed_cpus();
  }).join();
  CHECK(error == 0);
  CHECK(seen == std::vector<int>{cpu});
  CHECK(allowed_cpus() == allowed);  // other threads keep theirs

  std::thread([&] {
    error = eit::bench::pin_this_thread(CPU_SETSIZE - 1);  // no test machine has CPU 1023
    seen = allowed_cpus();
  }).join();
  CHECK(error == EINVAL);
  CHECK(seen == allowed);
  CHECK(eit::bench::pin_this_thread(-1) == EINVAL);
  ThreadCpu t{"source", 1023, EINVAL};
  CHECK(t.outcome() == "not pinned: Invalid argument");
  CHECK(eit::bench::describe_cpus({t, {"subscriber", cpu, 0}}, "none") ==
        "source → CPU 1023 not pinned: Invalid argument, subscriber → CPU " + std::to_string(cpu) +
            " pinned");
  CHECK(eit::bench::describe_cpus({}, "none") == "none");
}

TEST_CASE("a scoped pin gives the thread back the CPUs it had") {
  const std::vector<int> allowed = allowed_cpus();
  if (allowed.size() < 2) {
    MESSAGE("SKIPPED: the process may use only one CPU");
    return;
  }
  std::vector<int> inside, after;
  int error = -1;
  std::thread([&] {
    {
      const eit::bench::ScopedThreadPin pin(allowed.back());
      error = pin.error();
      inside = allowed_cpus();
    }
    after = allowed_cpus();
  }).join();
  CHECK(error == 0);
  CHECK(inside == std::vector<int>{allowed.back()});
  CHECK(after == allowed);
  CHECK(eit::bench::ScopedThreadPin(-1).error() == ThreadCpu::kNotReported);  // nothing asked
}

TEST_CASE("the bench reports a placed I/O thread as pinned, a missing one as not found") {
  const int cpu = last_of_several_cpus();
  if (cpu < 0) {
    MESSAGE("skipped: the process may use only one CPU");
    return;
  }
  zmq::context_t context(1);
  const int tag = eit::sinks::place_io_threads(context, cpu);
  zmq::socket_t socket(context, zmq::socket_type::pub);  // starts the context's threads

  const eit::bench::ThreadCpu found = eit::bench::io_thread_placement("zmq io (test)", 0, tag, cpu);
  CHECK(found.cpu == cpu);
  CHECK(found.pinned());

  // Another tag: no such thread in this process.
  const eit::bench::ThreadCpu missing =
      eit::bench::io_thread_placement("zmq io (none)", 0, tag + 1, cpu);
  CHECK(missing.error == ESRCH);
  CHECK_FALSE(missing.pinned());

  // The thread is there but on another CPU than asked: EINVAL.
  const int other = eit::bench::allowed_cpus().front();
  const eit::bench::ThreadCpu elsewhere =
      eit::bench::io_thread_placement("zmq io (test)", 0, tag, other);
  CHECK(elsewhere.error == EINVAL);
}
