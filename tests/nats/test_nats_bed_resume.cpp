// Where `eitstream worker` resumes a bed (nats/src/bed_consumer.*, bed_resume.*), driven directly
// against a real `nats-server -js`. A taker deletes the former holder's consumer and makes its
// own; one that dies in between leaves none. The point the consumer is made to start after is
// stored beside the bed (EIT_BEDS, r.<site>.<bed>) before the delete, so the next taker starts
// after it instead of from --since (the bed's whole history by default). A point of an EIT_RAW
// deleted and made again since (sequences from 1 again) counts for nothing: it would skip that
// many new frames. Every write of the point is compare-and-set on its revision: a former holder
// that wakes after a takeover can neither move the point back nor remake the taker's consumer.
// Each holder reads through a consumer of its own, named in the point (header Eit-Consumer): a
// former holder's fetches and acknowledgements cannot reach the taker's frames.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nats/nats.h>

#include "../../nats/src/bed_consumer.hpp"
#include "../../nats/src/bed_resume.hpp"
#include "eit/nats/nats_frames.hpp"
#include "nats_server.hpp"
#include "nats_test_support.hpp"

using namespace std::chrono_literals;
using eit::nats::ResumePoint;

namespace {

// The stream sequence of a message a consumer delivered.
uint64_t stream_seq(natsMsg* m) {
  jsMsgMetaData* meta = nullptr;
  REQUIRE(natsMsg_GetMetaData(&meta, m) == NATS_OK);
  const uint64_t seq = meta->Sequence.Stream;
  jsMsgMetaData_Destroy(meta);
  return seq;
}

// A server with the bucket EIT_BEDS and a connection; bed icu.1's raw frames.
struct Bed {
  eit::test::NatsServer server;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
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

  // Stores `count` raw messages of bed `site`.`name` (the gateway makes EIT_RAW when it is
  // missing).
  void store(int count, const std::string& site = "icu", const std::string& name = "1") {
    auto link = eit::nats::open_nats_device_link(
        fmt::format("{}?site={}&bed={}", server.url(), site, name));
    const std::array<uint8_t, 3> bytes{1, 2, 3};
    for (int i = 0; i < count; ++i) REQUIRE(link->send(bytes));
    REQUIRE(link->drain(5s));
  }

  // Opens bed `site`.`name` as a worker does, from `point` at the caller's `revision` (0: a
  // taker); the subscription, which must open.
  natsSubscription* open(ResumePoint* point, uint64_t* revision, const std::string& site = "icu",
                         const std::string& name = "1") {
    natsSubscription* sub = nullptr;
    std::string error;
    REQUIRE_MESSAGE(
        eit::nats::open_bed_consumer(js, site, name, 0, point, revision, &sub, &error) == NATS_OK,
        error);
    return sub;
  }

