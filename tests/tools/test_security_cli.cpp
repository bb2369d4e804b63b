// docs/security.md through the real binary on loopback: keygen's files, run with CURVE and an
// allow list, listen with an allowed key, an unknown key and no key, and the loopback rule
// (a non-loopback bind without CURVE is refused; --insecure allows it with a warning).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <zmq.hpp>

#include <fmt/format.h>

#include "file_text.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::string bound_endpoint(const std::string& err) {
  std::smatch m;
  if (std::regex_search(err, m, std::regex(R"(on (tcp://[0-9.]+:\d+))"))) return m[1];
  return {};
}

uint64_t images_of(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(images (\d+),)"))) return UINT64_MAX;
  return std::stoull(m[1]);
}

fs::path keys_dir() {
  const fs::path d = fs::path(EIT_BINARY_DIR) / fmt::format("test-security-keys-{}", getpid());
  fs::remove_all(d);
  fs::create_directories(d / "allow");
  for (const char* who : {"server", "alice", "mallory"}) {
    Subprocess k({EITSTREAM_BIN, "keygen", (d / who).string()});
    REQUIRE(k.wait(30s) == 0);
  }
  fs::copy_file(d / "alice", d / "allow" / "alice");
  return d;
}

}  // namespace

TEST_CASE("keygen writes NAME and NAME_secret (0600) and refuses to overwrite without --force") {
  const fs::path d = keys_dir();
  struct stat st {};
  REQUIRE(stat((d / "server_secret").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  Subprocess again({EITSTREAM_BIN, "keygen", (d / "server").string()});
  CHECK(again.wait(30s) != 0);
  CHECK(again.err().find("--force") != std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("run with CURVE: an allowed listen receives, an unknown key and plaintext get nothing") {
  const fs::path d = keys_dir();
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:*", "--fps", "200",
                  "--duration", "8", "--curve-secret", (d / "server_secret").string(),
                  "--curve-allow", (d / "allow").string()});
  REQUIRE(run.wait_for_stderr("CURVE on", 120s));
  const std::string endpoint = bound_endpoint(run.err());
  REQUIRE_FALSE(endpoint.empty());
  const std::string server = (d / "server").string();
  Subprocess alice({EITSTREAM_BIN, "listen", endpoint, "--summary", "--count", "50", "--timeout",
                    "5", "--curve-server-key", server, "--curve-secret",
                    (d / "alice_secret").string()});
  Subprocess mallory({EITSTREAM_BIN, "listen", endpoint, "--summary", "--timeout", "3",
                      "--curve-server-key", server, "--curve-secret",
                      (d / "mallory_secret").string()});
  Subprocess plain({EITSTREAM_BIN, "listen", endpoint, "--summary", "--timeout", "3"});
  REQUIRE(alice.wait(30s) == 0);
  REQUIRE(mallory.wait(30s) == 0);
  REQUIRE(plain.wait(30s) == 0);
  REQUIRE(run.wait(60s) == 0);
  INFO(run.out());
  CHECK(images_of(alice.out()) == 50);
  CHECK(images_of(mallory.out()) == 0);
  CHECK(images_of(plain.out()) == 0);
  // listen says why it gets nothing, as the live view does.
  CHECK(mallory.err().find("the publisher refused this client's CURVE key") != std::string::npos);
  // libzmq reports a plain client's failure as a mechanism mismatch, or only as a broken
  // handshake, depending on its version and timing: either names the handshake.
  CHECK((plain.err().find("security mismatch: the publisher uses CURVE") != std::string::npos ||
         plain.err().find("ZeroMQ handshake failed") != std::string::npos));
  CHECK(alice.err().find("connected to " + endpoint) != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(run.out(), m,
                            std::regex(R"(CURVE admitted (\d+), refused (\d+) \((\d+) unknown)")));
  CHECK(std::stoull(m[1]) >= 1);
  CHECK(std::stoull(m[2]) >= 2);
  CHECK(std::stoull(m[3]) >= 1);
  fs::remove_all(d);
}

// (No ";" in test names: CTest would split the name and run nothing.)
TEST_CASE("a non-loopback bind without CURVE is refused, --insecure allows it with a warning") {
  Subprocess refused({EITSTREAM_BIN, "run", "--endpoint", "tcp://0.0.0.0:*", "--frames", "1"});
  CHECK(refused.wait(120s) != 0);
  CHECK(refused.err().find("reachable from the network and not secured") != std::string::npos);
  CHECK(refused.err().find("--insecure") != std::string::npos);

  Subprocess http({EITSTREAM_BIN, "run", "--http", "0.0.0.0:0", "--frames", "1"});
  CHECK(http.wait(120s) != 0);
  CHECK(http.err().find("--http '0.0.0.0:0'") != std::string::npos);

  Subprocess ingest({EITSTREAM_BIN, "run", "--source", "tcp-listen://0.0.0.0:0", "--frames", "1"});
  CHECK(ingest.wait(120s) != 0);
  CHECK(ingest.err().find("tls-listen://") != std::string::npos);

  Subprocess insecure({EITSTREAM_BIN, "run", "--endpoint", "tcp://0.0.0.0:*", "--frames", "20",
                       "--fps", "0", "--insecure", "--quiet"});
  CHECK(insecure.wait(120s) == 0);
  CHECK(insecure.err().find("WARNING") != std::string::npos);
  CHECK(insecure.out().find("frames: in 20, reconstructed 20") != std::string::npos);
  CHECK(insecure.out().find("sink zmq: sent 20, dropped 0") != std::string::npos);
}

static size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("the loopback rule speaks once: a refusal without warnings, --insecure with one") {
  Subprocess refused({EITSTREAM_BIN, "run", "--endpoint", "tcp://0.0.0.0:*", "--frames", "1"});
  CHECK(refused.wait(120s) != 0);
  CHECK(refused.err().find("not secured") != std::string::npos);
  CHECK(count_of(refused.err(), "WARNING") == 0);

  Subprocess insecure({EITSTREAM_BIN, "run", "--endpoint", "tcp://0.0.0.0:*", "--monitor",
                       "tcp://127.0.0.1:*", "--frames", "5", "--fps", "0", "--insecure",
                       "--quiet"});
  CHECK(insecure.wait(120s) == 0);
  INFO(insecure.err());
  CHECK(count_of(insecure.err(), "WARNING") == 1);
  CHECK(insecure.err().find("--endpoint 'tcp://0.0.0.0:") != std::string::npos);

  // :PORT binds the live view on 127.0.0.1: nothing to warn about.
  Subprocess http({EITSTREAM_BIN, "run", "--http", ":0", "--frames", "5", "--fps", "0", "--quiet"});
  CHECK(http.wait(120s) == 0);
  CHECK(count_of(http.err(), "WARNING") == 0);
}

TEST_CASE("CURVE options come in pairs") {
  Subprocess run({EITSTREAM_BIN, "run", "--curve-secret", "x", "--frames", "1"});
  CHECK(run.wait(60s) != 0);
  CHECK(run.err().find("--curve-allow") != std::string::npos);
  Subprocess listen({EITSTREAM_BIN, "listen", "tcp://127.0.0.1:1", "--curve-server-key", "x"});
  CHECK(listen.wait(60s) != 0);
  CHECK(listen.err().find("--curve-secret") != std::string::npos);
}

namespace {

// The z85 value of `field` ("public-key", "secret-key") in a keygen certificate file.
std::string z85_field(const fs::path& file, const std::string& field) {
  std::smatch m;
  const std::string all = eit::test::file_text(file);
  if (std::regex_search(all, m, std::regex(field + R"re( = "([^"]{40})")re"))) return m[1];
  return {};
}

// Global-index messages received in `seconds` by a CURVE SUB with `who`'s key pair.
size_t indices_received(const std::string& endpoint, const fs::path& server, const fs::path& who,
                        int seconds) {
  zmq::context_t ctx(1);
  zmq::socket_t sub(ctx, zmq::socket_type::sub);
  sub.set(zmq::sockopt::curve_serverkey, z85_field(server, "public-key"));
  sub.set(zmq::sockopt::curve_publickey, z85_field(who, "public-key"));
  sub.set(zmq::sockopt::curve_secretkey, z85_field(fs::path(who.string() + "_secret"), "secret-key"));
  sub.set(zmq::sockopt::subscribe, "eit/");
  sub.set(zmq::sockopt::rcvtimeo, 200);
  sub.set(zmq::sockopt::linger, 0);
  sub.connect(endpoint);
  size_t n = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  zmq::message_t part;
  while (std::chrono::steady_clock::now() < until)
    if (sub.recv(part) && part.to_string().ends_with("/global")) ++n;
  return n;
}

}  // namespace

TEST_CASE("run --indices with CURVE: allowed off loopback, an allowed key receives, others not") {
  const fs::path d = keys_dir();
  Subprocess run({EITSTREAM_BIN, "run", "--endpoint", "tcp://127.0.0.1:*", "--indices",
                  "tcp://0.0.0.0:*", "--fps", "100", "--duration", "8", "--quiet",
                  "--curve-secret", (d / "server_secret").string(), "--curve-allow",
                  (d / "allow").string()});
  REQUIRE(run.wait_for_stderr("CURVE on", 120s));
  std::smatch m;
  const std::string err = run.err();
  REQUIRE(std::regex_search(err, m, std::regex(R"(indices on tcp://0\.0\.0\.0:(\d+))")));
  const std::string endpoint = "tcp://127.0.0.1:" + m[1].str();
  const size_t alice = indices_received(endpoint, d / "server", d / "alice", 3);
  const size_t mallory = indices_received(endpoint, d / "server", d / "mallory", 2);
  CHECK(run.wait(60s) == 0);
  INFO(run.err());
  CHECK(alice > 50);
  CHECK(mallory == 0);
  std::smatch counts;
  REQUIRE(std::regex_search(run.out(), counts,
                            std::regex(R"(indices publisher: CURVE admitted (\d+), refused (\d+))")));
  CHECK(std::stoull(counts[1]) >= 1);
  CHECK(std::stoull(counts[2]) >= 1);
  fs::remove_all(d);
}

TEST_CASE("run --config names the CURVE files: curve_secret and curve_allow, insecure") {
  const fs::path d = keys_dir();
  auto config = [&](const std::string& name, const std::string& json) {
    const fs::path p = d / name;
    std::ofstream(p) << json;
    return p.string();
  };
  const std::string both = config(
      "curve.json", fmt::format(R"({{"curve_secret": "{}", "curve_allow": "{}", "endpoint": )"
                                R"("tcp://0.0.0.0:*", "frames": 20, "fps": 0, "quiet": true}})",
                                (d / "server_secret").string(), (d / "allow").string()));
  Subprocess curve({EITSTREAM_BIN, "run", "--config", both});
  CHECK(curve.wait(120s) == 0);
  INFO(curve.err());
  CHECK(curve.err().find("CURVE on") != std::string::npos);
  CHECK(curve.out().find("sink zmq: sent 20, dropped 0") != std::string::npos);

  const std::string half = config(
      "half.json", fmt::format(R"({{"curve_secret": "{}", "frames": 1}})",
                               (d / "server_secret").string()));
  Subprocess refused({EITSTREAM_BIN, "run", "--config", half});
  CHECK(refused.wait(120s) != 0);
  CHECK(refused.err().find("--curve-allow") != std::string::npos);

  const std::string insecure = config(
      "insecure.json",
      R"({"insecure": true, "endpoint": "tcp://0.0.0.0:*", "frames": 5, "fps": 0, "quiet": true})");
  Subprocess open_bind({EITSTREAM_BIN, "run", "--config", insecure});
  CHECK(open_bind.wait(120s) == 0);
  CHECK(open_bind.err().find("(--insecure)") != std::string::npos);
  fs::remove_all(d);
}
