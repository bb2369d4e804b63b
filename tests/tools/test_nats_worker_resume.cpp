// Where a worker taking over a bed resumes, against a real `nats-server -js`: after the last raw
// frame acknowledged, never earlier. nats-server 2.9 reports an acknowledgement floor of 0 for a
// consumer that has acknowledged nothing since it was made; a worker that resumed after that
// floor reconstructed the bed's whole history again, and once EIT_IMAGES' duplicate window had
// passed stored every image twice. Here the window is 1 s (the test makes EIT_IMAGES itself;
// workers keep an existing stream's settings), so a repeat would be stored. A taker deletes the
// former holder's consumer before making its own; one that dies in between leaves none, and the
// next taker must resume after the point stored beside the bed (EIT_BEDS r.<site>.<bed>, which
// names the holder's consumer), not from --since.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <filesystem>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "subprocess.hpp"
#include "worker_command.hpp"

using eit::test::seq_range;
using eit::test::Subprocess;
using eit::test::worker_frames;
using namespace std::chrono_literals;

namespace {

struct ModelDir : eit::test::WorkerModelDir {
  ModelDir() : WorkerModelDir("eit-worker-resume-") {}
};

// A JetStream connection for looking at what the workers left on the server.
struct Js : eit::test::JetStreamConnection {
  using JetStreamConnection::JetStreamConnection;
  // EIT_IMAGES as workers make it, but with a duplicate window of `window`.
  void add_image_stream(std::chrono::milliseconds window) {
    const char* subjects[] = {"eit.*.*.img", "eit.*.*.series", "eit.*.*.global", "eit.*.*.breath"};
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = "EIT_IMAGES";
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 4;
    cfg.Storage = js_FileStorage;
    cfg.Duplicates = std::chrono::nanoseconds(window).count();
    jsErrCode err;
    REQUIRE(js_AddStream(nullptr, js, &cfg, nullptr, &err) == NATS_OK);
  }
  // Bed icu.1's consumer, the one its resume point names (its holder's), or "".
  std::string consumer() { return eit::test::bed_consumer(js, "icu", "1"); }
  // The stream sequence bed icu.1's consumer was made to start at (0: none given), or nullopt
  // when there is no such consumer.
  std::optional<uint64_t> consumer_start() { return eit::test::consumer_start(js, consumer()); }
  void delete_consumer(const std::string& durable) {
    jsErrCode err;
    REQUIRE(js_DeleteConsumer(js, "EIT_RAW", durable.c_str(), nullptr, &err) == NATS_OK);
  }
  // A key of the bucket EIT_BEDS: its value ("" when none or deleted), or deleted.
  std::string bed_key(const char* key) {
    kvStore* kv = nullptr;
    REQUIRE(js_KeyValue(&kv, js, "EIT_BEDS") == NATS_OK);
    kvEntry* e = nullptr;
    std::string value;
    if (kvStore_Get(&e, kv, key) == NATS_OK) {
      value = kvEntry_ValueString(e);
      kvEntry_Destroy(e);
    }
    kvStore_Destroy(kv);
    return value;
  }
  void delete_bed_key(const char* key) {
    kvStore* kv = nullptr;
    REQUIRE(js_KeyValue(&kv, js, "EIT_BEDS") == NATS_OK);
    REQUIRE(kvStore_Delete(kv, key) == NATS_OK);
    kvStore_Destroy(kv);
  }
};

// A worker of site icu named `id` that reads a bed it is the first to read from `since`.
std::vector<std::string> worker(const eit::test::NatsServer& server, const ModelDir& models,
                                const char* id, const char* since) {
  return eit::test::worker_command(server.url() + "?site=icu", models,
                                   {"--id", id, "--since", since});
}

// Bed icu.1's images, from the start of EIT_IMAGES.
std::vector<uint64_t> image_seqs(const eit::test::NatsServer& server, size_t at_most) {
  return eit::test::image_seqs(
      eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.1.img", at_most, 3s));
}

// EIT_IMAGES with a duplicate window of 1 s, and bed icu.1's first 300 raw frames stored.
void store_300_frames(const eit::test::NatsServer& server, Js& js) {
  js.add_image_stream(1000ms);
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=1", "--count", "300", "--unpaced"});
  REQUIRE(device.wait(120s) == 0);
}

}  // namespace

TEST_CASE(
    "two takeovers in a row of a bed whose frames are all done reconstruct no old frame and "
    "store no image twice") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  ModelDir models;
  Js js(server.url());
  store_300_frames(server, js);

