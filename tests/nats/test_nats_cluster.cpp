// A 3-node JetStream cluster on loopback ports with the raw-frame stream replicated three times:
// a device gateway (eitstream's NATS device link) publishes frames, one node is killed outright
// mid-stream, the gateway carries on, and a reader on a surviving node finds every frame once,
// in order. Then the stream's LEADER is killed mid-stream (the gateway is connected to it): the
// gateway resends what the election swallowed, and a reader following the stream through a
// durable consumer carries on across the election with every frame once, in order.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "eit/nats/nats_frames.hpp"
#include "eit/nats/nats_streams.hpp"
#include "nats_cluster.hpp"
#include "nats_test_support.hpp"

using namespace std::chrono_literals;

namespace {

// Creates EIT_RAW with three replicas (retrying while the cluster elects its JetStream leader)
// and returns the name of the server leading the stream, empty on failure.
std::string create_replicated_raw_stream(const std::string& url) {
  natsConnection* nc = nullptr;
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (natsConnection_ConnectTo(&nc, url.c_str()) != NATS_OK) {  // the nodes are starting
    if (std::chrono::steady_clock::now() > end) return {};
    std::this_thread::sleep_for(100ms);
  }
  jsCtx* js = nullptr;
  natsConnection_JetStream(&js, nc, nullptr);
  const char* subjects[] = {"eit.*.*.raw"};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = eit::nats::kRawStream;
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Replicas = 3;
  cfg.Storage = js_FileStorage;
  std::string leader;
  while (leader.empty() && std::chrono::steady_clock::now() < end) {
    jsStreamInfo* si = nullptr;
    jsErrCode err;
    if (js_AddStream(&si, js, &cfg, nullptr, &err) == NATS_OK ||
        js_GetStreamInfo(&si, js, cfg.Name, nullptr, &err) == NATS_OK) {
      if (si->Cluster && si->Cluster->Leader && si->Cluster->ReplicasLen == 2)
        leader = si->Cluster->Leader;
      jsStreamInfo_Destroy(si);
    }
    if (leader.empty()) std::this_thread::sleep_for(200ms);
  }
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return leader;
}

// Creates EIT_RAW with three replicas on `cluster`; the index of the node leading it.
int replicated_raw_stream_leader(const eit::test::NatsCluster& cluster) {
  const std::string leader = create_replicated_raw_stream(cluster.url(0));
  REQUIRE_MESSAGE(!leader.empty(), "the cluster elected no stream leader within 20 s");
  int node = 0;
  for (int i = 0; i < eit::test::NatsCluster::kNodes; ++i)
    if (cluster.name(i) == leader) node = i;
  return node;
}

// Follows `subject` through a durable, replicated pull consumer on `url` while frames are being
// published, retrying through errors (a node dies, the consumer's leader moves), until `count`
// frames arrived or `limit` passed. Independent of the code under test (libnats directly).
std::vector<std::string> follow_durable(const std::string& url, const std::string& subject,
                                        size_t count, std::chrono::seconds limit) {
  std::vector<std::string> out;
  natsConnection* nc = nullptr;
  natsOptions* opts = nullptr;
  natsOptions_Create(&opts);
  natsOptions_SetURL(opts, url.c_str());
  natsOptions_SetMaxReconnect(opts, -1);
  natsOptions_SetReconnectWait(opts, 100);
  if (natsConnection_Connect(&nc, opts) != NATS_OK) {
    natsOptions_Destroy(opts);
    return out;
  }
  jsCtx* js = nullptr;
  natsConnection_JetStream(&js, nc, nullptr);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = eit::nats::kRawStream;
  so.Config.AckPolicy = js_AckExplicit;
  so.Config.Replicas = 3;
  natsSubscription* sub = nullptr;
  jsErrCode err;
  const auto end = std::chrono::steady_clock::now() + limit;
  while (js_PullSubscribe(&sub, js, subject.c_str(), "leader-kill-reader", nullptr, &so, &err) !=
             NATS_OK &&
         std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(200ms);
  while (sub && out.size() < count && std::chrono::steady_clock::now() < end) {
    natsMsgList list{};
    if (natsSubscription_Fetch(&list, sub, 64, 200, &err) != NATS_OK) continue;
    for (int i = 0; i < list.Count; ++i) {
      natsMsg* m = list.Msgs[i];
      out.emplace_back(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m)));
      natsMsg_AckSync(m, nullptr, nullptr);  // acknowledged before the next fetch: none twice
    }
    natsMsgList_Destroy(&list);
  }
  if (sub) natsSubscription_Destroy(sub);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  natsOptions_Destroy(opts);
  return out;
}

}  // namespace

