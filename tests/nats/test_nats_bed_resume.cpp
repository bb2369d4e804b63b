// Where `eitstream worker` resumes a bed (nats/src/bed_consumer.*, bed_resume.*), driven directly
// against a real `nats-server -js`. A taker deletes the bed's consumer and makes it anew; one that
// dies in between leaves none. The point the consumer is made to start after is stored beside the
// bed (EIT_BEDS, r.<site>.<bed>) before the delete, so the next taker starts after it instead of
// from --since (the bed's whole history by default). A point of an EIT_RAW deleted and made again
// since (sequences from 1 again) counts for nothing: it would skip that many new frames.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nats/nats.h>

#include "../../nats/src/bed_consumer.hpp"
#include "../../nats/src/bed_resume.hpp"
#include "eit/nats/nats_frames.hpp"
#include "nats_server.hpp"

using namespace std::chrono_literals;
using eit::nats::ResumePoint;

namespace {

// A server with the bucket EIT_BEDS and a connection; bed icu.1's raw frames.
struct Bed {
  eit::test::NatsServer server;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  const char* durable = "eitworker-icu-1";
  const std::string resume_key = eit::nats::resume_subject("icu", "1");

  bool skipped() const { return eit::test::skipped_without_nats(server); }
  void connect() {
    REQUIRE(natsConnection_ConnectTo(&nc, server.url().c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = "EIT_BEDS";
    kc.History = 1;
    kvStore* kv = nullptr;
    REQUIRE(js_CreateKeyValue(&kv, js, &kc) == NATS_OK);
    kvStore_Destroy(kv);
  }
  ~Bed() {
    if (js) jsCtx_Destroy(js);
    if (nc) natsConnection_Destroy(nc);
  }

  // Stores `count` raw messages (the gateway makes EIT_RAW when it is missing).
  void store(int count) {
    auto link = eit::nats::open_nats_device_link(server.url() + "?site=icu&bed=1");
    const std::array<uint8_t, 3> bytes{1, 2, 3};
    for (int i = 0; i < count; ++i) REQUIRE(link->send(bytes));
    REQUIRE(link->drain(5s));
  }

  // Opens the bed as a worker does, from `point`, and returns the stream sequences delivered;
  // acknowledges the last (ack-all) when `ack`.
  std::vector<uint64_t> open_and_read(ResumePoint* point, bool ack) {
    natsSubscription* sub = nullptr;
    std::string error;
    REQUIRE_MESSAGE(eit::nats::open_bed_consumer(js, "icu", "1", 0, point, &sub, &error) == NATS_OK,
                    error);
    std::vector<uint64_t> seqs;
    for (;;) {
      natsMsgList list{};
      jsErrCode err;
      if (natsSubscription_Fetch(&list, sub, 100, 500, &err) != NATS_OK) break;
      for (int i = 0; i < list.Count; ++i) {
        jsMsgMetaData* meta = nullptr;
        REQUIRE(natsMsg_GetMetaData(&meta, list.Msgs[i]) == NATS_OK);
        seqs.push_back(meta->Sequence.Stream);
        jsMsgMetaData_Destroy(meta);
      }
      if (ack && list.Count > 0)
        REQUIRE(natsMsg_AckSync(list.Msgs[list.Count - 1], nullptr, nullptr) == NATS_OK);
      natsMsgList_Destroy(&list);
    }
    natsSubscription_Destroy(sub);
    return seqs;
  }

  std::optional<ResumePoint> stored() {
    std::optional<ResumePoint> p;
    std::string error;
    REQUIRE_MESSAGE(eit::nats::load_resume_point(js, resume_key, &p, &error) == NATS_OK, error);
    return p;
  }
};

std::vector<uint64_t> range(uint64_t first, uint64_t end) {
  std::vector<uint64_t> v;
  for (uint64_t s = first; s < end; ++s) v.push_back(s);
  return v;
}

}  // namespace

TEST_CASE(
    "a taker that finds no bed consumer resumes after the point stored before the consumer was "
    "deleted and not from the bed's first frame") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  bed.store(20);
  ResumePoint first;  // a worker that reads the bed for the first time: --since all
  CHECK(bed.open_and_read(&first, true) == range(1, 21));
  CHECK(first.acked_through == 0);
  CHECK(bed.stored().has_value());  // the probe's start, stored before the delete

  ResumePoint second;  // the next taker learns 20 from the consumer and stores it first
  CHECK(bed.open_and_read(&second, false).empty());
  CHECK(second.acked_through == 20);
  REQUIRE(bed.stored().has_value());
  CHECK(bed.stored()->acked_through == 20);

  // It dies after deleting the consumer: what it leaves is the stored point and no consumer.
  jsErrCode err;
  REQUIRE(js_DeleteConsumer(bed.js, "EIT_RAW", bed.durable, nullptr, &err) == NATS_OK);
  bed.store(5);
  ResumePoint third;
  CHECK(bed.open_and_read(&third, true) == range(21, 26));
  CHECK(third.acked_through == 20);
}

TEST_CASE("a resume point of an EIT_RAW that was deleted and made again since counts for nothing") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  bed.store(20);
  ResumePoint point;
  CHECK(bed.open_and_read(&point, true) == range(1, 21));
  CHECK(bed.open_and_read(&point, false).empty());
  CHECK(point.acked_through == 20);
  REQUIRE(bed.stored().has_value());

  jsErrCode err;
  REQUIRE(js_DeleteStream(bed.js, "EIT_RAW", nullptr, &err) == NATS_OK);
  bed.store(5);  // sequences 1-5 of the new stream
  // Both this thread's point and the stored one belong to the old stream.
  CHECK(bed.open_and_read(&point, true) == range(1, 6));
  CHECK(point.acked_through == 0);
}

TEST_CASE("a bed thread stores its resume point at most once a second") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  std::atomic<uint64_t> failures{0};
  eit::nats::ResumeWriter writer(bed.resume_key, &failures);
  writer.opened({5, 77});
  const auto published = [&] {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 5000;
    REQUIRE(js_PublishAsyncComplete(bed.js, &po) == NATS_OK);
    return bed.stored();
  };
  writer.maybe_write(bed.js, 0);
  CHECK(!published().has_value());  // opened: already stored by open_bed_consumer
  writer.acked(9);
  writer.maybe_write(bed.js, 0);
  REQUIRE(published().has_value());
  CHECK(bed.stored()->acked_through == 9);
  CHECK(bed.stored()->raw_created_ns == 77);
  writer.acked(12);
  writer.maybe_write(bed.js, 999'000'000);
  CHECK(published()->acked_through == 9);
  writer.maybe_write(bed.js, 1'000'000'000);
  CHECK(published()->acked_through == 12);
  // A publish JetStream refused: the next chance writes the point again, though it did not move.
  failures.fetch_add(1);
  std::string error;
  REQUIRE(js_Publish(nullptr, bed.js, bed.resume_key.c_str(), "1 77", 4, nullptr, nullptr) ==
          NATS_OK);
  writer.maybe_write(bed.js, 2'000'000'000);
  CHECK(published()->acked_through == 12);
  CHECK(writer.flush(bed.js, &error) == NATS_OK);
}
