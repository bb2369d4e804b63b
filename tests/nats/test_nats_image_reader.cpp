// NatsImageReader (what `listen nats://…` reads) against a real `nats-server -js`: a replay from a
// time starts with the series message in effect then (stored before that time) and interleaves
// later series messages with the images in stream order; a series-end before the start is not
// handed out; since=new starts with the bed's last series message.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nats/nats.h>

#include "eit/nats/nats_image_reader.hpp"
#include "eit/nats/nats_streams.hpp"
#include "nats_server.hpp"

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

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> read_all(eit::nats::NatsImageReader& r) {
  std::vector<std::string> got;
  eit::nats::ImageStreamMessage m;
  while (r.next(m, 1000)) got.push_back(m.kind + " " + m.data);
  return got;
}

}  // namespace

TEST_CASE("listen's NATS reader: a replay from a time starts with the series in effect, then "
          "series and images in stream order") {
  eit::test::NatsServer server;
  if (!server.available()) {
    MESSAGE("SKIPPED: nats-server is not installed");
    return;
  }
  Publisher p(server.url());
  const std::string bed = server.url() + "?site=icu&bed=8";
  p.put("eit.icu.8.series", R"({"type":"series","id":1})");
  p.put("eit.icu.8.img", "image 0");
  p.put("eit.icu.8.series", R"({"type":"series","id":2})");  // in effect at the start below
  p.put("eit.icu.9.series", R"({"type":"series","id":99})");  // another bed's
  std::this_thread::sleep_for(100ms);
  const double start = epoch_seconds();
  std::this_thread::sleep_for(100ms);
  p.put("eit.icu.8.img", "image 1");
  p.put("eit.icu.8.img", "image 2");
  p.put("eit.icu.8.series", R"({"type":"series","id":3})");
  p.put("eit.icu.8.img", "image 3");

  eit::nats::NatsImageReader replay(fmt::format("{}&since={:.3f}", bed, start));
  const std::vector<std::string> expected = {
      R"(series {"type":"series","id":2})", "img image 1", "img image 2",
      R"(series {"type":"series","id":3})", "img image 3"};
  const auto got = read_all(replay);
  std::string seen;
  for (const auto& g : got) seen += g + " | ";
  CHECK_MESSAGE(got == expected, "got: " << seen);

  eit::nats::NatsImageReader all(bed + "&since=all");
  CHECK(read_all(all).size() == 7);

  // since=new: the last series message, then what comes.
  eit::nats::NatsImageReader live(bed);
  p.put("eit.icu.8.img", "image 4");
  const std::vector<std::string> live_expected = {R"(series {"type":"series","id":3})",
                                                  "img image 4"};
  CHECK(read_all(live) == live_expected);
}

// KNOWN BUG (issue 16, found 2026-12-03): a replay from a time sometimes delivers nothing at all
// (2 of 15 runs on an idle 2-core machine, also with 2 s per message). Likely cause: libnats
// 3.4.1 writes OptStartTime's nanoseconds as ".%ld" without zero padding, so a start whose
// fraction is under 0.1 s reaches the server up to 0.9 s later, past "image 5". The case runs and
// reports, but may fail until the start time is sent in a form libnats writes correctly.
TEST_CASE("listen's NATS reader: a series that ended before the start describes nothing after it" *
          doctest::may_fail()) {
  eit::test::NatsServer server;
  if (!server.available()) {
    MESSAGE("SKIPPED: nats-server is not installed");
    return;
  }
  Publisher p(server.url());
  const std::string bed = server.url() + "?site=icu&bed=8";
  p.put("eit.icu.8.series", R"({"type":"series","id":3})");
  p.put("eit.icu.8.img", "image 4");
  p.put("eit.icu.8.series", R"({"type":"series-end","id":3})");
  std::this_thread::sleep_for(100ms);
  const double later = epoch_seconds();
  std::this_thread::sleep_for(100ms);
  p.put("eit.icu.8.img", "image 5");
  eit::nats::NatsImageReader after_end(fmt::format("{}&since={:.3f}", bed, later));
  const std::vector<std::string> after_expected = {"img image 5"};
  const auto after_got = read_all(after_end);
  std::string after_seen;
  for (const auto& g : after_got) after_seen += g + " | ";
  CHECK_MESSAGE(after_got == after_expected, "got: " << after_seen);
}
