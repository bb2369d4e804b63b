// `eitstream worker` against a real `nats-server -js`: three workers share three beds fed by
// three device gateways (`emulate --to nats://…`); one worker is killed with SIGKILL mid-stream.
// Every raw frame of every bed must come out as exactly one image, in order per bed, and the
// survivors must have taken the dead worker's bed.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <map>
#include <regex>
#include <thread>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "eit/sinks/image_header.hpp"
#include "subprocess.hpp"
#include "worker_command.hpp"

using eit::test::leased_worker_command;
using eit::test::Subprocess;
using eit::test::worker_frames;
using namespace std::chrono_literals;

namespace {

// A device gateway sending `frames` synthetic frames of bed `bed` at 100 frames/s.
std::vector<std::string> device_command(const eit::test::NatsServer& server, int bed, int frames) {
  return {EITSTREAM_BIN, "emulate",
          "--from",      "synthetic",
          "--to",        server.url() + "?site=icu&bed=" + std::to_string(bed),
          "--count",     std::to_string(frames),
          "--fps",       "100"};
}

// Reads the worker's status lines for up to 30 s until it has reconstructed frames.
bool wait_until_flowing(Subprocess& worker) {
  for (int i = 0; i < 30; ++i) {
    worker.wait_for_stderr("\x01", 1s);  // reads its status lines for a second
    if (std::regex_search(worker.err(), std::regex(R"(frames [1-9])"))) return true;
  }
  return false;
}

// The end of `text`: its last few status lines, for a failure's message.
std::string last_lines(const std::string& text) {
  constexpr size_t kTail = 1500;
  return text.size() > kTail ? text.substr(text.size() - kTail) : text;
}

}  // namespace

