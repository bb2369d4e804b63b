// `eitstream listen` through the real binary: how it ends (a signal, --count not reached, a
// shm:// ring that is missing or left by a killed publisher), what it counts per series
// (restarts, duplicates, late images, the publisher's drops) and what --save leaves on disk.
// Images come from `eitstream run` or, where exact counts need exact input, from a PUSH socket
// here. Checks counts and exit statuses, never timing numbers.
#include <doctest/doctest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "cli_run.hpp"
#include "eit/recon/array_file.hpp"
#include "eit/sinks/image_header.hpp"
#include "subprocess.hpp"

using eit::test::contains;
using eit::test::run_eitstream;
using eit::test::Subprocess;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// The endpoint `eitstream run` reports on stderr.
std::string bound_endpoint(Subprocess& run) {
  REQUIRE(run.wait_for_stderr(" on tcp://", 120s));
  std::smatch m;
  const std::string err = run.err();
  REQUIRE(std::regex_search(err, m, std::regex(R"( on (tcp://127\.0\.0\.1:\d+))")));
  return m[1];
}

// Sends image and series messages to one `listen --pull`, as a publisher would.
class FakePublisher {
 public:
  FakePublisher() : socket_(ctx_, zmq::socket_type::push) {
    socket_.set(zmq::sockopt::linger, 5000);
    socket_.set(zmq::sockopt::sndtimeo, 30000);  // a PUSH waits for its peer to connect
    socket_.bind("tcp://127.0.0.1:*");
  }
  std::string endpoint() { return socket_.get(zmq::sockopt::last_endpoint); }
  void image(uint64_t series_id, uint64_t seq, uint32_t dropped_before) {
    eit::sinks::ImageHeader h;
    h.ndim = 1;
    h.shape[0] = 4;
    h.count = 4;
    h.seq = seq;
    h.series_id = series_id;
    h.dropped_before = dropped_before;
    const float values[4] = {0, 1, 2, static_cast<float>(seq)};
    std::array<zmq::const_buffer, 3> parts = {zmq::str_buffer("eit/fake/img"),
                                              zmq::buffer(&h, sizeof h), zmq::buffer(values)};
    REQUIRE(zmq::send_multipart(socket_, parts));
  }
  void series_end(uint64_t series_id, uint64_t frames_sent) {
    const std::string json =
        fmt::format(R"({{"type":"series-end","version":1,"stream":"fake","series_id":"{:016x}",)"
                    R"("frames_sent":{},"frames_dropped":0}})",
                    series_id, frames_sent);
    std::array<zmq::const_buffer, 2> parts = {zmq::str_buffer("eit/fake/series"),
                                              zmq::buffer(json)};
    REQUIRE(zmq::send_multipart(socket_, parts));
  }

 private:
  zmq::context_t ctx_{1};
  zmq::socket_t socket_;
};

size_t files_in(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("SIGINT and SIGTERM end listen on ZeroMQ with its summary and status 0") {
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    Subprocess run(
        {EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:*", "--fps", "100", "--quiet"});
    Subprocess listen({EITSTREAM_BIN, "listen", bound_endpoint(run), "--summary"});
    // listen waits in its receive call nearly all the time: the signal interrupts that call.
    std::this_thread::sleep_for(1500ms);
    listen.signal(sig);
    CHECK(listen.wait(30s) == 0);
    INFO(listen.err());
    CHECK(contains(listen.out(), "images "));
    CHECK_FALSE(contains(listen.err(), "Interrupted system call"));
    run.signal(SIGINT);
    CHECK(run.wait(60s) == 0);
  }
}

TEST_CASE("listen counts per series: a restart is a new series and duplicates are counted apart") {
  FakePublisher pub;
  Subprocess listen({EITSTREAM_BIN, "listen", pub.endpoint(), "--pull", "--summary",
                     "--exit-on-end", "--timeout", "60"});
  const uint64_t a = 0xa1, b = 0xb2;
  // Series a: listen's first image says 7 frames were dropped before it (before listen's first
  // seq: not counted); 12 comes late; 13 twice; 14 and 15 dropped by the publisher.
  pub.image(a, 10, 7);
  pub.image(a, 11, 0);
  pub.image(a, 13, 0);
  pub.image(a, 12, 0);
  pub.image(a, 13, 0);
  pub.image(a, 16, 2);
  // Series b: the publisher restarted, seq starts again; 2 was lost on the way, unreported.
  pub.image(b, 0, 0);
  pub.image(b, 1, 0);
  pub.image(b, 3, 0);
  // Series b sent 6 images: seq 2 and two after seq 3 never came.
  pub.series_end(b, 6);
  REQUIRE(listen.wait(60s) == 0);
  INFO(listen.out());
  INFO(listen.err());
  CHECK(contains(listen.out(),
                 "images 9, missing by seq 3, reported dropped 2, out of order 1, malformed 0, "
                 "duplicates 1, series 2, series messages 1, sent not received 3 (1 series-end "
                 "with frames_sent), series ended"));
}

TEST_CASE("listen exits 3 when fewer images than --count came before --timeout") {
  // Nobody publishes there: no image can come.
  const auto r = run_eitstream("listen tcp://127.0.0.1:9 --summary --count 5 --timeout 1");
  INFO(r.output);
  CHECK(r.code == 3);
  CHECK(contains(r.output, "images 0, missing by seq 0"));
  CHECK(contains(r.output, "0 of the 5 images of --count received before the timeout"));
  // …and says why: nothing listens at that address.
  CHECK(contains(r.output, "tcp://127.0.0.1:9: no publisher accepts connections there"));
  CHECK(contains(r.output, "before the timeout (no publisher accepts connections there"));
  CHECK(contains(run_eitstream("listen --help").output, "3 --count was given and fewer images"));
}

TEST_CASE("listen shm:// of a ring that never appears says so and exits 1") {
  const std::string uri = fmt::format("shm://eit-listen-missing-{}", ::getpid());
  const auto r = run_eitstream(fmt::format("listen {} --summary --timeout 1", uri));
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, fmt::format("no publisher was found: {}: no such ring", uri)));
}

