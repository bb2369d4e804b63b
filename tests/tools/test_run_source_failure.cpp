// `eitstream run` with a live source that never yields a valid frame ends with exit status 5 and
// the reason: a refused connection, a device/model mismatch (every frame rejected). The status
// line says why frames are rejected. Real processes and loopback sockets (issue 10, finding 3:
// the old run exited 0 with "frames: in 0", or printed "0.0 frames/s" forever).
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "emulate_process.hpp"
#include "subprocess.hpp"

using eit::test::EmulateProcess;
using eit::test::Subprocess;
using namespace std::chrono_literals;

namespace {

// A loopback port nothing listens on (bound, read back, released).
int unused_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("run: a refused connection is not exit status 0, and the reason is printed") {
  const std::string uri = "tcp://127.0.0.1:" + std::to_string(unused_port());
  Subprocess run({EITSTREAM_BIN, "run", "--source", uri, "--duration", "1.5", "--endpoint",
                  "tcp://127.0.0.1:*", "--backend", "cpu", "--quiet"});
  const int rc = run.wait(60s);
  CAPTURE(run.err());
  CHECK(rc == 5);
  CHECK(run.err().find("source failed: no valid frame from " + uri) != std::string::npos);
  CHECK(run.err().find("Connection refused") != std::string::npos);
  CHECK(run.out().find("frames: in 0") != std::string::npos);
}

TEST_CASE("run --source-timeout: a source that never yields a frame ends the run by itself") {
  const std::string uri = "tcp://127.0.0.1:" + std::to_string(unused_port());
  Subprocess run({EITSTREAM_BIN, "run", "--source", uri, "--source-timeout", "1", "--endpoint",
                  "tcp://127.0.0.1:*", "--backend", "cpu", "--quiet"});
  const int rc = run.wait(60s);  // no --duration: only the timeout can end it
  CAPTURE(run.err());
  CHECK(rc == 5);
  CHECK(run.err().find("no valid frame from " + uri + " in 1 s") != std::string::npos);
}

TEST_CASE("run: a device/model mismatch ends with status 5, naming both value counts") {
  // A 32-electrode device (928 values per frame) against the built-in 16-electrode model (208).
  EmulateProcess device({"--from", "synthetic", "--electrodes", "32", "--h0", "0.2", "--to",
                         "tcp-listen://127.0.0.1:0", "--fps", "50"});
  const std::string receiver = device.line_after("receiver: ", 60s);
  REQUIRE_FALSE(receiver.empty());
  Subprocess run({EITSTREAM_BIN, "run", "--source", receiver, "--source-timeout", "2", "--endpoint",
                  "tcp://127.0.0.1:*", "--backend", "cpu"});
  const int rc = run.wait(60s);
  CAPTURE(run.err());
  CHECK(rc == 5);
  CHECK(run.err().find("source failed: no valid frame from") != std::string::npos);
  CHECK(run.err().find("claiming 928 values rejected, the model has 208") != std::string::npos);
  // The status line (one per 0.5 s when stderr is not a terminal) counts the rejected frames.
  CHECK(run.err().find("| rejected frames ") != std::string::npos);
}
