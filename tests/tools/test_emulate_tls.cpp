// `eitstream emulate` over TLS both ways, end to end on loopback: a device that listens
// (--to tls-listen://) read by a tls-connect:// source, and a device that connects (--to tls-connect://) to a
// tls-listen:// source; every frame arrives in order. Certificates are made by openssl (skipped
// visibly without it).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "../acquisition/live_test_support.hpp"
#include "../acquisition/tls_test_certificates.hpp"
#include "cli_run.hpp"
#include "eit/acquisition/live_source.hpp"
#include "emulate_process.hpp"

using namespace eit::acquisition;
using eit::test::EmulateProcess;
using eit::test::read_frames;

namespace {

constexpr size_t kFrames = 30;

void check_in_order(const std::vector<eit::test::ReceivedFrame>& got) {
  REQUIRE(got.size() == kFrames);
  for (size_t i = 0; i < kFrames; ++i) CHECK(got[i].seq == i);
}

}  // namespace

TEST_CASE("emulate --to tls-listen://: a tls-connect:// source verifies the device and reads every frame") {
  const eit::test::TlsTestCertificates p;
  if (p.missing()) return;
  EmulateProcess emulate({"--from", "synthetic", "--count", std::to_string(kFrames), "--fps", "400",
                          "--wait-s", "30", "--to",
                          p.server_listen_uri() + "&ca=" + p("ward.pem")});
  const std::string receiver = emulate.line_after("receiver: ");
  REQUIRE(receiver.rfind("tls-connect://127.0.0.1:", 0) == 0);
  auto source = open_live_source(
      fmt::format("{}&ca={}&cert={}&key={}&name=server", receiver, p("ward.pem"),
                  p("device.pem"), p("device.key")),
      {}, eit::test::adjacent16());
  check_in_order(read_frames(*source, kFrames, std::chrono::seconds(60)));
  CHECK(emulate.wait() == 0);
}

TEST_CASE("emulate --to tls-connect://: the device's client certificate admits it to tls-listen://") {
  const eit::test::TlsTestCertificates p;
  if (p.missing()) return;
  auto source =
      open_live_source(p.server_listen_uri() + "&ca=" + p("ward.pem"), {}, eit::test::adjacent16());
  EmulateProcess emulate({"--from", "synthetic", "--count", std::to_string(kFrames), "--fps",
                          "400", "--wait-s", "30", "--to",
                          fmt::format("tls-connect://{}?cert={}&key={}&ca={}&name=server",
                                      source->endpoint(), p("device.pem"), p("device.key"),
                                      p("ward.pem"))});
  check_in_order(read_frames(*source, kFrames, std::chrono::seconds(60)));
  CHECK(emulate.wait() == 0);
}

TEST_CASE("emulate checks the --to TLS files before it builds the phantom naming the file") {
  // The start line ("emulate: synthetic phantom …: 208 values per frame …") comes once the
  // phantom is built; a mistyped file must be refused before it.
  const std::string none = "/nonexistent-eit-tls";
  const struct {
    std::string to, said;
  } cases[] = {
      {fmt::format("tls-listen://127.0.0.1:0?cert={0}/server.pem&key={0}/server.key", none),
       fmt::format("cert='{}/server.pem' cannot be read (No such file or directory)", none)},
      {fmt::format("tls-connect://127.0.0.1:1?ca={}/ward.pem", none),
       fmt::format("ca='{}/ward.pem' cannot be read (No such file or directory)", none)},
      {fmt::format("tls-connect://127.0.0.1:1?ca={0}/ward.pem&cert={0}/device.pem", none),
       "cert= given without key=; expected both"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.to);
    const auto r =
        eit::test::run_eitstream(fmt::format("emulate --from synthetic --count 1 --to '{}'", c.to));
    CAPTURE(r.output);
    CHECK(r.code == 1);
    CHECK(eit::test::contains(r.output, fmt::format("device link '{}': {}", c.to, c.said)));
    CHECK_FALSE(eit::test::contains(r.output, "values per frame"));
  }
}
