// model= (the model a gateway names on its raw frames) on the URI of a subscriber (`run --source`,
// `listen`, `view`, `reconstruct`, `worker`) is refused naming it; it was accepted and ignored.
// Against a real `nats-server -js`, so that the old code ran instead of waiting for a server.
#include <doctest/doctest.h>

#if __has_include(<nats/nats.h>)

#include <unistd.h>
#include <filesystem>
#include <string>
#include <vector>

#include "../nats/nats_server.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("model= on a subscriber's NATS URI is refused naming the option") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=1&model=adult";
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to",
                     server.url() + "?site=icu&bed=1", "--count", "5", "--unpaced"});
  REQUIRE(device.wait(60s) == 0);

  const auto dir =
      std::filesystem::temp_directory_path() / ("eit-subscriber-uri-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<std::vector<std::string>> commands{
      {EITSTREAM_BIN, "run", "--source", bed, "--frames", "5", "--reference", "first:1",
       "--endpoint", "tcp://127.0.0.1:*", "--quiet"},
      {EITSTREAM_BIN, "listen", bed, "--timeout", "1"},
      {EITSTREAM_BIN, "view", bed, "--http", "127.0.0.1:0", "--duration", "2"},
      {EITSTREAM_BIN, "reconstruct", bed, "-o", (dir / "images.h5").string(), "--quiet"},
      {EITSTREAM_BIN, "worker", server.url() + "?site=icu&model=adult", "--model-dir", dir.string(),
       "--duration", "1"}};
  for (const auto& command : commands) {
    Subprocess p(command);
    const int rc = p.wait(60s);
    INFO(command[1] << ": rc " << rc << ", stderr: " << p.err());
    CHECK(rc != 0);
    CHECK(p.err().find("model= is a publisher option") != std::string::npos);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

#endif  // libnats
