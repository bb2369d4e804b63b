// The HDF5 recorder behind a stalled disk, in a real pipeline beside the real ZeroMQ PUB
// publisher. The disk is stalled through the recorder's own write path
// (Hdf5RecorderOptions::before_write runs right before each chunk goes to the file): a live run
// keeps publishing every frame while the recorder's queue drops, counted, and what reaches the
// file says what it missed; a lossless run waits for the disk and then loses nothing.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "../pipeline/pipeline_test_support.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/paced_source.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "h5_read_support.hpp"

using namespace eit;
using eit::test::random_frames;
using eit::test::random_model;
using eit::test::VectorSource;
namespace h5r = eit::test::h5read;
namespace fs = std::filesystem;

namespace {

// A disk that stops taking writes until opened: every chunk write waits in the hook.
class StalledDisk {
 public:
  void wait_open() {
    std::unique_lock lock(mutex_);
    ++writes_waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  bool wait_first_write(std::chrono::seconds limit) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return writes_waiting_ > 0; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  int writes_waiting_ = 0;
};

fs::path temp_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_slowdisk_{}", ::getpid());
  fs::create_directories(dir);
  return dir / name;
}

template <class Pred>
bool wait_for(Pred pred, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

sinks::ZmqPublisherOptions pub_options() {
  sinks::ZmqPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.linger_ms = 0;
  return o;
}

}  // namespace

TEST_CASE("live run: a stalled disk costs the recorder frames (counted), never the PUB") {
  const recon::Model model = random_model(256);
  const auto frames = random_frames(model, 4000);
  VectorSource inner(frames);
  pipeline::PacedSource source(inner, {2000, 1});  // paced: the CPU keeps up on a loaded machine
  sinks::ZmqPublisher pub(model, pub_options());
  StalledDisk disk;
  const fs::path path = temp_file("live.h5");
  sinks::Hdf5RecorderOptions ro;
  ro.chunk_frames = 16;
  ro.drop_when_behind = true;  // what `run --policy live --record` sets
  ro.before_write = [&] { disk.wait_open(); };
  sinks::Hdf5ImageRecorder recorder(path, model, ro);
  CHECK(recorder.policy() == pipeline::SinkPolicy::kDropNewest);

  pipeline::PipelineOptions po;
  po.policy = pipeline::Policy::kLive;
  po.queue_capacity = 256;
  po.sink_queue_capacity = 256;  // ~128 ms of frames: room for this loaded machine's hiccups
  pipeline::Pipeline pipe(model, source, std::make_unique<pipeline::CpuReconstructor>(model),
                          {&pub, &recorder}, po);
  pipe.start();
  REQUIRE(disk.wait_first_write(std::chrono::seconds(60)));
  // Had the recorder held up the reconstructor, the PUB could have got no more than the
  // recorder's queue and chunk hold (272 frames) before the source dropped everything else; the
  // stream goes on instead while the recorder sits in its first chunk write.
  const uint64_t enough = 4 * (po.sink_queue_capacity + ro.chunk_frames);
  CHECK(wait_for([&] { return pipe.stats().sink_queues[0].delivered > enough; }));
  const auto during = pipe.stats();
  CHECK(during.sink_queues[1].delivered <= ro.chunk_frames);
  CHECK(during.sink_queues[1].queue.dropped > 0);
  CHECK(inner.delivered() < frames.size());  // the disk recovers before the stream ends
  disk.open();
  pipe.wait();

  const auto st = pipe.stats();
  const auto& q_pub = st.sink_queues[0];
  const auto& q_rec = st.sink_queues[1];
  CHECK(q_pub.name == "zmq");
  CHECK(q_rec.name == "hdf5-images");
  CHECK_FALSE(q_rec.blocks);
  // The recorder's losses are its own and counted. (The PUB and the source may lose some too when
  // this loaded machine deschedules their threads: live policy, counted; not asserted here.)
  CHECK(q_rec.queue.dropped > 0);
  CHECK(q_pub.delivered + q_pub.queue.dropped == st.frames_out);
  CHECK(pub.stats().sent == q_pub.delivered);
  // Every frame handed on is either in the file or counted as dropped by the recorder's queue.
  const auto rs = recorder.stats();
  CHECK(rs.errors == 0);
  CHECK(rs.sent == q_rec.delivered);
  CHECK(rs.sent + q_rec.queue.dropped == st.frames_out);

  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const auto seq = h5r::dataset<uint64_t>(f, "seq");
  const auto dropped_before = h5r::dataset<uint32_t>(f, "dropped_before");
  H5Fclose(f);
  REQUIRE(seq.size() == rs.sent);
  // The file says what it missed: each row's dropped_before is the gap in seq before it.
  uint64_t previous = 0, gaps = 0;
  for (size_t i = 0; i < seq.size(); ++i) {
    const uint64_t gap = i == 0 ? seq[i] : seq[i] - previous - 1;
    REQUIRE(dropped_before[i] == gap);
    gaps += gap;
    previous = seq[i];
  }
  CHECK(gaps > 0);
  fs::remove(path);
}

TEST_CASE("lossless run: a stalled disk makes the whole run wait, then nothing is lost") {
  const recon::Model model = random_model(256);
  const auto frames = random_frames(model, 1500);
  VectorSource source(frames);  // unpaced: without the wait it would be read in milliseconds
  sinks::ZmqPublisher pub(model, pub_options());
  StalledDisk disk;
  const fs::path path = temp_file("lossless.h5");
  sinks::Hdf5RecorderOptions ro;
  ro.chunk_frames = 16;
  ro.before_write = [&] { disk.wait_open(); };
  sinks::Hdf5ImageRecorder recorder(path, model, ro);
  CHECK(recorder.policy() == pipeline::SinkPolicy::kBlock);

  pipeline::PipelineOptions po;
  po.policy = pipeline::Policy::kLossless;
  po.queue_capacity = 64;
  po.sink_queue_capacity = 32;
  pipeline::Pipeline pipe(model, source, std::make_unique<pipeline::CpuReconstructor>(model),
                          {&pub, &recorder}, po);
  pipe.start();
  REQUIRE(disk.wait_first_write(std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // room to run ahead, if it could
  // The run waits for the disk: the source cannot have read more than the pool holds.
  CHECK(source.delivered() <= pipe.pool_size() + ro.chunk_frames);
  CHECK(source.delivered() < frames.size());
  disk.open();
  pipe.wait();

  const auto st = pipe.stats();
  CHECK(st.frames_out == frames.size());
  CHECK(st.input.dropped == 0);
  CHECK(st.sink_dropped() == 0);
  CHECK(st.sink_queues[0].delivered == frames.size());
  CHECK(recorder.stats().sent == frames.size());
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const auto seq = h5r::dataset<uint64_t>(f, "seq");
  H5Fclose(f);
  REQUIRE(seq.size() == frames.size());
  for (size_t i = 0; i < seq.size(); ++i) REQUIRE(seq[i] == i);
  fs::remove(path);
}
