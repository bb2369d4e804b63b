// The stage threads carry names (`top -H`, `ps -L`, perf): an operator reading a host's CPU use
// tells the source, the reconstructor and each sink apart, where every thread was `eitstream`.
#include <doctest/doctest.h>
#include <pthread.h>

#include <mutex>
#include <string>

#include "eit/pipeline/pipeline.hpp"
#include "eit/pipeline/thread_pin.hpp"
#include "pipeline_test_support.hpp"

using namespace eit::pipeline;
using eit::test::random_frames;
using eit::test::random_model;

namespace {

std::string this_thread_name() {
  char buf[16] = {};
  pthread_getname_np(pthread_self(), buf, sizeof buf);
  return buf;
}

// Remembers the name of the thread each side ran on (the first call's: set-up only).
struct SeenNames {
  std::mutex mutex;
  std::string source, backend, sink;
  static void note(std::mutex& m, std::string& where) {
    std::lock_guard lock(m);
    if (where.empty()) where = this_thread_name();
  }
};

class NamingSource final : public Source {
 public:
  NamingSource(Source& inner, SeenNames& seen) : inner_(inner), seen_(seen) {}
  std::string describe() const override { return inner_.describe(); }
  size_t n_values() const noexcept override { return inner_.n_values(); }
  ReadStatus read(FrameSlot& slot, std::chrono::milliseconds timeout) override {
    SeenNames::note(seen_.mutex, seen_.source);
    return inner_.read(slot, timeout);
  }
  void stop() noexcept override { inner_.stop(); }
  SourceStats stats() const override { return inner_.stats(); }

 private:
  Source& inner_;
  SeenNames& seen_;
};

class NamingBackend final : public eit::test::ForwardingCpuBackend {
 public:
  NamingBackend(const eit::recon::Model& m, SeenNames& seen)
      : ForwardingCpuBackend(m, "naming"), seen_(seen) {}
  bool submit(std::span<FrameSlot* const> batch) override {
    SeenNames::note(seen_.mutex, seen_.backend);
    return ForwardingCpuBackend::submit(batch);
  }

 private:
  SeenNames& seen_;
};

class NamingSink final : public ImageSink {
 public:
  explicit NamingSink(SeenNames& seen) : seen_(seen) {}
  std::string_view name() const noexcept override { return "zmq"; }
  SinkPolicy policy() const noexcept override { return SinkPolicy::kDropNewest; }
  void publish(const FrameSlot&) noexcept override {
    SeenNames::note(seen_.mutex, seen_.sink);
    ++published_;
  }
  SinkStats stats() const noexcept override { return {published_.load(), 0, 0}; }

 private:
  SeenNames& seen_;
  std::atomic<uint64_t> published_{0};
};

// Streams 20 frames through `layout`; the names each side ran under.
void stream_and_note_names(StageLayout layout, SeenNames& seen) {
  const auto m = random_model(64);
  eit::test::VectorSource frames(random_frames(m, 20));
  NamingSource source(frames, seen);
  NamingSink sink(seen);
  PipelineOptions o;
  o.stages = layout;
  Pipeline p(m, source, std::make_unique<NamingBackend>(m, seen), {&sink}, o);
  p.start();
  REQUIRE(eit::test::wait_finished(p));
}

}  // namespace

TEST_CASE("the pipelined stage threads are named after their stage and the sink") {
  SeenNames seen;
  stream_and_note_names(StageLayout::kPipelined, seen);
  CHECK(seen.source == "eit-source");
  CHECK(seen.backend == "eit-reconstruct");
  CHECK(seen.sink == "eit-sink-zmq");
}

TEST_CASE("the run-to-completion thread is named eit-stream") {
  SeenNames seen;
  stream_and_note_names(StageLayout::kRunToCompletion, seen);
  CHECK(seen.source == "eit-stream");
  CHECK(seen.backend == "eit-stream");
}

TEST_CASE("a thread name is cut to the kernel's 15 characters") {
  std::string seen;
  std::thread([&] {
    name_this_thread("eit-sink-a-very-long-sink-name");
    seen = this_thread_name();
  }).join();
  CHECK(seen == "eit-sink-a-very");
}
