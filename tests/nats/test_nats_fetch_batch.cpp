// fetch_batch (nats/src/nats_link.*), the workaround for libnats 3.4.1's pull Fetch, which moves
// every message already queued on the subscription (late answers to earlier pull requests) into
// an array sized for the batch: against a real `nats-server -js`, 100 messages queued by an
// earlier request for 100 all come out of one fetch_batch asking for 8, in stream order, with the
// rest of the stream after them, each once.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nats/nats.h>

#include "../../nats/src/nats_link.hpp"
#include "memory_stream.hpp"

using namespace std::chrono_literals;

TEST_CASE(
    "fetch_batch: messages already queued on a pull subscription all come out at once, "
    "however small the batch, followed by what the server still has") {
  eit::test::MemoryStreamOnServer s;
  if (s.skipped()) return;
  REQUIRE(s.connected);
  REQUIRE(s.stream_added);
  natsConnection* nc = s.nc;
  jsCtx* js = s.js;
  jsErrCode err;
  for (int i = 0; i < 110; ++i) {
    const std::string data = fmt::format("{:03d}", i);
    REQUIRE(js_Publish(nullptr, js, "x", data.data(), 3, nullptr, &err) == NATS_OK);
  }
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = "S";
  so.Config.AckPolicy = js_AckNone;
  natsSubscription* sub = nullptr;
  REQUIRE(js_PullSubscribe(&sub, js, "x", "d", nullptr, &so, &err) == NATS_OK);

  // What a busy process finds: an earlier request's answers, queued and not read yet.
  REQUIRE(natsConnection_PublishRequestString(nc, "$JS.API.CONSUMER.MSG.NEXT.S.d",
                                              natsSubscription_GetSubject(sub),
                                              R"({"batch":100,"expires":2000000000})") == NATS_OK);
  int queued = 0, bytes = 0;
  for (int i = 0; i < 200 && queued < 100; ++i) {
    std::this_thread::sleep_for(10ms);
    natsSubscription_GetPending(sub, &queued, &bytes);
  }
  REQUIRE(queued == 100);

  natsMsgList list{};
  REQUIRE(eit::nats::fetch_batch(&list, sub, 8, 1000, &err) == NATS_OK);
  std::string got;
  for (int i = 0; i < list.Count; ++i)
    got.append(natsMsg_GetData(list.Msgs[i]),
               static_cast<size_t>(natsMsg_GetDataLength(list.Msgs[i])));
  natsMsgList_Destroy(&list);
  std::string expected;
  for (int i = 0; i < 110; ++i) expected += fmt::format("{:03d}", i);
  CHECK(got == expected);

  natsSubscription_Destroy(sub);
}
