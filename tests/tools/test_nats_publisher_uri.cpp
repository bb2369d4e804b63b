// Options only a subscriber reads (since=: where a reader starts; scale=: the raw-frame readers'
// integer scale) on the URI of a publisher (`run --publish`, `emulate --to`) or of `worker`
// (whose start is --since) are refused naming them; they were accepted and ignored. Against a
// real `nats-server -js`, so that the old code ran instead of waiting for a server.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <unistd.h>
#include <filesystem>
#include <string>

#include "../nats/nats_server.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("since= or scale= on a publisher's or a worker's NATS URI is refused naming the option") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=1";

  Subprocess run({EITSTREAM_BIN, "run", "--frames", "5", "--endpoint", "tcp://127.0.0.1:*",
                  "--publish", bed + "&since=new", "--quiet"});
  CHECK(run.wait(60s) != 0);
  CHECK(run.err().find("since= is a subscriber option") != std::string::npos);

  Subprocess scaled({EITSTREAM_BIN, "run", "--frames", "5", "--endpoint", "tcp://127.0.0.1:*",
                     "--publish", bed + "&scale=0.5", "--quiet"});
  CHECK(scaled.wait(60s) != 0);
  CHECK(scaled.err().find("scale= is a subscriber option") != std::string::npos);

  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed + "&since=all",
                     "--count", "5", "--unpaced"});
  CHECK(device.wait(60s) != 0);
  CHECK(device.err().find("since= is a subscriber option") != std::string::npos);

  const auto models =
      std::filesystem::temp_directory_path() / ("eit-publisher-uri-" + std::to_string(getpid()));
  std::filesystem::create_directories(models);
  Subprocess worker({EITSTREAM_BIN, "worker", server.url() + "?since=new", "--model-dir",
                     models.string(), "--duration", "1"});
  CHECK(worker.wait(60s) != 0);
  CHECK(worker.err().find("give --since") != std::string::npos);
  std::error_code ec;
  std::filesystem::remove_all(models, ec);
}

#endif  // libnats
