// A 3-node JetStream cluster on loopback ports with the raw-frame stream replicated three times:
// a device gateway (eitstream's NATS device link) publishes frames, one node is killed outright
// mid-stream, the gateway carries on, and a reader on a surviving node finds every frame once,
// in order.
#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <thread>

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

}  // namespace

TEST_CASE("3-node cluster, stream with 3 replicas: one node killed mid-stream, no frame lost") {
  eit::test::NatsCluster cluster;
  if (!cluster.available()) {
    MESSAGE("SKIPPED: nats-server is not installed");
    return;
  }
  const std::string leader = create_replicated_raw_stream(cluster.url(0));
  REQUIRE_MESSAGE(!leader.empty(), "the cluster elected no stream leader within 20 s");
  // The gateway talks to the stream's leader; a follower dies under it (its replica is lost,
  // two of three remain: the stream keeps its quorum and takes every frame).
  int gateway_node = 0, victim = 0;
  for (int i = 0; i < eit::test::NatsCluster::kNodes; ++i)
    if (cluster.name(i) == leader) gateway_node = i;
  victim = (gateway_node + 1) % eit::test::NatsCluster::kNodes;
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
                                           "eit.icu.9.raw", kFrames, 20s);
  CHECK(frames.size() == size_t{kFrames});
  bool in_order = true;
  for (size_t i = 0; i < frames.size(); ++i)
    in_order = in_order && frames[i].data == fmt::format("frame {:06d}", i);
  CHECK(in_order);
}
