// NatsImageReader (what `listen nats://…` reads) against a real `nats-server -js`: a replay from a
// time starts with the series message in effect then (stored before that time) and interleaves
// later series messages with the images in stream order; a series-end before the start is not
// handed out; since=new starts with the bed's last series message. Each T is taken early in a
// second (wall_clock.hpp), where libnats alone would send the server a later start.
#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nats/nats.h>

#include "eit/nats/nats_image_reader.hpp"
#include "eit/nats/nats_streams.hpp"
#include "nats_server.hpp"
#include "wall_clock.hpp"

using namespace std::chrono_literals;

namespace {

// The image stream and a plain publisher (libnats directly, independent of the code under test).
class Publisher {
 public:
  explicit Publisher(const std::string& url) {
    natsConnection_ConnectTo(&nc_, url.c_str());
    natsConnection_JetStream(&js_, nc_, nullptr);
    const char* subjects[] = {"eit.*.*.img", "eit.*.*.series"};
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = eit::nats::kImageStream;
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 2;
    jsErrCode err;
    js_AddStream(nullptr, js_, &cfg, nullptr, &err);
  }
  ~Publisher() {
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  void put(const std::string& subject, const std::string& data) {
    jsErrCode err;
    REQUIRE(js_Publish(nullptr, js_, subject.c_str(), data.data(), static_cast<int>(data.size()),
                       nullptr, &err) == NATS_OK);
  }

 private:
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
};

std::vector<std::string> read_all(eit::nats::NatsImageReader& r) {
  std::vector<std::string> got;
  eit::nats::ImageStreamMessage m;
  while (r.next(m, 1000)) got.push_back(m.kind + " " + m.data);
  return got;
}

std::string joined(const std::vector<std::string>& got) {
  std::string seen;
  for (const auto& g : got) seen += g + " | ";
  return seen;
}

// A server with the image stream, a publisher, and bed icu.8's reader URI (skipped() says so, and
// the case returns, when nats-server is not installed).
struct BedOnServer {
  eit::test::NatsServer server;
  std::optional<Publisher> p;
  std::string bed = server.url() + "?site=icu&bed=8";
  BedOnServer() {
    if (server.available()) p.emplace(server.url());
  }
  bool skipped() const { return eit::test::skipped_without_nats(server); }
  void put(const std::string& subject, const std::string& data) { p->put(subject, data); }
};

}  // namespace

TEST_CASE_FIXTURE(BedOnServer,
                  "listen's NATS reader: a replay from a time starts with the series in effect, "
                  "then series and images in stream order") {
  if (skipped()) return;
  put("eit.icu.8.series", R"({"type":"series","id":1})");
  put("eit.icu.8.img", "image 0");
  put("eit.icu.8.series", R"({"type":"series","id":2})");  // in effect at the start below
  put("eit.icu.9.series", R"({"type":"series","id":99})");  // another bed's
  std::this_thread::sleep_for(100ms);
  const double start = eit::test::epoch_seconds_early_in_a_second();
  std::this_thread::sleep_for(100ms);
  put("eit.icu.8.img", "image 1");
  put("eit.icu.8.img", "image 2");
  put("eit.icu.8.series", R"({"type":"series","id":3})");
  put("eit.icu.8.img", "image 3");

  eit::nats::NatsImageReader replay(fmt::format("{}&since={:.3f}", bed, start));
  const std::vector<std::string> expected = {
      R"(series {"type":"series","id":2})", "img image 1", "img image 2",
      R"(series {"type":"series","id":3})", "img image 3"};
  const auto got = read_all(replay);
  CHECK_MESSAGE(got == expected, "got: " << joined(got));

  eit::nats::NatsImageReader all(bed + "&since=all");
  CHECK(read_all(all).size() == 7);

  // since=new: the last series message, then what comes.
  eit::nats::NatsImageReader live(bed);
  put("eit.icu.8.img", "image 4");
  const std::vector<std::string> live_expected = {R"(series {"type":"series","id":3})",
                                                  "img image 4"};
  CHECK(read_all(live) == live_expected);
}

TEST_CASE_FIXTURE(BedOnServer,
                  "listen's NATS reader: a series that ended before the start describes nothing "
                  "after it, and images stored in the start's second before it are not handed "
                  "out") {
  if (skipped()) return;
  put("eit.icu.8.series", R"({"type":"series","id":3})");
  // Stored in the same second as the start, before it (as a rule: unless the machine stalls for
  // 80 ms): the server, asked for the whole second, delivers "image 4" and the reader drops it.
  eit::test::epoch_seconds_at_fraction(0, 10'000'000);
  put("eit.icu.8.img", "image 4");
  put("eit.icu.8.series", R"({"type":"series-end","id":3})");
  const double later = eit::test::epoch_seconds_early_in_a_second();
  std::this_thread::sleep_for(100ms);
  put("eit.icu.8.img", "image 5");
  eit::nats::NatsImageReader after_end(fmt::format("{}&since={:.3f}", bed, later));
  const std::vector<std::string> after_expected = {"img image 5"};
  const auto after_got = read_all(after_end);
  CHECK_MESSAGE(after_got == after_expected, "got: " << joined(after_got));
}