  // Opens the bed (open()) and returns the stream sequences delivered; acknowledges the last
  // (ack-all) when `ack`. `revision`: the caller's (none: a taker).
  std::vector<uint64_t> open_and_read(ResumePoint* point, bool ack, uint64_t* revision = nullptr,
                                      const std::string& site = "icu",
                                      const std::string& name = "1") {
    uint64_t taker = 0;
    natsSubscription* sub = open(point, revision ? revision : &taker, site, name);
    std::vector<uint64_t> seqs;
    for (;;) {
      natsMsgList list{};
      jsErrCode err;
      if (natsSubscription_Fetch(&list, sub, 100, 500, &err) != NATS_OK) break;
      for (int i = 0; i < list.Count; ++i) seqs.push_back(stream_seq(list.Msgs[i]));
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
  // The consumer the stored point names (its holder's), and where it was made to start.
  std::string consumer() { return eit::test::bed_consumer(js, "icu", "1"); }
  std::optional<uint64_t> consumer_start() { return eit::test::consumer_start(js, consumer()); }
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
  REQUIRE(js_DeleteConsumer(bed.js, "EIT_RAW", bed.consumer().c_str(), nullptr, &err) == NATS_OK);
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
  const ResumePoint five{5, 77, "eitworker-icu-1-0"};
  REQUIRE(eit::nats::store_resume_point(bed.js, bed.resume_key, five, &revision, &error) ==
          NATS_OK);
  writer.opened(five, revision);
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
  CHECK(bed.stored()->consumer == "eitworker-icu-1-0");  // every write names the consumer
  writer.acked(12);
  writer.maybe_write(context.js, 999'000'000);
  CHECK(published()->acked_through == 9);
  writer.maybe_write(context.js, 1'000'000'000);
  CHECK(published()->acked_through == 12);
  writer.acked(13);
  CHECK(writer.flush(context.js, &error) == NATS_OK);
  CHECK(bed.stored()->acked_through == 13);
  CHECK(bed.consumer() == "eitworker-icu-1-0");
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
  REQUIRE(eit::nats::store_resume_point(bed.js, bed.resume_key,
                                        {25, p2.raw_created_ns, p2.consumer}, &r2,
                                        &error) == NATS_OK);
  REQUIRE(bed.consumer_start() == uint64_t{21});
  // Each read through a consumer of its own; w2 deleted w1's.
  CHECK(p2.consumer != p1.consumer);
  CHECK(!eit::test::consumer_start(bed.js, p1.consumer).has_value());

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
  CHECK(bed.consumer() == p2.consumer);
  CHECK(bed.consumer_start() == uint64_t{21});
  uint64_t now_at = 0;
  CHECK(bed.stored(&now_at)->acked_through == 25);
  CHECK(now_at == r2);
}

TEST_CASE(
    "a holder woken after a takeover is handed none of the taker's frames and its "
    "acknowledgements do not cover them") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  bed.store(20);
  // w1 reads the bed, acknowledges 1-10 and is frozen with 11-20 fetched and not acknowledged.
  ResumePoint p1;
  uint64_t r1 = 0;
  natsSubscription* w1 = bed.open(&p1, &r1);
  const auto fetch = [](natsSubscription* sub, int batch) {
    std::vector<natsMsg*> msgs;
    natsMsgList list{};
    jsErrCode err;
    if (natsSubscription_Fetch(&list, sub, batch, 500, &err) == NATS_OK) {
      for (int i = 0; i < list.Count; ++i) msgs.push_back(std::exchange(list.Msgs[i], nullptr));
    }
    natsMsgList_Destroy(&list);
    return msgs;
  };
  auto first = fetch(w1, 10);
  REQUIRE(first.size() == 10);
  REQUIRE(natsMsg_AckSync(first.back(), nullptr, nullptr) == NATS_OK);
  auto unfinished = fetch(w1, 10);
  REQUIRE(unfinished.size() == 10);

  // w2 takes the bed over: it starts after 10, through a consumer of its own; w1's is gone.
  ResumePoint p2;
  uint64_t r2 = 0;
  natsSubscription* w2 = bed.open(&p2, &r2);
  CHECK(p2.acked_through == 10);
  CHECK(p2.consumer != p1.consumer);
  CHECK(bed.consumer() == p2.consumer);
  CHECK(!eit::test::consumer_start(bed.js, p1.consumer).has_value());
  CHECK(eit::test::raw_consumers(bed.js) == std::vector<std::string>{p2.consumer});

  // w1 wakes: it acknowledges what it held and fetches again. Before, with one consumer name for
  // every holder, its fetch was served from w2's consumer (frames w2 then never got) and its
  // acknowledgement covered w2's frames.
  natsMsg_Ack(unfinished.back(), nullptr);
  bed.store(5);
  auto woken = fetch(w1, 64);
  CHECK(woken.empty());
  std::vector<uint64_t> taker;
  for (int round = 0; round < 3; ++round)
    for (natsMsg* m : fetch(w2, 64)) {
      taker.push_back(stream_seq(m));
      natsMsg_Destroy(m);
    }
  CHECK(taker == range(11, 26));
  for (auto* list : {&first, &unfinished, &woken})
    for (natsMsg* m : *list) natsMsg_Destroy(m);
  natsSubscription_Destroy(w1);
  natsSubscription_Destroy(w2);
}

TEST_CASE(
    "a resume point an older eitstream stored names no consumer and the taker resumes through "
    "the shared consumer and deletes it") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  bed.store(20);
  // An older worker: the shared consumer, 1-15 acknowledged, its point 10 stored without a name.
  const std::string shared = eit::nats::shared_consumer_name("icu", "1");
  CHECK(shared == "eitworker-icu-1");
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = "EIT_RAW";
  so.Config.AckPolicy = js_AckAll;
  natsSubscription* old = nullptr;
  jsErrCode err;
  REQUIRE(js_PullSubscribe(&old, bed.js, "eit.icu.1.raw", shared.c_str(), nullptr, &so, &err) ==
          NATS_OK);
  natsMsgList list{};
  REQUIRE(natsSubscription_Fetch(&list, old, 15, 2000, &err) == NATS_OK);
  REQUIRE(list.Count == 15);
  REQUIRE(natsMsg_AckSync(list.Msgs[14], nullptr, nullptr) == NATS_OK);
  natsMsgList_Destroy(&list);
  natsSubscription_Destroy(old);
  jsStreamInfo* si = nullptr;
  REQUIRE(js_GetStreamInfo(&si, bed.js, "EIT_RAW", nullptr, &err) == NATS_OK);
  const std::string value = fmt::format("10 {}", si->Created);
  jsStreamInfo_Destroy(si);
  REQUIRE(js_Publish(nullptr, bed.js, bed.resume_key.c_str(), value.data(),
                     static_cast<int>(value.size()), nullptr, &err) == NATS_OK);
  REQUIRE(bed.consumer().empty());

  ResumePoint taker;
  CHECK(bed.open_and_read(&taker, true) == range(16, 21));
  CHECK(taker.acked_through == 15);
  CHECK(!eit::test::consumer_start(bed.js, shared).has_value());
  CHECK(bed.consumer() == taker.consumer);
  CHECK(eit::test::raw_consumers(bed.js) == std::vector<std::string>{taker.consumer});
  // The server deletes a consumer nobody reads for an hour: one whose taker died before deleting
  // it does not stay for ever.
  jsConsumerInfo* ci = nullptr;
  REQUIRE(js_GetConsumerInfo(&ci, bed.js, "EIT_RAW", taker.consumer.c_str(), nullptr, &err) ==
          NATS_OK);
  CHECK(ci->Config->InactiveThreshold == int64_t{3600} * 1'000'000'000);
  jsConsumerInfo_Destroy(ci);
}

TEST_CASE(
    "a taker that finds the resume point deleted by hand resumes after the bed's consumer found "
    "by its subject") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  bed.store(20);
  ResumePoint first;
  CHECK(bed.open_and_read(&first, true) == range(1, 21));
  // Its point still says 0 (the holder stores it at most once a second); then it is deleted.
  kvStore* kv = nullptr;
  REQUIRE(js_KeyValue(&kv, bed.js, "EIT_BEDS") == NATS_OK);
  REQUIRE(kvStore_Delete(kv, "r.icu.1") == NATS_OK);
  kvStore_Destroy(kv);
  bed.store(3);
  ResumePoint second;
  CHECK(bed.open_and_read(&second, true) == range(21, 24));
  CHECK(second.acked_through == 20);
  CHECK(eit::test::raw_consumers(bed.js) == std::vector<std::string>{second.consumer});
  // Named after the delete marker's revision, not the first holder's name: that holder, if it
  // still reads, reads through the consumer deleted.
  CHECK(second.consumer != first.consumer);
}

TEST_CASE(
    "two beds whose site and bed join into the same name each get a consumer of their own when "
    "first opened") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  // eitworker-icu-1-2-…: site icu-1 bed 2, and site icu bed 1-2; three frames each.
  const std::array<std::pair<std::string, std::string>, 2> beds{{{"icu-1", "2"}, {"icu", "1-2"}}};
  for (const auto& [site, name] : beds) bed.store(3, site, name);
  std::vector<std::string> consumers;
  for (const auto& [site, name] : beds) {
    ResumePoint point;
    // Its own bed's three frames, not the other's.
    CHECK(bed.open_and_read(&point, false, nullptr, site, name).size() == 3);
    CHECK(eit::test::bed_consumer(bed.js, site, name) == point.consumer);
    consumers.push_back(point.consumer);
  }
  CHECK(consumers[0] != consumers[1]);
  auto listed = eit::test::raw_consumers(bed.js);
  std::sort(listed.begin(), listed.end());
  std::sort(consumers.begin(), consumers.end());
  CHECK(listed == consumers);
}

TEST_CASE(
    "a holder whose new consumer cannot be made after its point was stored tries again against "
    "its own write and is not taken over") {
  Bed bed;
  if (bed.skipped()) return;
  bed.connect();
  bed.store(5);
  ResumePoint point;
  uint64_t revision = 0;
  natsSubscription_Destroy(bed.open(&point, &revision));
  natsSubscription* sub = nullptr;
  std::string error;
  // Its rewind's consumer will be named after the revision it replaces; one of that name on
  // another subject makes the subscription fail after the point is stored.
  const std::string next = fmt::format("eitworker-icu-1-{}", revision);
  jsConsumerConfig cc;
  jsConsumerConfig_Init(&cc);
  cc.Durable = next.c_str();
  cc.FilterSubject = "eit.icu.9.raw";
  cc.AckPolicy = js_AckAll;
  jsErrCode err;
  REQUIRE(js_AddConsumer(nullptr, bed.js, "EIT_RAW", &cc, nullptr, &err) == NATS_OK);
  const uint64_t before = revision;
  const natsStatus failed =
      eit::nats::open_bed_consumer(bed.js, "icu", "1", 0, &point, &revision, &sub, &error);
  CHECK(failed != NATS_OK);
  CHECK(failed != NATS_MISMATCH);
  CHECK(sub == nullptr);
  uint64_t stored_at = 0;
  REQUIRE(bed.stored(&stored_at).has_value());
  CHECK(revision == stored_at);  // its own write
  CHECK(revision != before);
  // The next try compares with that write: it succeeds (before: refused as taken over).
  sub = bed.open(&point, &revision);
  CHECK(bed.stored(&stored_at).has_value());
  CHECK(revision == stored_at);
  CHECK(eit::test::raw_consumers(bed.js) == std::vector<std::string>{point.consumer});
  std::vector<uint64_t> seqs;
  natsMsgList list{};
  if (natsSubscription_Fetch(&list, sub, 10, 1000, &err) == NATS_OK)
    for (int i = 0; i < list.Count; ++i) seqs.push_back(stream_seq(list.Msgs[i]));
  natsMsgList_Destroy(&list);
  natsSubscription_Destroy(sub);
  CHECK(seqs == range(1, 6));
}