TEST_CASE(
    "listen shm:// reports a killed publisher's series once and does not attach its ring again") {
  const std::string name = fmt::format("eit-listen-killed-{}", ::getpid());
  const std::string uri = "shm://" + name;
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:*", "--publish", uri,
                  "--fps", "100", "--quiet"});
  REQUIRE(run.wait_for_stderr("also publishing to shared memory", 120s));
  Subprocess listen({EITSTREAM_BIN, "listen", uri, "--summary", "--timeout", "4"});
  std::this_thread::sleep_for(1s);  // attached (it looks every 2 ms) and reading
  run.signal(SIGKILL);              // leaves /dev/shm/eit.NAME behind
  CHECK(run.wait(30s) == -1);
  CHECK(listen.wait(30s) == 0);
  INFO(listen.out());
  CHECK(contains(listen.out(), "series 1, series messages 2"));  // one series, one series-end
  // A listener started now finds only the dead publisher's ring: no series, a clear failure.
  const auto late = run_eitstream(fmt::format("listen {} --timeout 1", uri));
  INFO(late.output);
  CHECK(late.code == 1);
  CHECK(contains(late.output, "a ring left by a publisher that has ended or is gone"));
  CHECK_FALSE(contains(late.output, "series-end"));
  fs::remove(fs::path("/dev/shm") / ("eit." + name));
}

TEST_CASE("listen --save keeps the images of every series and never overwrites a file") {
  const fs::path dir = eit::test::fresh_work_dir("listen_save");
  const std::string save = (dir / "images").string();
  // Two runs, one after the other, each saved by its own listener into the same folder: every
  // run numbers its frames from 0 again.
  for (int i = 0; i < 2; ++i) {
    Subprocess run({EITSTREAM_BIN, "run", "--push", "--policy", "lossless", "--frames", "30",
                    "--fps", "0", "--endpoint", "tcp://127.0.0.1:*", "--quiet"});
    Subprocess listen({EITSTREAM_BIN, "listen", bound_endpoint(run), "--pull", "--summary",
                       "--exit-on-end", "--timeout", "60", "--save", save});
    CHECK(listen.wait(90s) == 0);
    CHECK(run.wait(60s) == 0);
    INFO(listen.out());
    CHECK(contains(listen.out(), "images 30,"));
    CHECK(contains(listen.out(), "saved 30"));
  }
  CHECK(files_in(save) == 60);
  // The same images again (a repeated series from a fake publisher): existing files are kept, the
  // listener counts and reports them and exits 4.
  FakePublisher pub;
  Subprocess first({EITSTREAM_BIN, "listen", pub.endpoint(), "--pull", "--summary", "--count", "2",
                    "--timeout", "60", "--save", save});
  pub.image(0xc3, 0, 0);
  pub.image(0xc3, 1, 0);
  CHECK(first.wait(60s) == 0);
  // A saved image reads back as a float32 .npy of the image's shape and values.
  const auto saved = eit::recon::read_npy(fs::path(save) / "img_00000000000000c3_00000001.npy");
  CHECK(saved.shape == std::vector<size_t>{4});
  CHECK(saved.real == std::vector<double>{0, 1, 2, 1});
  const auto kept = fs::last_write_time(fs::path(save) / "img_00000000000000c3_00000000.npy");
  FakePublisher again;
  Subprocess second({EITSTREAM_BIN, "listen", again.endpoint(), "--pull", "--summary", "--count",
                     "2", "--timeout", "60", "--save", save});
  again.image(0xc3, 0, 0);
  again.image(0xc3, 2, 0);
  CHECK(second.wait(60s) == 4);
  INFO(second.out());
  INFO(second.err());
  CHECK(contains(second.out(), "saved 1, not saved 1 (file existed), 0 (write failed)"));
  CHECK(contains(second.err(), "img_00000000000000c3_00000000.npy: exists, not overwritten"));
  CHECK(fs::last_write_time(fs::path(save) / "img_00000000000000c3_00000000.npy") == kept);
  CHECK(files_in(save) == 63);
  fs::remove_all(dir);
}
