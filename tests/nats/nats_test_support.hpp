#pragma once
// Reading what eitstream put into JetStream, for NATS tests: an ordered, acknowledged pull of
// every message on a subject, straight through libnats (independent of the code under test), and
// the image messages' sequence numbers.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <nats/nats.h>

#include <doctest/doctest.h>

#include "eit/sinks/image_header.hpp"

namespace eit::test {

// A connection to `url` and its JetStream context, for setting up or looking at what eitstream
// finds on the server.
struct JetStreamConnection {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  explicit JetStreamConnection(const std::string& url) {
    REQUIRE(natsConnection_ConnectTo(&nc, url.c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
  }
  ~JetStreamConnection() {
    if (js) jsCtx_Destroy(js);
    if (nc) natsConnection_Destroy(nc);
  }
  JetStreamConnection(const JetStreamConnection&) = delete;
  JetStreamConnection& operator=(const JetStreamConnection&) = delete;
};

struct NatsMessage {
  std::string subject;
  std::string data;
};

// Every message on `subject` in `stream` from the start, until `count` arrived or `limit` passed.
inline std::vector<NatsMessage> fetch_all(const std::string& url, const char* stream,
                                          const std::string& subject, size_t count,
                                          std::chrono::seconds limit) {
  std::vector<NatsMessage> out;
  natsConnection* nc = nullptr;
  if (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK) return out;
  jsCtx* js = nullptr;
  natsConnection_JetStream(&js, nc, nullptr);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream;
  so.Config.AckPolicy = js_AckExplicit;
  natsSubscription* sub = nullptr;
  jsErrCode err;
  // (In a cluster a consumer may need a moment after a node's death: retry for the limit.)
  const auto until = std::chrono::steady_clock::now() + limit;
  natsStatus subscribed = NATS_ERR;
  while ((subscribed = js_PullSubscribe(&sub, js, subject.c_str(), nullptr, nullptr, &so, &err)) !=
             NATS_OK &&
         std::chrono::steady_clock::now() < until) {
    fprintf(stderr, "fetch_all: %s: %s (JetStream error %d)\n", subject.c_str(),
            natsStatus_GetText(subscribed), static_cast<int>(err));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (subscribed == NATS_OK) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (out.size() < count && std::chrono::steady_clock::now() < end) {
      natsMsgList list{};
      if (natsSubscription_Fetch(&list, sub, 512, 200, &err) != NATS_OK) continue;
      for (int i = 0; i < list.Count; ++i) {
        natsMsg* m = list.Msgs[i];
        out.push_back(
            {natsMsg_GetSubject(m),
             std::string(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m)))});
        natsMsg_Ack(m, nullptr);
      }
      natsMsgList_Destroy(&list);
    }
    natsSubscription_Destroy(sub);
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return out;
}

// The image header an image message starts with; nullopt when it has none.
inline std::optional<sinks::ImageHeader> image_header_of(const NatsMessage& image) {
  return sinks::decode_image_header(std::as_bytes(std::span(image.data.data(), image.data.size())));
}

// The seq of each image message, in the order given (each must have an image header).
inline std::vector<uint64_t> image_seqs(const std::vector<NatsMessage>& images) {
  std::vector<uint64_t> seqs;
  for (const auto& m : images) {
    const auto h = image_header_of(m);
    REQUIRE(h.has_value());
    seqs.push_back(h->seq);
  }
  return seqs;
}

// first, first + 1, …, end - 1.
inline std::vector<uint64_t> seq_range(uint64_t first, uint64_t end) {
  std::vector<uint64_t> v;
  for (uint64_t s = first; s < end; ++s) v.push_back(s);
  return v;
}

// The stream sequence the EIT_RAW consumer `durable` was made to start at (0: none given), or
// nullopt when there is no such consumer.
inline std::optional<uint64_t> consumer_start(jsCtx* js, const std::string& durable) {
  jsConsumerInfo* ci = nullptr;
  jsErrCode err;
  if (js_GetConsumerInfo(&ci, js, "EIT_RAW", durable.c_str(), nullptr, &err) != NATS_OK)
    return std::nullopt;
  const uint64_t start = ci->Config->OptStartSeq;
  jsConsumerInfo_Destroy(ci);
  return start;
}

// The consumer a bed's resume point (EIT_BEDS r.<site>.<bed>) names in its header Eit-Consumer:
// the one its holder reads; "" when there is no point or it names none.
inline std::string bed_consumer(jsCtx* js, const std::string& site, const std::string& bed) {
  const std::string subject = "$KV.EIT_BEDS.r." + site + "." + bed;
  natsMsg* msg = nullptr;
  jsErrCode err;
  if (js_GetLastMsg(&msg, js, "KV_EIT_BEDS", subject.c_str(), nullptr, &err) != NATS_OK) return "";
  const char* name = nullptr;
  std::string out;
  if (natsMsgHeader_Get(msg, "Eit-Consumer", &name) == NATS_OK && name) out = name;
  natsMsg_Destroy(msg);
  return out;
}

// The names of EIT_RAW's consumers.
inline std::vector<std::string> raw_consumers(jsCtx* js) {
  std::vector<std::string> out;
  jsConsumerNamesList* names = nullptr;
  jsErrCode err;
  if (js_ConsumerNames(&names, js, "EIT_RAW", nullptr, &err) != NATS_OK) return out;
  for (int i = 0; i < names->Count; ++i) out.emplace_back(names->List[i]);
  jsConsumerNamesList_Destroy(names);
  return out;
}

}  // namespace eit::test
