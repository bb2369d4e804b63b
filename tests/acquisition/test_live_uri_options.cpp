// The query options of live source URIs: an option the scheme does not take (a typo such as
// idel=5, a wrong case such as Idle=5), one given twice, or a value out of its range is refused
// at once, naming the whole URI, the option and what is expected. Before, such options were
// ignored and `run` waited for its source timeout. Also: the role (source, device link) and its
// schemes in every refusal, and the TLS files read before anything opens.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include <fmt/format.h>

#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/measurement_map.hpp"
#include "live_test_support.hpp"
#include "tls_test_certificates.hpp"

using namespace eit::acquisition;

namespace {

// The message open_live_source(uri, options) throws ("" when it opens).
std::string refusal(const std::string& uri, const LiveSourceOptions& options = {}) {
  try {
    open_live_source(uri, options, eit::test::adjacent16());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("an option a tcp or udp source does not take is refused naming it and the valid ones") {
  const std::string idel = refusal("tcp://127.0.0.1:27099?idel=5");
  CHECK(idel ==
        "source 'tcp://127.0.0.1:27099?idel=5': option 'idel' unknown; expected format, complex, "
        "scale, rate, idle, keepalive, connect_timeout");
  CHECK(refusal("tcp://127.0.0.1:27099?Idle=5").find("option 'Idle' unknown") != std::string::npos);
  CHECK(refusal("tcp://127.0.0.1:27099?bogus=1").find("option 'bogus' unknown") !=
        std::string::npos);
  const std::string udp = refusal("udp://127.0.0.1:0?bogus=1");
  CHECK(udp ==
        "source 'udp://127.0.0.1:0?bogus=1': option 'bogus' unknown; expected format, complex, "
        "scale, rate");
  // TCP-only options are not options of udp://, and a listener has no connect timeout.
  CHECK(refusal("udp://127.0.0.1:0?idle=1").find("option 'idle' unknown") != std::string::npos);
  CHECK(refusal("tcp-listen://127.0.0.1:0?connect_timeout=1")
            .find("option 'connect_timeout' unknown") != std::string::npos);
}

TEST_CASE("serial and file sources refuse options they do not take") {
  CHECK(refusal("serial:///dev/null?format=ingest&baud=9600&speed=2") ==
        "source 'serial:///dev/null?format=ingest&baud=9600&speed=2': option 'speed' unknown; "
        "expected format, complex, scale, rate, baud, bits, parity, stop, flow");
  CHECK(refusal("file:///nonexistent.eitf?loops=1")
            .find("option 'loops' unknown; expected format, complex, scale, rate, loop") !=
        std::string::npos);
  CHECK(refusal("file:///nonexistent.eitf?loop=yes") ==
        "source 'file:///nonexistent.eitf?loop=yes': loop='yes'; expected 0 or 1");
}

TEST_CASE("option values out of range are refused naming the option and the range") {
  CHECK(refusal("tcp://127.0.0.1:27099?idle=-1") ==
        "source 'tcp://127.0.0.1:27099?idle=-1': idle=-1 is out of range; expected seconds, 0 "
        "(never) to 3600");
  CHECK(refusal("tcp://127.0.0.1:27099?idle=3601").find("idle=3601 is out of range") !=
        std::string::npos);
  CHECK(refusal("tcp://127.0.0.1:27099?rate=0").find("rate=0 is out of range") !=
        std::string::npos);
  CHECK(refusal("udp://127.0.0.1:0?scale=0").find("scale=0 is out of range; expected a finite") !=
        std::string::npos);
  CHECK(refusal("udp://127.0.0.1:0?scale=inf").find("scale=inf is out of range") !=
        std::string::npos);
  CHECK(
      refusal("udp://127.0.0.1:0?complex=phase").find("source 'udp://127.0.0.1:0?complex=phase'") !=
      std::string::npos);
}

TEST_CASE("a value that is not a number is named with the whole URI, port included") {
  CHECK(refusal("tcp://127.0.0.1:27099?scale=abc") ==
        "source 'tcp://127.0.0.1:27099?scale=abc': option scale='abc' is not a number; expected "
        "a finite number other than 0");
  CHECK(refusal("tcp://127.0.0.1:27099?idle=") ==
        "source 'tcp://127.0.0.1:27099?idle=': option idle='' is not a number; expected seconds, "
        "0 (never) to 3600");
}

TEST_CASE("idle= out of its range is refused once naming the range") {
  CHECK(refusal("tcp://127.0.0.1:27099?idle=3601") ==
        "source 'tcp://127.0.0.1:27099?idle=3601': idle=3601 is out of range; expected seconds, 0 "
        "(never) to 3600");
  CHECK(refusal("tcp://127.0.0.1:27099?idle=-1").find("idle=-1 is out of range") !=
        std::string::npos);
  CHECK(refusal("tcp://127.0.0.1:27099?idle=nan").find("out of range") != std::string::npos);
  CHECK(refusal("tcp://127.0.0.1:27099?idle=2") == "");
}

TEST_CASE("complex= takes real or imag or magnitude and refuses interleaved naming the parts") {
  for (const char* part : {"real", "imag", "magnitude"}) {
    CAPTURE(part);
    CHECK(refusal(std::string("udp://127.0.0.1:0?complex=") + part) == "");
  }
  CHECK(refusal("udp://127.0.0.1:0?complex=interleaved") ==
        "source 'udp://127.0.0.1:0?complex=interleaved': complex='interleaved'; expected real, "
        "imag or magnitude (interleaved (re, im) pairs are for recordings: --complex "
        "interleaved)");
  // OpenEIT lines carry no complex samples, but the option is still checked.
  CHECK(refusal("tcp://127.0.0.1:27099?format=openeit&complex=interleaved")
            .find("complex='interleaved'; expected real, imag or magnitude") != std::string::npos);
  CHECK(refusal("udp://127.0.0.1:0?complex=phase") ==
        "source 'udp://127.0.0.1:0?complex=phase': complex='phase'; expected real, imag or "
        "magnitude");
}

TEST_CASE("complex= refuses abs: magnitude is the one name for |z|") {
  CHECK(refusal("udp://127.0.0.1:0?complex=abs") ==
        "source 'udp://127.0.0.1:0?complex=abs': complex='abs'; expected real, imag or magnitude");
  CHECK_THROWS_WITH_AS(parse_complex_part("abs"),
                       "complex part 'abs': expected 'real', 'imag', 'magnitude' or 'interleaved'",
                       std::invalid_argument);
}

TEST_CASE("an option given twice is refused") {
  CHECK(
      refusal("tcp://127.0.0.1:27099?idle=1&idle=2") ==
      "source 'tcp://127.0.0.1:27099?idle=1&idle=2': option 'idle' given twice; expected it once");
}

TEST_CASE("the options each scheme takes are accepted") {
  CHECK(refusal("tcp-listen://127.0.0.1:0?format=ingest&complex=magnitude&scale=0.5&rate=50&idle="
                "0.5&keepalive=0") == "");
  CHECK(refusal("udp://127.0.0.1:0?format=ingest&rate=20&scale=2") == "");
  CHECK(refusal("tcp://127.0.0.1:27099?idle=0&connect_timeout=0.5&keepalive=1") == "");
}

TEST_CASE("emulate's device link URIs refuse options too") {
  CHECK_THROWS_WITH_AS(open_device_link("tcp-listen://127.0.0.1:0?idle=1"),
                       "device link 'tcp-listen://127.0.0.1:0?idle=1': option 'idle' unknown; "
                       "tcp-listen:// takes no options",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(open_device_link("tls-listen://127.0.0.1:0?cert=a&key=b&cafile=c"),
                       doctest::Contains("option 'cafile' unknown; expected cert, key, ca, crl"),
                       std::invalid_argument);
}

TEST_CASE("a URI's mistakes are refused naming its role and the schemes that role takes") {
  CHECK_THROWS_WITH_AS(parse_live_uri("carrier-pigeon://x"),
                       "source 'carrier-pigeon://x': scheme 'carrier-pigeon' unknown; expected one "
                       "of tcp://, tcp-listen://, tls-connect://, tls-listen://, udp://, "
                       "serial://, file://",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_device_link_uri("carrier-pigeon://x"),
                       "device link 'carrier-pigeon://x': scheme 'carrier-pigeon' unknown; "
                       "expected one of tcp-listen://, tcp://, tls-listen://, tls-connect://, "
                       "udp://, file://, pty",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_device_link_uri("127.0.0.1:5000", "nats://"),
                       "device link '127.0.0.1:5000': no scheme; expected one of tcp-listen://, "
                       "tcp://, tls-listen://, tls-connect://, udp://, file://, pty, nats://",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_device_link_uri("serial:///dev/ttyS0"),
                       doctest::Contains("device link 'serial:///dev/ttyS0': scheme 'serial' "
                                         "cannot send; expected one of tcp-listen://"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_device_link_uri("udp://127.0.0.1:port"),
                       "device link 'udp://127.0.0.1:port': port 'port' is not a number; "
                       "expected 0..65535 or *",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_live_source_uri("carrier-pigeon://x", "nats://"),
                       doctest::Contains("serial://, file://, nats://"), std::invalid_argument);
}

// A folder that does not exist: no file in it can be opened.
const std::string kNone = "/nonexistent-eit-tls";

doctest::Contains has(const std::string& text) { return doctest::Contains(text.c_str()); }

TEST_CASE("a device link's TLS files are checked before it opens naming the option and file") {
  const std::string listen =
      fmt::format("tls-listen://127.0.0.1:0?cert={0}/server.pem&key={0}/server.key", kNone);
  CHECK_THROWS_WITH_AS(
      check_device_link_uri(listen),
      has(fmt::format(
          "device link '{}': cert='{}/server.pem' cannot be read (No such file or directory)",
          listen, kNone)),
      std::runtime_error);
  CHECK_THROWS_WITH_AS(
      check_device_link_uri(fmt::format("tls-connect://127.0.0.1:1?ca={}/ca.pem", kNone)),
      has(fmt::format("ca='{}/ca.pem' cannot be read", kNone)), std::runtime_error);
  CHECK_THROWS_WITH_AS(
      check_device_link_uri(fmt::format("tls-connect://127.0.0.1:1?cert={}/d.pem", kNone)),
      doctest::Contains("cert= given without key=; expected both"), std::runtime_error);
  CHECK_THROWS_WITH_AS(check_device_link_uri("tls-listen://127.0.0.1:0"),
                       doctest::Contains("option cert= missing"), std::runtime_error);

  const eit::test::TlsTestCertificates p;
  if (p.missing("files that exist")) return;
  const std::string server = p.server_listen_uri();
  CHECK_NOTHROW(check_device_link_uri(server));  // a listening device may admit any client
  CHECK_THROWS_WITH_AS(check_device_link_uri(server + "&ca=" + p("missing.pem")),
                       has(fmt::format("ca='{}' cannot be read", p("missing.pem"))),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(  // a key that is not the certificate's
      check_device_link_uri(
          fmt::format("tls-listen://127.0.0.1:0?cert={}&key={}", p("server.pem"), p("device.key"))),
      has(fmt::format("key='{}' cannot be used", p("device.key"))), std::runtime_error);
}

TEST_CASE("a source's TLS files are checked before it opens naming the option and file") {
  const std::string listen = fmt::format(
      "tls-listen://127.0.0.1:0?cert={0}/server.pem&key={0}/server.key&ca={0}/ward.pem", kNone);
  CHECK_THROWS_WITH_AS(
      check_live_source_uri(listen),
      has(fmt::format(
          "source '{}': cert='{}/server.pem' cannot be read (No such file or directory)", listen,
          kNone)),
      std::runtime_error);
  CHECK_THROWS_WITH_AS(check_live_source_uri("tls-connect://127.0.0.1:1"),
                       doctest::Contains("option ca= missing"), std::runtime_error);

  const eit::test::TlsTestCertificates p;
  if (p.missing("files that exist")) return;
  const std::string server = p.server_listen_uri();
  CHECK_THROWS_WITH_AS(check_live_source_uri(server), doctest::Contains("option ca= missing"),
                       std::runtime_error);  // a source admits only devices its CA signed
  CHECK_NOTHROW(check_live_source_uri(server + "&ca=" + p("ward.pem")));
}
