// bench_nats_beds: the load driver and the viewer of the NATS benchmark (scripts/nats_bench.py
// starts the server and the workers and runs this). It plays N simulated beds at F frames/s: every
// tick one raw frame per bed (eitstream's ingest framing, 208 float32 values, device time =
// CLOCK_MONOTONIC at publish) goes to eit.<site>.<bed>.raw through one connection; a second
// connection subscribes to eit.<site>.*.img and takes the latency device → viewer from each image
// header's t_device_ns. In C++ so the driver is not what limits the benchmark (the Python one
// could offer only 7.1 k frames/s on the loaded 2-core machine).
//
//   bench_nats_beds URL --beds 200 --fps 50 --seconds 10 [--drain 10] [--site bench] [--prime]
//
// --prime: publish one frame per bed through JetStream (acknowledged) and exit, so the workers
// find the beds before the measurement. Output: key=value lines.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nats/nats.h>

#include "eit/acquisition/ingest_frame.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/sinks/image_header.hpp"

namespace {

struct Args {
  std::string url, site = "bench";
  int beds = 200;
  double fps = 50, seconds = 10, drain = 10;
  bool prime = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "bench_nats_beds: %s\nusage: bench_nats_beds URL --beds N --fps F --seconds S "
               "[--drain S] [--site NAME] [--prime]\n",
               why);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + k).c_str());
      return argv[++i];
    };
    if (k == "--beds") a.beds = std::stoi(value());
    else if (k == "--fps") a.fps = std::stod(value());
    else if (k == "--seconds") a.seconds = std::stod(value());
    else if (k == "--drain") a.drain = std::stod(value());
    else if (k == "--site") a.site = value();
    else if (k == "--prime") a.prime = true;
    else if (a.url.empty() && !k.starts_with("--")) a.url = k;
    else usage(("unknown argument " + k).c_str());
  }
  if (a.url.empty()) usage("no server URL");
  if (a.beds < 1 || a.fps <= 0 || a.seconds <= 0) usage("beds, fps and seconds must be positive");
  return a;
}

void must(natsStatus s, const char* what) {
  if (s == NATS_OK) return;
  std::fprintf(stderr, "bench_nats_beds: %s: %s\n", what, natsStatus_GetText(s));
  std::exit(1);
}

// The viewer: counts images and keeps each one's latency (preallocated; extra ones are counted).
struct Viewer {
  std::vector<int64_t> latency_ns;
  std::atomic<size_t> n{0};
  static void on_image(natsConnection*, natsSubscription*, natsMsg* msg, void* self) {
    auto* v = static_cast<Viewer*>(self);
    const int64_t now = eit::pipeline::now_ns();
    if (natsMsg_GetDataLength(msg) >= static_cast<int>(sizeof(eit::sinks::ImageHeader))) {
      eit::sinks::ImageHeader h;
      std::memcpy(&h, natsMsg_GetData(msg), sizeof h);
      const size_t i = v->n.fetch_add(1, std::memory_order_relaxed);
      if (i < v->latency_ns.size()) v->latency_ns[i] = now - h.t_device_ns;
    }
    natsMsg_Destroy(msg);
  }
};

