// A bed served by `eitstream worker` has its series message (the image geometry) in EIT_IMAGES,
// as a bed published by `run --publish nats://…` has: without it `view` waits forever for the
// geometry and `listen` counts no series message. Against a real `nats-server -js`.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../nats/nats_server.hpp"
#include "../nats/nats_test_support.hpp"
#include "eit/sinks/image_header.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE(
    "a worker publishes its bed's series message before the images and a listener decodes "
    "them with it") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const auto models =
      std::filesystem::temp_directory_path() / ("eit-worker-series-" + std::to_string(getpid()));
  std::filesystem::create_directories(models);
  Subprocess build({EITSTREAM_BIN, "model", "build", "-o", (models / "default.h5").string()});
  REQUIRE(build.wait(120s) == 0);

  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=7&model=default", "--count", "100",
                     "--unpaced"});
  REQUIRE(device.wait(120s) == 0);
  Subprocess worker({EITSTREAM_BIN, "worker", server.url(), "--model-dir", models.string(),
                     "--status-interval", "0.2"});
  REQUIRE(worker.wait_for_stderr("frames 100,", 60s));

  // In the stream: a series message first, naming the images' series and shape.
  const auto series = eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.7.series", 10, 2s);
  const auto images = eit::test::fetch_all(server.url(), "EIT_IMAGES", "eit.icu.7.img", 100, 10s);
  REQUIRE(!series.empty());
  REQUIRE(images.size() == 100);
  const auto h = eit::sinks::decode_image_header(
      std::as_bytes(std::span(images[0].data.data(), images[0].data.size())));
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
  std::error_code ec;
  std::filesystem::remove_all(models, ec);
}

#endif  // libnats
