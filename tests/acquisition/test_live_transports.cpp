// Live transports end to end on loopback, in process: a DeviceLink sends as a device would (from
// a thread where the receiver must run concurrently), open_live_source receives. Every frame
// arrives in order with the same values; loss, reordering, reconnects and stop() are counted or
// honoured.
#include <doctest/doctest.h>

#include <chrono>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/openeit_line_writer.hpp"
#include "live_test_support.hpp"

using namespace eit::acquisition;
using eit::test::read_frames;
using eit::test::test_frame;

namespace {

constexpr size_t kN = 208;

std::vector<uint8_t> ingest(uint64_t seq, size_t n = kN) {
  std::vector<uint8_t> out(ingest_frame_size(IngestSampleType::kF32, n));
  REQUIRE(encode_ingest_frame(out, IngestSampleType::kF32, seq, -1, test_frame(seq, n)) ==
          out.size());
  return out;
}

// Sends frames first..last-1 over the link (after a receiver is there).
void send_range(DeviceLink& link, uint64_t first, uint64_t last) {
  REQUIRE(link.wait_for_receiver(std::chrono::seconds(10)));
  for (uint64_t s = first; s < last; ++s) link.send(ingest(s));
}

void check_in_order(const std::vector<eit::test::ReceivedFrame>& got, uint64_t first,
                    uint64_t count) {
  REQUIRE(got.size() == count);
  for (uint64_t i = 0; i < count; ++i) {
    CAPTURE(i);
    CHECK(got[i].seq == first + i);
    CHECK(got[i].values == test_frame(first + i, kN));
    CHECK(got[i].received_ns > 0);
  }
}

// A port nothing listens on right now (bound, read back, released).
uint16_t free_port() {
  auto probe = open_device_link("tcp-listen://127.0.0.1:0");
  const auto ep = probe->endpoint();
  return static_cast<uint16_t>(std::stoi(ep.substr(ep.rfind(':') + 1)));
}

// What a 30 s read on another thread returns when stop() comes 50 ms into it.
eit::pipeline::ReadStatus read_while_stopped(StreamSource& source, eit::test::OwnedSlot& s) {
  eit::pipeline::ReadStatus status = eit::pipeline::ReadStatus::kFrame;
  std::thread reader([&] { status = source.read(s.slot, std::chrono::seconds(30)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  source.stop();
  reader.join();
  return status;
}

}  // namespace

TEST_CASE("tcp-listen source receives every frame in order from a connecting device") {
  auto source = open_live_source("tcp-listen://127.0.0.1:0", {}, eit::test::adjacent16());
  auto link = open_device_link("tcp://" + source->endpoint());
  std::thread device([&] { send_range(*link, 0, 300); });
  const auto got = read_frames(*source, 300);
  device.join();
  check_in_order(got, 0, 300);
  const auto st = source->stats();
  CHECK(st.frames == 300);
  CHECK(st.seq_gaps == 0);
  CHECK(st.reconnects == 0);
}

TEST_CASE("tcp client source receives every frame in order from a listening device") {
  auto link = open_device_link("tcp-listen://127.0.0.1:0");
  auto source = open_live_source(link->receiver_uri(), {}, eit::test::adjacent16());
  std::thread device([&] { send_range(*link, 100, 400); });
  const auto got = read_frames(*source, 300);
  device.join();
  check_in_order(got, 100, 300);
  CHECK(source->stats().seq_gaps == 0);
}

TEST_CASE("tcp client keeps retrying a device that is not up yet and connects when it is") {
  const uint16_t port = free_port();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  auto source = open_live_source("tcp://" + where, {}, eit::test::adjacent16());
  eit::test::OwnedSlot s(kN);
  CHECK(source->read(s.slot, std::chrono::milliseconds(150)) ==
        eit::pipeline::ReadStatus::kTimeout);
  CHECK(source->stats().last_error.find("connect failed") != std::string::npos);
  auto link = open_device_link("tcp-listen://" + where);
  std::thread device([&] { send_range(*link, 0, 20); });
  const auto got = read_frames(*source, 20);
  device.join();
  check_in_order(got, 0, 20);
  CHECK(source->stats().reconnects == 0);  // the first connection is not a reconnect
}

TEST_CASE("tcp client reconnects after the device restarts and reports the seq gap") {
  auto first = open_device_link("tcp-listen://127.0.0.1:0");
  const std::string where = first->endpoint();
  auto source = open_live_source("tcp://" + where, {}, eit::test::adjacent16());
  std::thread device([&] { send_range(*first, 0, 50); });
  auto before = read_frames(*source, 50);
  device.join();
  check_in_order(before, 0, 50);
  first.reset();                                            // the device goes away mid-stream…
  auto second = open_device_link("tcp-listen://" + where);  // …and comes back, 10 frames later
  std::thread device2([&] { send_range(*second, 60, 100); });
  const auto after = read_frames(*source, 40);
  device2.join();
  REQUIRE(after.size() == 40);
  CHECK(after[0].seq == 60);
  CHECK((after[0].flags & eit::pipeline::kFlagGapBefore) != 0);
  CHECK((after[1].flags & eit::pipeline::kFlagGapBefore) == 0);
  CHECK(after[39].values == test_frame(99, kN));
  const auto st = source->stats();
  CHECK(st.reconnects == 1);
  CHECK(st.seq_gaps == 10);
  CHECK(st.frames == 90);
  CHECK(st.last_error.find("reconnected") != std::string::npos);
}

TEST_CASE("tcp client follows a device that reboots: its seq restarts lower, no frame is lost") {
  auto first = open_device_link("tcp-listen://127.0.0.1:0");
  const std::string where = first->endpoint();
  auto source = open_live_source("tcp://" + where, {}, eit::test::adjacent16());
  std::thread device([&] { send_range(*first, 100, 150); });
  check_in_order(read_frames(*source, 50), 100, 50);
  device.join();
  first.reset();
  auto second = open_device_link("tcp-listen://" + where);  // rebooted: counts from 0 again
  std::thread device2([&] { send_range(*second, 0, 40); });
  const auto after = read_frames(*source, 40);
  device2.join();
  check_in_order(after, 0, 40);
  CHECK((after[0].flags & eit::pipeline::kFlagGapBefore) != 0);
  const auto st = source->stats();
  CHECK(st.reordered == 0);
  CHECK(source->seq_restarts() == 1);
  CHECK(st.last_error.find("device seq restarted 1 time(s), last at 0 where 150 was expected") !=
        std::string::npos);
}

TEST_CASE("tcp-listen source accepts the device again after it disconnects") {
  auto source = open_live_source("tcp-listen://127.0.0.1:0", {}, eit::test::adjacent16());
  {
    auto link = open_device_link("tcp://" + source->endpoint());
    send_range(*link, 0, 5);
  }
  auto link = open_device_link("tcp://" + source->endpoint());
  send_range(*link, 5, 10);
  const auto got = read_frames(*source, 10);
  check_in_order(got, 0, 10);
  CHECK(source->stats().reconnects == 1);
}

namespace {

// A device that dies in the middle of a frame and never comes back: the frame it broke off is
// counted when the loss is seen (it used to be counted only on a reconnect, so a dead device
// left no trace of it).
void send_and_die_mid_frame(DeviceLink& link) {
  send_range(link, 0, 3);
  const auto whole = ingest(3);
  link.send(std::span<const uint8_t>(whole).first(whole.size() / 2));
  link.drain(std::chrono::seconds(5));
}

void check_one_bad_after_loss(StreamSource& source) {
  check_in_order(read_frames(source, 3), 0, 3);
  eit::test::OwnedSlot s(kN);
  for (int i = 0; i < 20 && source.stats().bad_frames == 0; ++i)
    CHECK(source.read(s.slot, std::chrono::milliseconds(100)) != eit::pipeline::ReadStatus::kFrame);
  CHECK(source.stats().bad_frames == 1);
}

}  // namespace

TEST_CASE("tcp-listen source counts the frame a device that died broke off") {
  auto source = open_live_source("tcp-listen://127.0.0.1:0", {}, eit::test::adjacent16());
  std::thread device([&] {
    auto link = open_device_link("tcp://" + source->endpoint());
    send_and_die_mid_frame(*link);
  });
  check_one_bad_after_loss(*source);
  device.join();
}

TEST_CASE("tcp client source counts the frame a device that died broke off") {
  auto link = open_device_link("tcp-listen://127.0.0.1:0");
  auto source = open_live_source("tcp://" + link->endpoint(), {}, eit::test::adjacent16());
  std::thread device([&] {
    send_and_die_mid_frame(*link);
    link.reset();  // the device is gone: its listening socket and connection close
  });
  check_one_bad_after_loss(*source);
  device.join();
}

TEST_CASE("udp source counts a dropped and a swapped datagram by seq") {
  auto source = open_live_source("udp://127.0.0.1:0", {}, eit::test::adjacent16());
  auto link = open_device_link(std::string("udp://") + source->endpoint());
  for (uint64_t s : {0, 1, 2, /* 3 lost */ 4, 5, 7, 6 /* swapped */, 8, 9}) link->send(ingest(s));
  const auto got = read_frames(*source, 8, std::chrono::seconds(3));
  std::vector<uint64_t> seqs;
  for (const auto& f : got) seqs.push_back(f.seq);
  CHECK(seqs == std::vector<uint64_t>{0, 1, 2, 4, 5, 7, 8, 9});  // 6 came too late: dropped
  CHECK((got[3].flags & eit::pipeline::kFlagGapBefore) != 0);
  CHECK(got[7].values == test_frame(9, kN));
  const auto st = source->stats();
  CHECK(st.seq_gaps == 2);   // 3, and 6 which was not there when 7 came
  CHECK(st.reordered == 1);  // 6
  CHECK(st.frames == 8);
}

TEST_CASE("udp device that restarts its seq is followed after a short run of late frames") {
  auto source = open_live_source("udp://127.0.0.1:0", {}, eit::test::adjacent16());
  auto link = open_device_link(std::string("udp://") + source->endpoint());
  for (uint64_t s = 0; s < 20; ++s) link->send(ingest(s));
  for (uint64_t s = 0; s < 10; ++s) link->send(ingest(s));  // restarted: 0, 1, 2, 3, …
  const auto got = read_frames(*source, 27, std::chrono::seconds(3));
  REQUIRE(got.size() == 27);
  CHECK(got[19].seq == 19);
  CHECK(got[20].seq == 3);  // 0, 1, 2 were taken for late frames; 3 shows the restart
  CHECK((got[20].flags & eit::pipeline::kFlagGapBefore) != 0);
  CHECK(got[26].seq == 9);
  CHECK(got[26].values == test_frame(9, kN));
  CHECK(source->stats().reordered == 3);
  CHECK(source->seq_restarts() == 1);
  CHECK(source->stats().last_error.find("restarted") != std::string::npos);
}

TEST_CASE("udp datagram carrying several frames delivers each of them") {
  auto source = open_live_source("udp://127.0.0.1:0", {}, eit::test::adjacent16());
  auto link = open_device_link(std::string("udp://") + source->endpoint());
  std::vector<uint8_t> datagram;
  for (uint64_t s = 0; s < 3; ++s) {
    const auto f = ingest(s);
    datagram.insert(datagram.end(), f.begin(), f.end());
  }
  link->send(datagram);
  link->send(ingest(3));
  check_in_order(read_frames(*source, 4, std::chrono::seconds(3)), 0, 4);
}

TEST_CASE("serial source reads ingest frames through a pty pair") {
  auto link = open_device_link("pty");
  auto source = open_live_source(link->receiver_uri() + "?baud=115200&format=ingest", {},
                                 eit::test::adjacent16());
  std::thread device([&] { send_range(*link, 0, 30); });
  const auto got = read_frames(*source, 30);
  device.join();
  check_in_order(got, 0, 30);
}

TEST_CASE("serial source names a baud rate the device refuses instead of calling it absent") {
  auto link = open_device_link("pty");
  try {
    (void)open_live_source(link->receiver_uri() + "?baud=250000&format=ingest", {},
                           eit::test::adjacent16());
    FAIL("a baud rate the port refuses was taken");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("the device refused baud=250000") != std::string::npos);
  }
}

TEST_CASE("serial source reads OpenEIT lines at 115200 8N1 through a pty pair") {
  // A 16-electrode OpenEIT device: opposition drive, 16 × 12 = 192 magnitudes per line.
  const auto protocol = eit::recon::make_protocol({.n_electrodes = 16, .drive_distance = 8});
  REQUIRE(protocol.n_meas() == 192);
  auto link = open_device_link("pty");
  auto source =
      open_live_source(link->receiver_uri() + "?baud=115200&bits=8&parity=n&stop=1", {}, protocol);
  CHECK(source->describe().find("openeit") != std::string::npos);
  std::vector<std::vector<float>> sent;
  std::thread device([&] {
    std::vector<char> line(openeit_line_capacity(192));
    link->send(std::vector<uint8_t>{'b', 'o', 'o', 't', '\r', '\n'});  // firmware chatter
    for (int k = 0; k < 12; ++k) {
      std::vector<float> v(192);
      for (size_t i = 0; i < v.size(); ++i) v[i] = 100.0f + static_cast<float>(k) + 0.0625f * i;
      sent.push_back(v);
      const size_t len = format_openeit_line(v, line);
      link->send({reinterpret_cast<const uint8_t*>(line.data()), len});
    }
  });
  const auto got = read_frames(*source, 12);
  device.join();
  REQUIRE(got.size() == 12);
  for (size_t k = 0; k < got.size(); ++k) {
    CHECK(got[k].seq == k);  // numbered by the source: OpenEIT lines carry none
    for (size_t i = 0; i < 192; ++i)
      CHECK(got[k].values[i] == doctest::Approx(sent[k][i]).epsilon(1e-6));
  }
  CHECK(source->stats().bad_frames == 0);
}

TEST_CASE("read returns kTimeout when nothing arrives and kStopped promptly after stop()") {
  auto source = open_live_source("tcp-listen://127.0.0.1:0", {}, eit::test::adjacent16());
  eit::test::OwnedSlot s(kN);
  CHECK(source->read(s.slot, std::chrono::milliseconds(20)) == eit::pipeline::ReadStatus::kTimeout);
  CHECK(read_while_stopped(*source, s) == eit::pipeline::ReadStatus::kStopped);
  CHECK(source->read(s.slot, std::chrono::seconds(30)) == eit::pipeline::ReadStatus::kStopped);
}

TEST_CASE("stop() interrupts a udp and a connected tcp read as well") {
  for (const char* uri : {"udp://127.0.0.1:0", "tcp-listen://127.0.0.1:0"}) {
    CAPTURE(uri);
    auto source = open_live_source(uri, {}, eit::test::adjacent16());
    std::unique_ptr<DeviceLink> link;
    if (std::string(uri).starts_with("tcp")) {
      link = open_device_link("tcp://" + source->endpoint());
      REQUIRE(link->wait_for_receiver(std::chrono::seconds(5)));
    }
    eit::test::OwnedSlot s(kN);
    CHECK(read_while_stopped(*source, s) == eit::pipeline::ReadStatus::kStopped);
  }
}

TEST_CASE("live source URIs are checked and errors name the URI and what was expected") {
  const auto p = eit::test::adjacent16();
  CHECK_THROWS_WITH(open_live_source("ftp://x:1", {}, p), doctest::Contains("expected one of"));
  CHECK_THROWS_WITH(open_live_source("tcp://127.0.0.1:http", {}, p),
                    doctest::Contains("port 'http'"));
  CHECK_THROWS_WITH(open_live_source("tcp://127.0.0.1:0", {}, p), doctest::Contains("1..65535"));
  CHECK_THROWS_WITH(open_live_source("udp://localhost-not-an-ip:0", {}, p),
                    doctest::Contains("not an IP address"));
  CHECK_THROWS_WITH(open_live_source("serial:///dev/does-not-exist?format=ingest", {}, p),
                    doctest::Contains("cannot open"));
  CHECK_THROWS_WITH(open_live_source("udp://127.0.0.1:0?format=morse", {}, p),
                    doctest::Contains("expected ingest or openeit"));
  CHECK_THROWS_WITH(open_live_source("serial:///dev/null?baud=fast&format=ingest", {}, p),
                    doctest::Contains("baud='fast'"));
  const auto u = parse_live_uri("serial:///dev/ttyUSB0?baud=9600&format=ingest");
  CHECK(u.path == "/dev/ttyUSB0");
  CHECK(u.query.at("baud") == "9600");
  CHECK(parse_live_uri("tcp-listen://127.0.0.1:*").port == 0);
}