TEST_CASE("3-node cluster, stream with 3 replicas: one node killed mid-stream, no frame lost") {
  eit::test::NatsCluster cluster;
  if (eit::test::skipped_without_nats(cluster)) return;
  // The gateway talks to the stream's leader; a follower dies under it (its replica is lost,
  // two of three remain: the stream keeps its quorum and takes every frame).
  const int gateway_node = replicated_raw_stream_leader(cluster);
  const int victim = (gateway_node + 1) % eit::test::NatsCluster::kNodes;
  const int reader_node = (gateway_node + 2) % eit::test::NatsCluster::kNodes;

  constexpr int kFrames = 600;
  auto link = eit::nats::open_nats_device_link(cluster.url(gateway_node) + "?site=icu&bed=9");
  for (int i = 0; i < kFrames; ++i) {
    if (i == kFrames / 3) cluster.kill_node(victim);
    const std::string frame = fmt::format("frame {:06d}", i);
    CHECK(link->send(std::span(reinterpret_cast<const uint8_t*>(frame.data()), frame.size())));
    std::this_thread::sleep_for(1ms);
  }
  CHECK(link->drain(10s));  // every publish acknowledged by the stream
  link.reset();

  const auto frames = eit::test::fetch_all(cluster.url(reader_node), eit::nats::kRawStream,
                                           "eit.icu.9.raw", kFrames, 40s);
  CHECK(frames.size() == size_t{kFrames});
  bool in_order = true;
  for (size_t i = 0; i < frames.size(); ++i)
    in_order = in_order && frames[i].data == fmt::format("frame {:06d}", i);
  CHECK(in_order);
}

TEST_CASE("3-node cluster: the stream's leader killed mid-stream, the gateway resends what the "
          "election lost, a live reader gets every frame once, in order") {
  eit::test::NatsCluster cluster;
  if (eit::test::skipped_without_nats(cluster)) return;
  const int leader_node = replicated_raw_stream_leader(cluster);
  const int reader_node = (leader_node + 1) % eit::test::NatsCluster::kNodes;

  // 1,500 frames at ~500 frames/s (3 s); the leader dies after 300. The election takes seconds:
  // the gateway's 4,096 slots hold what JetStream cannot take meanwhile.
  constexpr size_t kFrames = 1500;
  std::vector<std::string> got;
  std::thread reader([&] {
    got = follow_durable(cluster.url(reader_node), "eit.icu.4.raw", kFrames, 60s);
  });
  eit::nats::NatsDeviceLinkOptions lo;
  lo.slots = 4096;
  lo.max_message_bytes = 64;
  auto link = eit::nats::open_nats_device_link(cluster.url(leader_node) + "?site=icu&bed=4", lo);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < kFrames; ++i) {
    if (i == 300) cluster.kill_node(leader_node);
    const std::string frame = fmt::format("frame {:06d}", i);
    CHECK(link->send(std::span(reinterpret_cast<const uint8_t*>(frame.data()), frame.size())));
    std::this_thread::sleep_until(t0 + 2ms * static_cast<int>(i + 1));
  }
  CHECK(link->drain(30s));  // every frame stored at last
  CHECK(link->dropped() == 0);
  const auto gs = eit::nats::nats_gateway_stats(*link);
  REQUIRE(gs);
  MESSAGE("leader kill: gateway stored " << gs->stored << ", failures " << gs->failures
                                         << ", resent " << gs->resent << ", duplicates "
                                         << gs->duplicates << ", reordered " << gs->reordered);
  CHECK(gs->stored == kFrames);
  CHECK(gs->reordered == 0);
  link.reset();
  reader.join();

  CHECK(got.size() == kFrames);
  size_t first_wrong = got.size();
  for (size_t i = 0; i < got.size() && first_wrong == got.size(); ++i)
    if (got[i] != fmt::format("frame {:06d}", i)) first_wrong = i;
  CHECK_MESSAGE(first_wrong == got.size(), "frame " << first_wrong << " is "
                                                   << (first_wrong < got.size() ? got[first_wrong]
                                                                                : std::string()));
}

// A bed's resume point (EIT_BEDS r.<site>.<bed>) names the EIT_RAW it belongs to by the stream's
// creation time, and a point from another EIT_RAW is ignored (a takeover then falls back to the
// consumer alone). So the creation time must not change when the stream's leader does.
TEST_CASE("3-node cluster: EIT_RAW's creation time stays the same when its leader changes") {
  eit::test::NatsCluster cluster;
  if (eit::test::skipped_without_nats(cluster)) return;
  const int leader_node = replicated_raw_stream_leader(cluster);
  const std::string leader = cluster.name(leader_node);
  const int other = (leader_node + 1) % eit::test::NatsCluster::kNodes;
  // The stream's creation time and leader as a node reports them; {0, ""} while it cannot.
  auto created_and_leader = [&](int node) {
    std::pair<int64_t, std::string> r{0, ""};
    natsConnection* nc = nullptr;
    if (natsConnection_ConnectTo(&nc, cluster.url(node).c_str()) != NATS_OK) return r;
    jsCtx* js = nullptr;
    natsConnection_JetStream(&js, nc, nullptr);
    jsStreamInfo* si = nullptr;
    jsErrCode err;
    if (js_GetStreamInfo(&si, js, eit::nats::kRawStream, nullptr, &err) == NATS_OK) {
      r.first = si->Created;
      if (si->Cluster && si->Cluster->Leader) r.second = si->Cluster->Leader;
      jsStreamInfo_Destroy(si);
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return r;
  };
  const auto before = created_and_leader(other);
  REQUIRE(before.first != 0);
  cluster.kill_node(leader_node);
  std::pair<int64_t, std::string> after{0, ""};
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < end) {
    after = created_and_leader(other);
    if (after.first != 0 && !after.second.empty() && after.second != leader) break;
    std::this_thread::sleep_for(200ms);
  }
  INFO("leader " << leader << " → " << after.second);
  REQUIRE(after.second != leader);
  REQUIRE_FALSE(after.second.empty());
  CHECK(after.first == before.first);
}
