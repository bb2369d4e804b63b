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
  // A value that is not a part is named as such whatever the format.
  CHECK(refusal("tcp://127.0.0.1:27099?format=openeit&complex=interleaved")
            .find("complex='interleaved'; expected real, imag or magnitude") != std::string::npos);
  CHECK(refusal("udp://127.0.0.1:0?complex=phase") ==
        "source 'udp://127.0.0.1:0?complex=phase': complex='phase'; expected real, imag or "
        "magnitude");
}

TEST_CASE("complex= and scale= are refused with format=openeit whose lines are real magnitudes") {
  // Before, both were accepted and ignored: the OpenEIT line decoder has no complex or integer
  // samples to convert.
  CHECK(refusal("tcp://127.0.0.1:27099?format=openeit&complex=magnitude") ==
        "source 'tcp://127.0.0.1:27099?format=openeit&complex=magnitude': complex=magnitude has "
        "no effect with format=openeit: OpenEIT lines carry real magnitudes as text, and "
        "complex= converts the ingest framing's complex64 samples; expected format=ingest, or "
        "no complex=");
  CHECK(refusal("udp://127.0.0.1:0?format=openeit&scale=2")
            .find("scale=2 has no effect with format=openeit") != std::string::npos);
  // serial:// reads OpenEIT lines unless told otherwise, and says so.
  CHECK_THROWS_WITH_AS(check_live_source_uri("serial:///dev/null?complex=real"),
                       doctest::Contains("complex=real has no effect with format=openeit (the "
                                         "default for serial://)"),
                       std::invalid_argument);
  CHECK_NOTHROW(check_live_source_uri("serial:///dev/null?format=ingest&complex=real&scale=2"));
  CHECK_NOTHROW(check_live_source_uri("udp://127.0.0.1:0?format=openeit&rate=2"));
}

TEST_CASE("loop= and parity= take one spelling per value and refuse the others naming them") {
  for (const char* loop : {"true", "false", "yes"}) {
    const std::string uri = std::string("file:///nonexistent.eitf?loop=") + loop;
    CAPTURE(uri);
    CHECK(refusal(uri) == fmt::format("source '{}': loop='{}'; expected 0 or 1", uri, loop));
  }
  for (const char* parity : {"none", "even", "odd", "N", "x", ""}) {
    const std::string uri = std::string("serial:///dev/null?format=ingest&parity=") + parity;
    CAPTURE(uri);
    CHECK_THROWS_WITH_AS(
        check_live_source_uri(uri),
        fmt::format("source '{}': parity='{}'; expected n, e or o", uri, parity).c_str(),
        std::invalid_argument);
  }
  for (const char* parity : {"n", "e", "o"})
    CHECK_NOTHROW(check_live_source_uri(std::string("serial:///dev/null?parity=") + parity +
                                        "&format=ingest&flow=rtscts&bits=7&stop=2&baud=9600"));
  CHECK_NOTHROW(check_live_source_uri("file:///nonexistent.eitf?loop=1"));
}

TEST_CASE("check_live_source_uri refuses option values with open_live_source's message") {
  // run checks a device URI before it loads its model (seconds for a large one); before, only
  // the scheme, the option names and the TLS files were checked then, the values when the
  // source opened after the model.
  for (const char* uri : {
           "tcp://127.0.0.1:27099?idle=-1",
           "tcp://127.0.0.1:27099?idle=abc",
           "tcp-listen://127.0.0.1:0?idle=3601",
           "udp://127.0.0.1:0?scale=0",
           "udp://127.0.0.1:0?scale=inf",
           "udp://127.0.0.1:0?rate=0",
           "udp://127.0.0.1:0?rate=fast",
           "udp://127.0.0.1:0?complex=phase",
           "udp://127.0.0.1:0?format=csv",
           "udp://127.0.0.1:0?format=openeit&complex=real",
           "tcp://127.0.0.1:27099?keepalive=yes",
           "tcp://127.0.0.1:27099?connect_timeout=0",
           "file:///nonexistent.eitf?loop=2",
       }) {
    CAPTURE(uri);
    const std::string opened = refusal(uri);
    REQUIRE(!opened.empty());
    CHECK_THROWS_WITH_AS(check_live_source_uri(uri), opened.c_str(), std::invalid_argument);
  }
  // Serial values are checked with the others (the port is never opened by the check).
  const std::pair<const char*, const char*> serial[] = {
      {"bits=9", "bits=9 is out of range; expected 5..8"},
      {"stop=3", "stop=3 is out of range; expected 1 or 2"},
      {"baud=0", "baud=0 is out of range; expected a baud rate above 0, e.g. 115200"},
      {"baud=fast", "option baud='fast' is not a number; expected a baud rate above 0"},
      {"flow=xon", "flow='xon'; expected none or rtscts"},
  };
  for (const auto& [option, said] : serial) {
    const std::string uri = std::string("serial:///dev/ttyNONE?format=ingest&") + option;
    CAPTURE(uri);
    CHECK_THROWS_WITH_AS(check_live_source_uri(uri),
                         doctest::Contains(fmt::format("source '{}': {}", uri, said).c_str()),
                         std::invalid_argument);
  }
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