TEST_CASE(
    "three workers share three beds, one is killed mid-stream: every frame of every bed is "
    "reconstructed exactly once and in order") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  eit::test::WorkerModelDir models("eit-worker-cli-");

  constexpr int kBeds = 3, kFrames = 400;
  std::vector<std::unique_ptr<Subprocess>> workers;
  for (const char* id : {"wA", "wB", "wC"})
    workers.push_back(
        std::make_unique<Subprocess>(leased_worker_command(server.url(), models, id)));
  std::vector<std::unique_ptr<Subprocess>> devices;
  for (int b = 0; b < kBeds; ++b)
    devices.push_back(std::make_unique<Subprocess>(device_command(server, b, kFrames)));
  // Once the three share the beds one each, and frames flow, freeze one of them (its pending
  // fetch still receives frames it will never acknowledge), let its lease run out, kill it.
  for (auto& w : workers) {
    const bool shared = w->wait_for_stderr("beds held 1 of 3 (3 workers)", 60s);
    if (!shared)
      for (const auto& x : workers)
        MESSAGE("a worker's last status lines:\n" << last_lines(x->err()));
    REQUIRE(shared);
  }
  REQUIRE(wait_until_flowing(*workers[0]));
  workers[0]->signal(SIGSTOP);
  std::this_thread::sleep_for(2500ms);
  workers[0]->signal(SIGKILL);
  workers[0]->wait(10s);
  for (auto& d : devices) {
    REQUIRE(d->wait(120s) == 0);
    CHECK(d->out().find(std::to_string(kFrames) + " frames sent, 0 dropped") != std::string::npos);
  }

  // Every image, from the start of the image stream, through an independent client.
  const auto images =
      eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.*.img", kBeds * kFrames, 60s);
  for (size_t i = 1; i < workers.size(); ++i) workers[i]->signal(SIGINT);
  for (size_t i = 1; i < workers.size(); ++i) CHECK(workers[i]->wait(30s) == 0);
  std::map<std::string, std::vector<uint64_t>> seqs;
  for (const auto& m : images) {
    const auto h = eit::test::image_header_of(m);
    REQUIRE(h.has_value());
    CHECK(m.data.size() == sizeof(eit::sinks::ImageHeader) + h->count * sizeof(float));
    seqs[m.subject].push_back(h->seq);
  }
  CHECK(images.size() == size_t{kBeds * kFrames});
  REQUIRE(seqs.size() == size_t{kBeds});
  for (const auto& [subject, s] : seqs) {
    INFO(subject);
    REQUIRE(s.size() == size_t{kFrames});
    bool consecutive = true;
    for (size_t i = 1; i < s.size(); ++i) consecutive = consecutive && s[i] == s[i - 1] + 1;
    CHECK(consecutive);  // once each, in order
  }
  // The survivors reconstructed more than their own beds: the dead worker's bed moved.
  const uint64_t survivors =
      worker_frames(workers[1]->out()).value_or(0) + worker_frames(workers[2]->out()).value_or(0);
  INFO("worker B: " << workers[1]->out() << "worker C: " << workers[2]->out());
  CHECK(survivors > uint64_t{2 * kFrames});
  CHECK(workers[1]->out().find("publish failures 0") != std::string::npos);

  // Exactly once even when a bed is read again from the start (its consumer and its resume point
  // lost): the images published again carry the same Nats-Msg-Id and JetStream drops them.
  {
    natsConnection* nc = nullptr;
    REQUIRE(natsConnection_ConnectTo(&nc, server.url().c_str()) == NATS_OK);
    jsCtx* js = nullptr;
    natsConnection_JetStream(&js, nc, nullptr);
    jsErrCode err;
    CHECK(js_DeleteConsumer(js, "EIT_RAW", eit::test::bed_consumer(js, "icu", "0").c_str(), nullptr,
                            &err) == NATS_OK);
    kvStore* beds = nullptr;
    REQUIRE(js_KeyValue(&beds, js, "EIT_BEDS") == NATS_OK);
    CHECK(kvStore_Delete(beds, "r.icu.0") == NATS_OK);
    kvStore_Destroy(beds);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
  Subprocess again(leased_worker_command(server.url(), models, "wD"));
  CHECK(again.wait_for_stderr("frames " + std::to_string(kFrames), 60s));
  again.signal(SIGINT);
  CHECK(again.wait(30s) == 0);
  const auto after =
      eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.*.img", kBeds * kFrames + 1, 3s);
  CHECK(after.size() == size_t{kBeds * kFrames});
}

TEST_CASE(
    "a worker through a server restart: every frame of its bed comes out as one image, in order") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  eit::test::WorkerModelDir models("eit-worker-cli-");

  constexpr int kFrames = 600;
  Subprocess worker(leased_worker_command(server.url(), models, "wR"));
  REQUIRE(worker.wait_for_stderr("beds held", 60s));
  Subprocess device(device_command(server, 7, kFrames));
  REQUIRE(wait_until_flowing(worker));
  // Killed mid-stream (images in flight) and started again on the same store 2 s later: the
  // gateway and the worker reconnect by themselves.
  server.kill_now();
  std::this_thread::sleep_for(2s);
  server.start();
  REQUIRE(device.wait(120s) == 0);
  CHECK(device.out().find(std::to_string(kFrames) + " frames sent, 0 dropped") !=
        std::string::npos);

  const auto images =
      eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.7.img", kFrames, 60s);
  worker.signal(SIGINT);
  CHECK(worker.wait(30s) == 0);
  INFO("worker: " << worker.out() << worker.err());
  const std::vector<uint64_t> seqs = eit::test::image_seqs(images);
  REQUIRE(seqs.size() == size_t{kFrames});
  size_t first_wrong = 0;
  for (size_t i = 1; i < seqs.size() && first_wrong == 0; ++i)
    if (seqs[i] != seqs[i - 1] + 1) first_wrong = i;
  CHECK_MESSAGE(first_wrong == 0, "image " << first_wrong << " has seq " << seqs[first_wrong]
                                           << " after " << seqs[first_wrong - 1]);
}

#endif  // libnats
