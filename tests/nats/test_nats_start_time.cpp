// Replays from a time (nats/src/start_time.*): the start a consumer is asked for is T's whole
// second, which libnats 3.4.1 writes exactly (it writes nanoseconds under 1e8 without their
// leading zeros), and StartTimeGate drops what that delivers before T, by JetStream timestamp.
// The pure rules, then both against a real `nats-server -js`.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nats/nats.h>

#include "../../nats/src/start_time.hpp"
#include "memory_stream.hpp"
#include "wall_clock.hpp"

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = int64_t{1'796'281'050} * kSecond;  // 2026-12-03T06:57:30Z

// The memory stream "S" on "x" (memory_stream.hpp), read by an ordered consumer from a time.
struct StreamOnServer : eit::test::MemoryStreamOnServer {
  // An ordered consumer on "x" delivering from deliver_from_time(since_ns).
  natsSubscription* replay_from(int64_t since_ns) {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = "S";
    so.Ordered = true;
    eit::nats::deliver_from_time(so.Config, since_ns);
    natsSubscription* sub = nullptr;
    jsErrCode err;
    REQUIRE(js_SubscribeSync(&sub, js, "x", nullptr, &so, &err) == NATS_OK);
    return sub;
  }
};

int64_t stored_at(natsMsg* m) {
  jsMsgMetaData* meta = nullptr;
  REQUIRE(natsMsg_GetMetaData(&meta, m) == NATS_OK);
  const int64_t t = meta->Timestamp;
  jsMsgMetaData_Destroy(meta);
  return t;
}

}  // namespace

TEST_CASE("start_time_sent: T floored to its whole second, at least 1 s") {
  using eit::nats::start_time_sent;
  CHECK(start_time_sent(kT0) == kT0);
  CHECK(start_time_sent(kT0 + 40'298'848) == kT0);  // the case libnats writes as .40298848
  CHECK(start_time_sent(kT0 + 5) == kT0);
  CHECK(start_time_sent(kT0 + 123'456'789) == kT0);
  CHECK(start_time_sent(kT0 + 999'999'999) == kT0);
  CHECK(start_time_sent(kT0 + kSecond) == kT0 + kSecond);
  CHECK(start_time_sent(500'000'000) == kSecond);  // 0 would be "no start time" to libnats
  CHECK(start_time_sent(1) == kSecond);
}

TEST_CASE(
    "StartTimeGate: drops what was stored before T, opens at the first message at or after "
    "T and stays open (the server delivers in stream order from there)") {
  eit::nats::StartTimeGate none;
  CHECK(none.open());
  CHECK(none.admits(int64_t{1}));

  const int64_t t = kT0 + 45'000'000;
  eit::nats::StartTimeGate gate(t);
  CHECK_FALSE(gate.open());
  CHECK_FALSE(gate.admits(kT0));  // what the whole second's start lets through early
  CHECK_FALSE(gate.admits(t - 1));
  CHECK(gate.admits(t));  // stored at T exactly: a start of T delivers it
  CHECK(gate.open());
  CHECK(gate.admits(t - 10));  // after one at or after T, whatever the stream holds next
}

TEST_CASE_FIXTURE(StreamOnServer,
                  "deliver_from_time: the start time the server holds is the one asked for, "
                  "whatever T's fraction of a second") {
  if (skipped()) return;
  const int64_t now_s = (std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count() /
                         kSecond) *
                        kSecond;
  for (const int64_t nanos : {int64_t{0}, int64_t{5}, int64_t{40'298'848}, int64_t{99'999'999},
                              int64_t{100'000'000}, int64_t{999'999'999}}) {
    CAPTURE(nanos);
    natsSubscription* sub = replay_from(now_s - 5 * kSecond + nanos);
    jsConsumerInfo* ci = nullptr;
    jsErrCode err;
    REQUIRE(natsSubscription_GetConsumerInfo(&ci, sub, nullptr, &err) == NATS_OK);
    CHECK(ci->Config->DeliverPolicy == js_DeliverByStartTime);
    CHECK(ci->Config->OptStartTime == now_s - 5 * kSecond);
    jsConsumerInfo_Destroy(ci);
    natsSubscription_Destroy(sub);
  }
}

TEST_CASE_FIXTURE(
    StreamOnServer,
    "a replay from T through deliver_from_time and StartTimeGate: the server delivers "
    "T's second, the gate lets through exactly what was stored at or after T") {
  if (skipped()) return;
  // "a" and "b" stored in one second (well inside it), "c" later.
  eit::test::epoch_seconds_at_fraction(100'000'000, 800'000'000);
  jsErrCode err;
  for (const char* data : {"a", "b"})
    REQUIRE(js_Publish(nullptr, js, "x", data, 1, nullptr, &err) == NATS_OK);
  REQUIRE(js_Publish(nullptr, js, "x", "c", 1, nullptr, &err) == NATS_OK);

  // The stored times, read back in full.
  std::vector<int64_t> stored;
  {
    natsSubscription* all = nullptr;
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = "S";
    so.Ordered = true;
    REQUIRE(js_SubscribeSync(&all, js, "x", nullptr, &so, &err) == NATS_OK);
    natsMsg* m = nullptr;
    while (stored.size() < 3 && natsSubscription_NextMsg(&m, all, 2000) == NATS_OK) {
      stored.push_back(stored_at(m));
      natsMsg_Destroy(m);
    }
    natsSubscription_Destroy(all);
  }
  REQUIRE(stored.size() == 3);
  REQUIRE(stored[0] / kSecond == stored[1] / kSecond);  // else the machine stalled for 0.2 s
  REQUIRE(stored[0] < stored[1]);

  const int64_t t = stored[1];  // a T with nanoseconds of any length
  natsSubscription* sub = replay_from(t);
  eit::nats::StartTimeGate gate(t);
  std::string delivered, admitted;
  natsMsg* m = nullptr;
  while (natsSubscription_NextMsg(&m, sub, 1000) == NATS_OK) {
    const std::string data(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m)));
    delivered += data;
    if (gate.admits(m)) admitted += data;
    natsMsg_Destroy(m);
  }
  natsSubscription_Destroy(sub);
  CHECK(delivered == "abc");  // the whole second: "a" comes too
  CHECK(admitted == "bc");
}
