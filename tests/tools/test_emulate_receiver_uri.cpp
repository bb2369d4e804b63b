// Every `receiver:` URI `eitstream emulate` prints is one `eitstream run --source` takes as it is:
// run opens it, reads the frames and exits 0. The old emulate appended "?format=…" to a URI that
// had a query already, so for a NATS bed it printed "nats://…?site=icu&bed=5?format=ingest",
// which run refused ("bed '5?format=ingest' is not one subject token").
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../nats/nats_server.hpp"
#include "emulate_process.hpp"
#include "loopback_port.hpp"
#include "subprocess.hpp"

using eit::test::EmulateProcess;
using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

// `run --source receiver` for 5 frames: its exit status, with what it printed for the report.
int run_source(const std::string& receiver, std::string& said) {
  Subprocess run({EITSTREAM_BIN, "run", "--source", receiver, "--frames", "5", "--reference",
                  "first:1", "--source-timeout", "30", "--endpoint", "tcp://127.0.0.1:*",
                  "--backend", "cpu", "--quiet"});
  const int rc = run.wait(120s);
  said = run.out() + run.err();
  return rc;
}

std::vector<std::string> synthetic(std::vector<std::string> more) {
  std::vector<std::string> a = {"--from", "synthetic", "--h0", "0.2", "--fps", "200"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace

TEST_CASE(
    "run --source takes the receiver URI emulate prints for tcp-listen tcp udp pty and file") {
  const std::string capture = (std::filesystem::temp_directory_path() /
                               ("emulate_receiver_" + std::to_string(getpid()) + ".eitf"))
                                  .string();
  const std::vector<std::vector<std::string>> targets = {
      {"--to", "tcp-listen://127.0.0.1:0"},
      {"--to", "tcp://127.0.0.1:" + std::to_string(eit::test::unused_loopback_port(SOCK_STREAM))},
      {"--to", "udp://127.0.0.1:" + std::to_string(eit::test::unused_loopback_port(SOCK_DGRAM))},
      {"--to", "pty"},
      {"--to", "file://" + capture, "--count", "10"},
      {"--to", "tcp-listen://127.0.0.1:0", "--sample-type", "i16"},
  };
  for (const auto& target : targets) {
    CAPTURE(target[1]);
    EmulateProcess emulate(synthetic(target));
    const std::string receiver = emulate.line_after("receiver: ", 60s);
    CAPTURE(receiver);
    REQUIRE_FALSE(receiver.empty());
    CHECK(receiver.find('?') == receiver.rfind('?'));                    // one query
    if (target[1].starts_with("file://")) REQUIRE(emulate.wait() == 0);  // the whole capture
    std::string said;
    CHECK(run_source(receiver, said) == 0);
    CAPTURE(said);
    CHECK(said.find("frames: in 5") != std::string::npos);
  }
  std::filesystem::remove(capture);
}

TEST_CASE("run --source takes the receiver URI emulate prints for a NATS bed") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  for (const char* sample_type : {"f32", "i16"}) {
    CAPTURE(sample_type);
    const std::string bed = server.url() + "?site=icu&bed=" + (sample_type[0] == 'f' ? "5" : "6");
    Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--h0", "0.2", "--to", bed,
                       "--count", "20", "--unpaced", "--sample-type", sample_type});
    REQUIRE(device.wait(120s) == 0);
    const std::string out = device.out();
    const auto at = out.find("receiver: ");
    REQUIRE(at != std::string::npos);
    const std::string receiver = out.substr(at + 10, out.find('\n', at) - at - 10);
    CAPTURE(receiver);
    CHECK(receiver.starts_with(bed));
    CHECK(receiver.find('?') == receiver.rfind('?'));
    CHECK(receiver.find("format=") == std::string::npos);  // NATS raw frames are ingest framing
    CHECK((receiver.find("&scale=") != std::string::npos) == (sample_type[0] == 'i'));
    std::string said;
    CHECK(run_source(receiver, said) == 0);
    CAPTURE(said);
    CHECK(said.find("frames: in 5") != std::string::npos);
  }
}

TEST_CASE("emulate refuses OpenEIT lines to NATS whose readers decode ingest frames only") {
  Subprocess device({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--format", "openeit", "--to",
                     "nats://127.0.0.1:1?site=icu&bed=5", "--count", "1"});
  CHECK(device.wait(60s) == 1);
  CHECK(device.err().find("NATS carries raw frames in ingest framing only") != std::string::npos);
}
