// A worker frozen (SIGSTOP) past its lease while another takes its bed over, then woken
// (SIGCONT), against a real `nats-server -js`. The bed's resume point (EIT_BEDS r.<site>.<bed>)
// must never go back: a write of the older point the frozen worker still held would make the next
// takeover reconstruct those frames again (before: in 8 of 10 runs, e.g. 408 then 196). The woken
// worker must give the bed up and say so, every frame must have its image, and no image may be
// stored twice or out of order.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <atomic>
#include <filesystem>
#include <mutex>
#include <regex>
#include <thread>
#include <vector>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "eit/sinks/image_header.hpp"
#include "subprocess.hpp"
#include "worker_model_dir.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

struct ModelDir : eit::test::WorkerModelDir {
  ModelDir() : WorkerModelDir("eit-worker-fence-") {}
};

// Every value key r.icu.1 of EIT_BEDS takes while it runs (its acknowledged-through sequence).
struct ResumeWatch {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  kvStore* kv = nullptr;
  kvWatcher* watcher = nullptr;
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::vector<uint64_t> values;
  std::thread thread;

  explicit ResumeWatch(const std::string& url) {
    REQUIRE(natsConnection_ConnectTo(&nc, url.c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    for (int i = 0; i < 200 && js_KeyValue(&kv, js, "EIT_BEDS") != NATS_OK; ++i)
      std::this_thread::sleep_for(50ms);  // made by the first worker
    REQUIRE(kv != nullptr);
    REQUIRE(kvStore_Watch(&watcher, kv, "r.icu.1", nullptr) == NATS_OK);
    thread = std::thread([this] {
      while (!stop.load()) {
        kvEntry* e = nullptr;
        if (kvWatcher_Next(&e, watcher, 100) != NATS_OK || !e) continue;
        if (kvEntry_Operation(e) == kvOp_Put && kvEntry_ValueString(e)) {
          std::lock_guard lock(mutex);
          values.push_back(std::stoull(kvEntry_ValueString(e)));
        }
        kvEntry_Destroy(e);
      }
    });
  }
  ~ResumeWatch() {
    stop.store(true);
    thread.join();
    kvWatcher_Destroy(watcher);
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
  std::vector<uint64_t> seen() {
    std::lock_guard lock(mutex);
    return values;
  }
};

std::vector<std::string> worker(const eit::test::NatsServer& server, const ModelDir& models,
                                const char* id) {
  return {EITSTREAM_BIN,
          "worker",
          server.url() + "?site=icu",
          "--model-dir",
          models.path.string(),
          "--id",
          id,
          "--lease",
          "1",
          "--status-interval",
          "0.2"};
}

uint64_t count_of(const std::string& text, const char* pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? std::stoull(m[1]) : ~uint64_t{0};
}

}  // namespace

TEST_CASE(
    "a worker frozen past a takeover of its bed gives the bed up when it wakes and the bed's "
    "resume point never goes back and every frame has one image") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  ModelDir models;
  constexpr int kFrames = 800;
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=1", "--count", std::to_string(kFrames), "--fps",
                     "100"});
  Subprocess w1(worker(server, models, "w1"));
  REQUIRE(w1.wait_for_stderr("beds held 1 of 1", 60s));
  ResumeWatch watch(server.url());
  Subprocess w2(worker(server, models, "w2"));
  REQUIRE(w2.wait_for_stderr("(2 workers)", 60s));
  std::this_thread::sleep_for(1500ms);  // frames flow through w1; its point is stored
  INFO("w1: " << w1.out() << w1.err().substr(w1.err().size() > 3000 ? w1.err().size() - 3000 : 0)
              << "\nw2: " << w2.out()
              << w2.err().substr(w2.err().size() > 3000 ? w2.err().size() - 3000 : 0)
              << "\ndevice: " << device.out());

  // Frozen past its lease: w2 takes the bed and moves the point on; then w1 wakes.
  w1.signal(SIGSTOP);
  const bool taken = w2.wait_for_stderr("beds held 1 of 1", 30s);
  std::this_thread::sleep_for(1500ms);
  w1.signal(SIGCONT);
  REQUIRE(taken);
  REQUIRE(device.wait(120s) == 0);

  eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.1.img", kFrames, 30s);
  std::this_thread::sleep_for(1500ms);  // the last resume point written; no image comes twice
  const auto images =
      eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.1.img", kFrames + 1, 3s);
  w1.signal(SIGINT);
  w2.signal(SIGINT);
  // One of the helper's 20 runs saw w1 (the woken one) not exit within 30 s of its first
  // SIGINT; 17 later runs here did, and 124 more (84 with one consumer per holder, 40 without).
  // Until that is explained, a second signal (which gives up every wait at once) must end it, and
  // the slow first stop is reported, not hidden.
  int w1_status = w1.wait(30s);
  WARN_MESSAGE(w1_status != -1,
               "w1 did not exit within 30 s of SIGINT; stderr tail: "
                   << w1.err().substr(w1.err().size() > 2000 ? w1.err().size() - 2000 : 0));
  if (w1_status == -1) {
    w1.signal(SIGINT);
    w1_status = w1.wait(10s);
  }
  REQUIRE(w1_status == 0);
  REQUIRE(w2.wait(30s) == 0);

  const auto points = watch.seen();
  INFO("resume points: " << points.size());
  REQUIRE(points.size() > 2);
  for (size_t i = 1; i < points.size(); ++i) {
    INFO("point " << i << ": " << points[i - 1] << " then " << points[i]);
    CHECK(points[i] >= points[i - 1]);
  }
  // w1 let the bed go (its lease had lapsed, or its next resume-point write was refused), and
  // w2 kept it.
  CHECK(count_of(w1.out(), R"(beds held (\d+) of)") == 0);
  CHECK(count_of(w1.out(), R"(lost (\d+))") + count_of(w1.out(), R"(taken over (\d+))") >= 1);
  CHECK(count_of(w2.out(), R"(taken over (\d+))") == 0);

  // Each image once, in order (EIT_IMAGES' duplicate window drops an image published again).
  std::vector<uint64_t> seqs;
  for (const auto& m : images) {
    const auto h =
        eit::sinks::decode_image_header(std::as_bytes(std::span(m.data.data(), m.data.size())));
    REQUIRE(h.has_value());
    seqs.push_back(h->seq);
  }
  bool increasing = true;
  for (size_t i = 1; i < seqs.size(); ++i) {
    increasing = increasing && seqs[i] > seqs[i - 1];
    if (seqs[i] != seqs[i - 1] + 1) MESSAGE("after " << seqs[i - 1] << " comes " << seqs[i]);
  }
  CHECK(increasing);
  CHECK(seqs.size() <= size_t{kFrames});
  // Every frame has its image. With one consumer name shared by every holder, a frame the woken
  // worker fetched from the taker's consumer just before it noticed was covered by the taker's
  // ack-all without an image: 1 of 800 missing in 2 of 20 runs, and in 1 of 40 with the fix
  // reverted (0 of 84 with it). Each holder now reads through a consumer of its own, and the
  // taker deleted w1's.
  CHECK(seqs.size() == size_t{kFrames});
  // No consumer left behind: the one the resume point names (w2's, kept for the next holder).
  {
    natsConnection* nc = nullptr;
    REQUIRE(natsConnection_ConnectTo(&nc, server.url().c_str()) == NATS_OK);
    jsCtx* js = nullptr;
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    const std::string named = eit::test::bed_consumer(js, "icu", "1");
    CHECK(!named.empty());
    CHECK(eit::test::raw_consumers(js) == std::vector<std::string>{named});
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
  // Frames reconstructed by both (the batch w1 had not acknowledged when it froze, and what it
  // fetched from its own consumer before w2 deleted it): reported, a bound on what a duplicate
  // window shorter than a takeover would store twice.
  const uint64_t both =
      count_of(w1.out(), R"(frames (\d+), bad)") + count_of(w2.out(), R"(frames (\d+), bad)");
  MESSAGE("frames reconstructed by w1 and w2: " << both << " of " << kFrames);
}

#endif  // libnats