std::vector<uint8_t> frame(uint64_t seq, const std::vector<float>& values) {
  std::vector<uint8_t> out(
      eit::acquisition::ingest_frame_size(eit::acquisition::IngestSampleType::kF32, values.size()));
  out.resize(eit::acquisition::encode_ingest_frame(out, eit::acquisition::IngestSampleType::kF32,
                                                   seq, eit::pipeline::now_ns(), values));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  std::vector<float> values(208);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0f + 0.001f * static_cast<float>(i);
  std::vector<std::string> subjects(static_cast<size_t>(a.beds));
  for (int b = 0; b < a.beds; ++b) subjects[b] = "eit." + a.site + "." + std::to_string(b) + ".raw";

  natsConnection* pub = nullptr;
  must(natsConnection_ConnectTo(&pub, a.url.c_str()), "connect");
  if (a.prime) {
    jsCtx* js = nullptr;
    must(natsConnection_JetStream(&js, pub, nullptr), "JetStream");
    for (int b = 0; b < a.beds; ++b) {
      const auto f = frame(0, values);
      jsErrCode err;
      must(js_Publish(nullptr, js, subjects[b].c_str(), f.data(), static_cast<int>(f.size()),
                      nullptr, &err),
           "prime publish");
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(pub);
    std::printf("primed=%d\n", a.beds);
    return 0;
  }

  const auto ticks = static_cast<uint64_t>(a.seconds * a.fps);
  const uint64_t sent_total = ticks * static_cast<uint64_t>(a.beds);
  Viewer viewer;
  viewer.latency_ns.resize(sent_total + sent_total / 10);
  natsConnection* sub_nc = nullptr;
  natsOptions* so = nullptr;
  must(natsOptions_Create(&so), "options");
  must(natsOptions_SetURL(so, a.url.c_str()), "URL");
  must(natsConnection_Connect(&sub_nc, so), "viewer connect");
  natsSubscription* sub = nullptr;
  const std::string images = "eit." + a.site + ".*.img";
  must(natsConnection_Subscribe(&sub, sub_nc, images.c_str(), &Viewer::on_image, &viewer),
       "subscribe");
  natsSubscription_SetPendingLimits(sub, -1, -1);  // the viewer never drops: it counts
  natsConnection_Flush(sub_nc);

  std::vector<uint8_t> buf(
      eit::acquisition::ingest_frame_size(eit::acquisition::IngestSampleType::kF32, values.size()));
  const auto period = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / a.fps));
  uint64_t late_ticks = 0, publish_errors = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t k = 0; k < ticks; ++k) {
    const auto due = t0 + period * static_cast<int64_t>(k);
    const auto now = std::chrono::steady_clock::now();
    if (due > now) std::this_thread::sleep_until(due);
    else if (now - due > period) ++late_ticks;
    for (int b = 0; b < a.beds; ++b) {
      const size_t len = eit::acquisition::encode_ingest_frame(
          buf, eit::acquisition::IngestSampleType::kF32, k + 1, eit::pipeline::now_ns(), values);
      if (natsConnection_Publish(pub, subjects[b].c_str(), buf.data(), static_cast<int>(len)) !=
          NATS_OK)
        ++publish_errors;
    }
  }
  natsConnection_Flush(pub);
  const double send_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto drain_until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(a.drain * 1e3));
  while (viewer.n.load() < sent_total && std::chrono::steady_clock::now() < drain_until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  natsSubscription_Unsubscribe(sub);
  const size_t got = viewer.n.load();
  std::vector<int64_t> lat(viewer.latency_ns.begin(),
                           viewer.latency_ns.begin() + std::min(got, viewer.latency_ns.size()));
  std::sort(lat.begin(), lat.end());
  auto q = [&](double p) {
    return lat.empty() ? -1.0
                       : static_cast<double>(lat[std::min(lat.size() - 1,
                                                          static_cast<size_t>(p * lat.size()))]) /
                             1e6;
  };
  std::printf("sent=%llu\nsend_s=%.3f\noffered_per_s=%.0f\nlate_ticks=%llu\npublish_errors=%llu\n"
              "received=%zu\nmissing=%lld\np50_ms=%.2f\np99_ms=%.2f\nmax_ms=%.2f\n",
              static_cast<unsigned long long>(sent_total), send_s, sent_total / send_s,
              static_cast<unsigned long long>(late_ticks),
              static_cast<unsigned long long>(publish_errors), got,
              static_cast<long long>(sent_total) - static_cast<long long>(got), q(0.5), q(0.99),
              q(1.0));
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(sub_nc);
  natsOptions_Destroy(so);
  natsConnection_Destroy(pub);
  return 0;
}
