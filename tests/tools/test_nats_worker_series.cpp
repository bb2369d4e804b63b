// A bed served by `eitstream worker` has its series message (the image geometry) in EIT_IMAGES,
// as a bed published by `run --publish nats://…` has: without it `view` waits forever for the
// geometry and `listen` counts no series message. Its rate_hz is the rate the gateway states on
// the raw frames (Eit-Rate); it was 0, the worker knowing no rate. Against a real `nats-server
// -js`.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "eit/recon/protocol.hpp"
#include "subprocess.hpp"
#include "worker_command.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE(
    "a worker publishes its bed's series message before the images and a listener decodes "
    "them with it") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const eit::test::WorkerModelDir models("eit-worker-series-");

  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=7&model=default", "--count", "100",
                     "--unpaced"});
  REQUIRE(device.wait(120s) == 0);
  Subprocess worker(eit::test::worker_command(server.url(), models));
  REQUIRE(worker.wait_for_stderr("frames 100,", 60s));

  // In the stream: a series message first, naming the images' series and shape.
  const auto series = eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.7.series", 10, 2s);
  const auto images = eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.7.img", 100, 10s);
  REQUIRE(!series.empty());
  REQUIRE(images.size() == 100);
  const auto h = eit::test::image_header_of(images[0]);
  REQUIRE(h.has_value());
  const auto json = nlohmann::json::parse(series[0].data);
  CHECK(json["type"] == "series");
  CHECK(json["stream"] == "icu.7");
  CHECK(json["series_id"] == fmt::format("{:016x}", h->series_id));
  CHECK(json["image"]["shape"] == (h->ndim == 2 ? nlohmann::json({h->shape[0], h->shape[1]})
                                                : nlohmann::json({h->shape[0]})));

  // A live listener starting now gets the bed's series message (the last one stored); one
  // reading the history gets it ahead of every image.
  Subprocess live(
      {EITSTREAM_BIN, "listen", server.url() + "?site=icu&bed=7", "--summary", "--timeout", "2"});
  REQUIRE(live.wait(30s) == 0);
  CHECK(live.out().find("images 0,") != std::string::npos);
  CHECK(live.out().find("series messages 1") != std::string::npos);
  Subprocess all({EITSTREAM_BIN, "listen", server.url() + "?site=icu&bed=7&since=all", "--count",
                  "100", "--timeout", "20"});
  REQUIRE(all.wait(60s) == 0);
  const std::string& out = all.out();
  INFO("listen: " << out.substr(0, 400));
  CHECK(out.starts_with("series "));
  CHECK(out.find("images 100, missing by seq 0, reported dropped 0, out of order 0, malformed 0") !=
        std::string::npos);

  worker.signal(SIGINT);
  CHECK(worker.wait(30s) == 0);
}

TEST_CASE(
    "a worker's series message states the frame rate its gateway measures at and 0 for raw "
    "frames that state none") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const eit::test::WorkerModelDir models("eit-worker-rate-");

  // Bed 3: a gateway at 12.5 frames/s (unpaced: the rate is the measurement's, not the sending's).
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=3", "--fps", "12.5", "--count", "30",
                     "--unpaced"});
  REQUIRE(device.wait(120s) == 0);
  // Bed 4: raw frames as a gateway before Eit-Rate published them: no header at all.
  {
    const eit::test::JetStreamConnection c(server.url());
    const size_t n = eit::recon::make_protocol({}).n_meas();
    const std::vector<float> values(n, 1.0f);
    std::vector<uint8_t> frame(
        eit::acquisition::ingest_frame_size(eit::acquisition::IngestSampleType::kF32, n));
    for (uint64_t seq = 0; seq < 30; ++seq) {
      const size_t len = eit::acquisition::encode_ingest_frame(
          frame, eit::acquisition::IngestSampleType::kF32, seq, -1, values);
      REQUIRE(js_Publish(nullptr, c.js, "eit.icu.4.raw", frame.data(), static_cast<int>(len),
                         nullptr, nullptr) == NATS_OK);
    }
  }
  Subprocess worker(eit::test::worker_command(server.url(), models));
  REQUIRE(worker.wait_for_stderr("frames 60,", 60s));
  worker.signal(SIGINT);
  CHECK(worker.wait(30s) == 0);

  const auto rate_of = [&](const char* subject) {
    const auto series = eit::test::fetch_all(server.url(), "EIT_IMAGES", subject, 10, 2s);
    REQUIRE(!series.empty());
    return nlohmann::json::parse(series.back().data)["rate_hz"].get<double>();
  };
  CHECK(rate_of("eit.icu.3.series") == 12.5);
  CHECK(rate_of("eit.icu.4.series") == 0);
  CHECK(eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.4.img", 30, 10s).size() == 30);
}

#endif  // libnats
