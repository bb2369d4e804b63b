// `eitstream worker` decodes integer raw frames with the scale their gateway states on each
// (Eit-Scale): a bed of i16 frames gives the images of a bed of the same values as floats. It
// decoded them with scale 1, a bed having no scale of its own: images 10^7 times too large.
// Against a real `nats-server -js`.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "eit/recon/protocol.hpp"
#include "eit/sinks/image_header.hpp"
#include "subprocess.hpp"
#include "worker_command.hpp"

using eit::acquisition::IngestSampleType;
using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

constexpr double kScale = 1e-7;

// Publishes `count` frames on `subject`, of values that are whole multiples of kScale, as `type`;
// with `scale_header`, each states Eit-Scale.
void publish(const std::string& url, const char* subject, IngestSampleType type, int count,
             bool scale_header) {
  const eit::test::JetStreamConnection c(url);
  const size_t n = eit::recon::make_protocol({}).n_meas();
  std::vector<float> values(n);
  std::vector<uint8_t> frame(eit::acquisition::ingest_frame_size(type, n));
  const std::string scale_text = fmt::format("{}", kScale);
  for (int seq = 0; seq < count; ++seq) {
    for (size_t i = 0; i < n; ++i)
      values[i] =
          static_cast<float>(static_cast<double>(10000 + (i * 37 + seq * 11) % 2000) * kScale);
    const size_t len = eit::acquisition::encode_ingest_frame(frame, type, seq, -1, values, kScale);
    natsMsg* msg = nullptr;
    REQUIRE(natsMsg_Create(&msg, subject, nullptr, reinterpret_cast<const char*>(frame.data()),
                           static_cast<int>(len)) == NATS_OK);
    if (scale_header) REQUIRE(natsMsgHeader_Set(msg, "Eit-Scale", scale_text.c_str()) == NATS_OK);
    REQUIRE(js_PublishMsg(nullptr, c.js, msg, nullptr, nullptr) == NATS_OK);
    natsMsg_Destroy(msg);
  }
}

// The images' values, one image after the other.
std::vector<float> image_values(const std::string& url, const char* subject, size_t count) {
  std::vector<float> out;
  for (const auto& m : eit::test::fetch_all(url, "EIT_IMAGES", subject, count, 10s)) {
    const size_t at = sizeof(eit::sinks::ImageHeader);
    const size_t floats = (m.data.size() - at) / sizeof(float);
    const size_t old = out.size();
    out.resize(old + floats);
    std::memcpy(out.data() + old, m.data.data() + at, floats * sizeof(float));
  }
  return out;
}

}  // namespace

TEST_CASE(
    "a worker decodes integer raw frames with the Eit-Scale they state into the images of the "
    "same values as floats") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const eit::test::WorkerModelDir models("eit-worker-scale-");

  // The worker makes the streams; the frames wait in EIT_RAW until it reads them.
  Subprocess worker(eit::test::worker_command(server.url(), models));
  REQUIRE(worker.wait_for_stderr("frames 0,", 60s));
  publish(server.url(), "eit.icu.30.raw", IngestSampleType::kF32, 10, false);
  publish(server.url(), "eit.icu.31.raw", IngestSampleType::kI16, 10, true);
  REQUIRE(worker.wait_for_stderr("frames 20,", 60s));
  worker.signal(SIGINT);
  CHECK(worker.wait(30s) == 0);

  const auto floats = image_values(server.url(), "eit.icu.30.img", 10);
  const auto integers = image_values(server.url(), "eit.icu.31.img", 10);
  REQUIRE(floats.size() == integers.size());
  REQUIRE(!floats.empty());
  double largest = 0, difference = 0;
  for (size_t i = 0; i < floats.size(); ++i) {
    if (!std::isfinite(floats[i])) continue;  // outside the domain
    largest = std::max(largest, std::abs(static_cast<double>(floats[i])));
    difference = std::isfinite(integers[i])
                     ? std::max(difference, std::abs(static_cast<double>(floats[i]) - integers[i]))
                     : HUGE_VAL;
  }
  CHECK(largest > 0);
  CHECK(difference <= 1e-5 * largest);
}

#endif  // libnats