  Subprocess first(worker(server, models, "w1", "all"));
  REQUIRE(first.wait_for_stderr("frames 300,", 60s));
  first.signal(SIGINT);
  REQUIRE(first.wait(30s) == 0);
  // Each next worker takes the bed, finds nothing new, and stops; the duplicate window passes.
  for (const char* id : {"w2", "w3"}) {
    std::this_thread::sleep_for(1500ms);
    Subprocess next(worker(server, models, id, "all"));
    REQUIRE(next.wait_for_stderr("beds held 1 of 1", 60s));
    std::this_thread::sleep_for(2s);  // time enough to reconstruct the 300 frames again
    next.signal(SIGINT);
    REQUIRE(next.wait(30s) == 0);
    INFO(id << ": " << next.out());
    CHECK(worker_frames(next.out()) == uint64_t{0});
    CHECK(js.consumer_start() == uint64_t{301});
  }
  CHECK(image_seqs(server, 601) == seq_range(0, 300));
}

TEST_CASE(
    "a taker that dies between deleting a bed's consumer and making it anew leaves the next "
    "taker the bed's resume point and no old frame is reconstructed again") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  ModelDir models;
  Js js(server.url());
  store_300_frames(server, js);

  // The first holder reconstructs everything and is killed (no give-back); its stored resume
  // point is removed, as if it had died before storing it: only its consumer (found by its
  // subject) knows where it was.
  Subprocess first(worker(server, models, "w1", "all"));
  REQUIRE(first.wait_for_stderr("frames 300,", 60s));
  first.signal(SIGKILL);
  first.wait(10s);
  js.delete_bed_key("r.icu.1");
  // The second takes the bed once w1's lease ran out, and dies right after deleting w1's
  // consumer: the test deletes the one it made, which leaves the state of a death before making
  // it.
  Subprocess second(worker(server, models, "w2", "all"));
  REQUIRE(second.wait_for_stderr("beds held 1 of 1", 60s));
  for (int i = 0; i < 200 && js.consumer_start() != uint64_t{301}; ++i)
    std::this_thread::sleep_for(50ms);
  second.signal(SIGKILL);
  second.wait(10s);
  REQUIRE(js.consumer_start() == uint64_t{301});
  js.delete_consumer(js.consumer());
  CHECK(js.bed_key("r.icu.1").starts_with("300 "));  // stored before the consumer was deleted

  // The third finds no consumer; with --since all it went back to the bed's first frame.
  Subprocess third(worker(server, models, "w3", "all"));
  REQUIRE(third.wait_for_stderr("beds held 1 of 1", 60s));
  std::this_thread::sleep_for(2s);  // time enough to reconstruct the 300 frames again
  third.signal(SIGINT);
  REQUIRE(third.wait(30s) == 0);
  INFO("w3: " << third.out() << third.err());
  CHECK(worker_frames(third.out()) == uint64_t{0});
  CHECK(js.consumer_start() == uint64_t{301});
  CHECK(image_seqs(server, 601) == seq_range(0, 300));
}

TEST_CASE(
    "a bed first read with --since new and rewound before any frame was acknowledged does not "
    "go back to the bed's history") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  ModelDir models;
  const auto emulate = [&](const char* model, int frames, int seq_start) {
    Subprocess d({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                  fmt::format("{}?site=icu&bed=1&model={}", server.url(), model), "--count",
                  std::to_string(frames), "--seq-start", std::to_string(seq_start), "--unpaced"});
    REQUIRE(d.wait(120s) == 0);
  };
  emulate("default", 50, 0);  // history, before the worker: not wanted
  Subprocess w(worker(server, models, "wN", "new"));
  REQUIRE(w.wait_for_stderr("beds held 1 of 1", 60s));
  Js js(server.url());
  for (int i = 0; i < 100 && !js.consumer_start(); ++i) std::this_thread::sleep_for(50ms);
  REQUIRE(js.consumer_start().has_value());
  CHECK(js.consumer_start() == uint64_t{51});  // after the 50 old frames
  // Frames whose model is not there yet: fetched, nothing acknowledged, the consumer made anew
  // (every 2 s) until the model appears.
  emulate("later", 20, 50);
  REQUIRE(w.wait_for_stderr("later.h5", 30s));
  std::this_thread::sleep_for(3s);
  std::filesystem::copy_file(models.path / "default.h5", models.path / "later.h5");
  CHECK(w.wait_for_stderr("frames 20,", 30s));
  const auto seqs = image_seqs(server, 71);
  w.signal(SIGINT);
  CHECK(w.wait(30s) == 0);
  INFO("worker: " << w.out() << w.err());
  CHECK(seqs == seq_range(50, 70));
}

#endif  // libnats
