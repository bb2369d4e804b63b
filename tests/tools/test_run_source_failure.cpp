// `eitstream run` with a live source that never yields a valid frame ends with exit status 5 and
// the reason: a refused connection, a device/model mismatch (every frame rejected). The status
// line says why frames are rejected. Real processes and loopback sockets (issue 10, finding 3:
// the old run exited 0 with "frames: in 0", or printed "0.0 frames/s" forever).
#include <doctest/doctest.h>

#include <string>

#include "emulate_process.hpp"
#include "loopback_port.hpp"
#include "subprocess.hpp"

using eit::test::EmulateProcess;
using eit::test::Subprocess;
using namespace std::chrono_literals;

TEST_CASE("run: a refused connection is not exit status 0, and the reason is printed") {
  const std::string uri = "tcp://127.0.0.1:" + std::to_string(eit::test::unused_loopback_port());
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
  const std::string uri = "tcp://127.0.0.1:" + std::to_string(eit::test::unused_loopback_port());
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

// A device or link that is absent at start-up is a source failure (5), like one that stops
// sending, not a wrong command (1): the old run exited 1 for both cases below.
TEST_CASE(
    "run: a host that does not resolve and a serial device that is absent end with status 5") {
  Subprocess tcp({EITSTREAM_BIN, "run", "--source", "tcp://no-such-host.invalid:5000", "--endpoint",
                  "tcp://127.0.0.1:*", "--backend", "cpu", "--quiet"});
  CHECK(tcp.wait(60s) == 5);
  CAPTURE(tcp.err());
  CHECK(tcp.err().find("source failed: tcp://no-such-host.invalid:5000: cannot resolve host") !=
        std::string::npos);
  Subprocess serial({EITSTREAM_BIN, "run", "--source",
                     "serial:///dev/eitstream-no-such-tty?format=ingest", "--endpoint",
                     "tcp://127.0.0.1:*", "--backend", "cpu", "--quiet"});
  CHECK(serial.wait(60s) == 5);
  CAPTURE(serial.err());
  CHECK(serial.err().find("cannot open (No such file or directory)") != std::string::npos);
  // A wrong URI stays a wrong command.
  Subprocess no_port({EITSTREAM_BIN, "run", "--source", "tcp://127.0.0.1:0", "--endpoint",
                      "tcp://127.0.0.1:*", "--backend", "cpu", "--quiet"});
  CHECK(no_port.wait(60s) == 1);
}

// serial:// reads OpenEIT lines by default, which drive opposite electrodes; the built-in model
// drives adjacent ones. The refusal says how to get a model that fits (the old one named only
// the first measurement the device lacks).
TEST_CASE("run: serial with the built-in model says which model OpenEIT frames need") {
  Subprocess run({EITSTREAM_BIN, "run", "--source", "serial:///dev/eitstream-no-such-tty",
                  "--endpoint", "tcp://127.0.0.1:*", "--backend", "cpu", "--quiet"});
  CHECK(run.wait(60s) == 1);
  CAPTURE(run.err());
  CHECK(run.err().find("--electrodes 16 --drive-distance 8") != std::string::npos);
  CHECK(run.err().find("format=ingest") != std::string::npos);
}

TEST_CASE("a command line that does not parse exits 2, not CLI11's own 100-115") {
  Subprocess unknown({EITSTREAM_BIN, "run", "--no-such-option"});
  CHECK(unknown.wait(60s) == 2);
  CHECK(unknown.err().find("--no-such-option") != std::string::npos);
  Subprocess not_a_number({EITSTREAM_BIN, "run", "--fps", "fast"});
  CHECK(not_a_number.wait(60s) == 2);
  Subprocess help({EITSTREAM_BIN, "run", "--help"});
  CHECK(help.wait(60s) == 0);
  CHECK(help.out().find("Exit status:") != std::string::npos);
}
