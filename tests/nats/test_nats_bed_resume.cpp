// Where `eitstream worker` resumes a bed (nats/src/bed_consumer.*, bed_resume.*), driven directly
// against a real `nats-server -js`. A taker deletes the bed's consumer and makes it anew; one that
// dies in between leaves none. The point the consumer is made to start after is stored beside the
// bed (EIT_BEDS, r.<site>.<bed>) before the delete, so the next taker starts after it instead of
// from --since (the bed's whole history by default). A point of an EIT_RAW deleted and made again
// since (sequences from 1 again) counts for nothing: it would skip that many new frames. Every
// write of the point is compare-and-set on its revision: a former holder that wakes after a
// takeover can neither move the point back nor remake the taker's consumer.
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
#include "nats_test_support.hpp"

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
  // acknowledges the last (ack-all) when `ack`. `revision`: the caller's (0 or none: a taker).
  std::vector<uint64_t> open_and_read(ResumePoint* point, bool ack, uint64_t* revision = nullptr) {
    natsSubscription* sub = nullptr;
    std::string error;
    uint64_t taker = 0;
    REQUIRE_MESSAGE(
        eit::nats::open_bed_consumer(js, "icu", "1", 0, point, revision ? revision : &taker, &sub,
                                     &error) == NATS_OK,
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

  std::optional<ResumePoint> stored(uint64_t* revision = nullptr) {
    std::optional<ResumePoint> p;
    std::string error;
    uint64_t r = 0;
    REQUIRE_MESSAGE(eit::nats::load_resume_point(js, resume_key, &p, &r, &error) == NATS_OK, error);
    if (revision) *revision = r;
    return p;
  }
  std::optional<uint64_t> consumer_start() { return eit::test::consumer_start(js, durable); }
};

// A JetStream context whose asynchronous publishes report to `writer`, as a bed thread's does.
struct WriterContext {
  jsCtx* js = nullptr;
  WriterContext(natsConnection* nc, eit::nats::ResumeWriter* writer) {
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.PublishAsync.AckHandler = [](jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae,
                                    void* closure) {
      static_cast<eit::nats::ResumeWriter*>(closure)->on_ack(pa, pae);
      natsMsg_Destroy(msg);
    };
    jo.PublishAsync.AckHandlerClosure = writer;
    REQUIRE(natsConnection_JetStream(&js, nc, &jo) == NATS_OK);
  }
  ~WriterContext() { jsCtx_Destroy(js); }
  void settle() {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 5000;
    REQUIRE(js_PublishAsyncComplete(js, &po) == NATS_OK);
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
  eit::nats::ResumeWriter writer(bed.resume_key);
  WriterContext context(bed.nc, &writer);
  uint64_t revision = 0;
  std::string error;
  REQUIRE(eit::nats::store_resume_point(bed.js, bed.resume_key, {5, 77}, &revision, &error) ==
          NATS_OK);
  writer.opened({5, 77}, revision);
  const auto published = [&] {
    context.settle();
    return bed.stored();
  };
  writer.maybe_write(context.js, 0);
  CHECK(published()->acked_through == 5);  // opened: already stored by open_bed_consumer
  writer.acked(9);
  writer.maybe_write(context.js, 0);
  REQUIRE(published().has_value());
  CHECK(bed.stored()->acked_through == 9);
  CHECK(bed.stored()->raw_created_ns == 77);
  writer.acked(12);
  writer.maybe_write(context.js, 999'000'000);
  CHECK(published()->acked_through == 9);
  writer.maybe_write(context.js, 1'000'000'000);
  CHECK(published()->acked_through == 12);
  writer.acked(13);
  CHECK(writer.flush(context.js, &error) == NATS_OK);
  CHECK(bed.stored()->acked_through == 13);
  CHECK(!writer.superseded());
}

TEST_CASE(
    "a former holder that wakes after a takeover cannot move the resume point back nor remake "
    "the taker's consumer") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  bed.store(20);
  // w1 reads the bed and acknowledges 1-20; its point stays 0 until its next write (at most one a
  // second), and then it is frozen.
  ResumePoint p1;
  uint64_t r1 = 0;
  CHECK(bed.open_and_read(&p1, true, &r1) == range(1, 21));
  eit::nats::ResumeWriter w1(bed.resume_key);
  WriterContext w1_context(bed.nc, &w1);
  w1.opened(p1, r1);
  w1.acked(20);
  // w2 takes the bed over (its lease ran out), reads five more frames and stores the point 25.
  bed.store(5);
  ResumePoint p2;
  uint64_t r2 = 0;
  CHECK(bed.open_and_read(&p2, true, &r2) == range(21, 26));
  std::string error;
  REQUIRE(eit::nats::store_resume_point(bed.js, bed.resume_key, {25, p2.raw_created_ns}, &r2,
                                        &error) == NATS_OK);
  REQUIRE(bed.consumer_start() == uint64_t{21});

  // w1 wakes: its write of 20 is refused, the point stays 25.
  w1.maybe_write(w1_context.js, 5'000'000'000);
  w1_context.settle();
  CHECK(w1.superseded());
  CHECK(bed.stored()->acked_through == 25);
  CHECK(w1.flush(w1_context.js, &error) == NATS_MISMATCH);
  CHECK(bed.stored()->acked_through == 25);
  // A rewind of w1 (its round failed) finds the point moved on: it leaves w2's consumer alone.
  natsSubscription* sub = nullptr;
  uint64_t mine = r1;
  CHECK(eit::nats::open_bed_consumer(bed.js, "icu", "1", 0, &p1, &mine, &sub, &error) ==
        NATS_MISMATCH);
  CHECK(sub == nullptr);
  CHECK(bed.consumer_start() == uint64_t{21});
  uint64_t now_at = 0;
  CHECK(bed.stored(&now_at)->acked_through == 25);
  CHECK(now_at == r2);
}
