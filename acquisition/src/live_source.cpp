// open_live_source: URI → transport + decoder → StreamSource.
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/tls_transport.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/openeit_line_decoder.hpp"
#include "eit/acquisition/transports.hpp"
#include "tls_context.hpp"

namespace eit::acquisition {
namespace {

// The number in option `key` (fallback when absent); throws naming the whole URI, the option,
// the value and what was expected.
template <typename T>
T number_option(const LiveUri& uri, std::string_view key, T fallback, std::string_view expected) {
  const auto it = uri.query.find(key);
  if (it == uri.query.end()) return fallback;
  T value{};
  const auto& s = it->second;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
    throw std::invalid_argument(fmt::format(
        "source '{}': option {}='{}' is not a number; expected {}", uri.text, key, s, expected));
  }
  return value;
}

[[noreturn]] void out_of_range(const LiveUri& uri, std::string_view key, double value,
                               std::string_view expected) {
  throw std::invalid_argument(fmt::format("source '{}': {}={} is out of range; expected {}",
                                          uri.text, key, value, expected));
}

std::string text_option(const LiveUri& uri, std::string_view key, std::string fallback) {
  const auto it = uri.query.find(key);
  return it == uri.query.end() ? fallback : it->second;
}

// complex=: the part of each complex64 sample a live frame keeps (fallback when absent). Not
// interleaved: an ingest frame has one slot per measurement, and the (re, im) pairs are for
// recordings (--complex interleaved).
ComplexPart complex_option(const LiveUri& uri, ComplexPart fallback) {
  const auto it = uri.query.find("complex");
  if (it == uri.query.end()) return fallback;
  std::optional<ComplexPart> part;
  try {
    part = parse_complex_part(it->second);
  } catch (const std::invalid_argument&) {
  }
  if (part && *part != ComplexPart::kInterleaved) return *part;
  throw std::invalid_argument(fmt::format(
      "source '{}': complex='{}'; expected real, imag or magnitude{}", uri.text, it->second,
      part ? " (interleaved (re, im) pairs are for recordings: --complex interleaved)" : ""));
}

}  // namespace

std::unique_ptr<ByteTransport> open_transport(const LiveUri& uri, const ReconnectPolicy& reconnect,
                                              const TcpLiveness& liveness) {
  if (uri.scheme == "tcp")
    return make_tcp_client_transport(uri.host, uri.port, reconnect, liveness);
  if (uri.scheme == "tcp-listen") return make_tcp_server_transport(uri.host, uri.port, liveness);
  if (uri.scheme == "tls-connect")
    return make_tls_client_transport(uri.host, uri.port, detail::tls_files(uri), reconnect,
                                     liveness);
  if (uri.scheme == "tls-listen")
    return make_tls_server_transport(uri.host, uri.port, detail::tls_files(uri), liveness);
  if (uri.scheme == "udp") return make_udp_transport(uri.host, uri.port);
  if (uri.scheme == "file") {
    const auto loop = text_option(uri, "loop", "0");
    if (loop != "0" && loop != "1" && loop != "true" && loop != "false") {
      throw std::invalid_argument(
          fmt::format("source '{}': loop='{}'; expected 0 or 1", uri.text, loop));
    }
    return make_file_transport(uri.path, loop == "1" || loop == "true");
  }
  if (uri.scheme == "serial") {
    SerialOptions s;
    s.path = uri.path;
    s.baud = number_option<unsigned>(uri, "baud", 115200, "a baud rate, e.g. 115200");
    s.data_bits = number_option<unsigned>(uri, "bits", 8, "5..8");
    s.stop_bits = number_option<unsigned>(uri, "stop", 1, "1 or 2");
    const auto parity = text_option(uri, "parity", "n");
    s.parity = parity.empty() ? '?' : parity[0];
    if (parity.size() != 1 && parity != "none" && parity != "even" && parity != "odd") {
      throw std::invalid_argument(
          fmt::format("source '{}': parity='{}'; expected n, e or o", uri.text, parity));
    }
    const auto flow = text_option(uri, "flow", "none");
    if (flow != "none" && flow != "rtscts") {
      throw std::invalid_argument(
          fmt::format("source '{}': flow='{}'; expected none or rtscts", uri.text, flow));
    }
    s.hardware_flow = flow == "rtscts";
    s.reconnect = reconnect;
    return make_serial_transport(s);
  }
  throw std::invalid_argument(
      fmt::format("source scheme '{}' unknown; expected tcp, tcp-listen, tls-connect, "
                  "tls-listen, udp, serial or file",
                  uri.scheme));
}

std::unique_ptr<StreamDecoder> make_stream_decoder(std::string_view format,
                                                   const IngestDecoderOptions& ingest,
                                                   const recon::Protocol& protocol) {
  if (format == "ingest") return std::make_unique<IngestDecoder>(protocol.n_meas(), ingest);
  if (format == "openeit") {
    try {
      return std::make_unique<OpenEitLineDecoder>(protocol);
    } catch (const std::invalid_argument& e) {
      // The usual cause: serial:// reads OpenEIT's lines unless told otherwise, and OpenEIT
      // drives opposite electrodes where the built-in model drives adjacent ones.
      const int n = protocol.n_electrodes;
      throw std::invalid_argument(fmt::format(
          "{}; OpenEIT frames (format=openeit, the default for serial://) drive opposite "
          "electrodes: give a model built for them (eitstream model build --electrodes {} "
          "--drive-distance {} -o openeit.h5, then --model openeit.h5), or the device's own "
          "format (format=ingest)",
          e.what(), n, n / 2));
    }
  }
  throw std::invalid_argument(
      fmt::format("stream format '{}' unknown; expected ingest or openeit", format));
}

void check_live_source_uri(std::string_view text, std::string_view more_schemes) {
  const std::string schemes = more_schemes.empty()
                                  ? std::string(kLiveSourceRole.schemes)
                                  : fmt::format("{}, {}", kLiveSourceRole.schemes, more_schemes);
  const LiveUri uri = parse_live_uri(text, {kLiveSourceRole.name, schemes});
  check_live_source_options(uri);
  detail::check_tls_files(uri, fmt::format("source '{}'", text), true);
}

std::unique_ptr<StreamSource> open_live_source(std::string_view text,
                                               const LiveSourceOptions& options,
                                               const recon::Protocol& protocol) {
  const LiveUri uri = parse_live_uri(text);
  check_live_source_options(uri);
  std::string format = options.format;
  if (format.empty())
    format = text_option(uri, "format", uri.scheme == "serial" ? "openeit" : "ingest");
  if (format != "ingest" && format != "openeit") {
    throw std::invalid_argument(
        fmt::format("source '{}': format='{}'; expected ingest or openeit", uri.text, format));
  }
  IngestDecoderOptions ingest = options.ingest;
  ingest.complex_part = complex_option(uri, ingest.complex_part);
  constexpr std::string_view kScale = "a finite number other than 0";
  ingest.integer_scale = number_option<double>(uri, "scale", ingest.integer_scale, kScale);
  if (!std::isfinite(ingest.integer_scale) || ingest.integer_scale == 0)
    out_of_range(uri, "scale", ingest.integer_scale, kScale);
  StreamSourceOptions source_options;
  constexpr std::string_view kRate = "frames per second, above 0 up to 1e6";
  source_options.nominal_rate_hz = options.nominal_rate_hz;
  if (uri.query.contains("rate")) {
    source_options.nominal_rate_hz = number_option<double>(uri, "rate", 0.0, kRate);
    if (!(source_options.nominal_rate_hz > 0 && source_options.nominal_rate_hz <= 1e6))
      out_of_range(uri, "rate", source_options.nominal_rate_hz, kRate);
  }
  TcpLiveness liveness;
  constexpr std::string_view kIdle = "seconds, 0 (never) to 3600";
  const double idle_s = number_option<double>(uri, "idle", -1.0, kIdle);  // < 0: the default
  if (uri.query.contains("idle") && !(idle_s >= 0 && idle_s <= 3600))
    out_of_range(uri, "idle", idle_s, kIdle);
  liveness.idle = idle_s < 0 ? default_idle_timeout(source_options.nominal_rate_hz)
                             : std::chrono::milliseconds(static_cast<int64_t>(idle_s * 1000));
  const auto keepalive = text_option(uri, "keepalive", "1");
  if (keepalive != "0" && keepalive != "1") {
    throw std::invalid_argument(
        fmt::format("source '{}': keepalive='{}'; expected 0 or 1", uri.text, keepalive));
  }
  liveness.keepalive = keepalive == "1";
  ReconnectPolicy reconnect = options.reconnect;
  const double connect_s = number_option<double>(
      uri, "connect_timeout", static_cast<double>(reconnect.connect_timeout.count()) / 1000,
      "seconds, 0.001 to 3600");
  if (!(connect_s >= 0.001 && connect_s <= 3600)) {
    throw std::invalid_argument(fmt::format(
        "source '{}': connect_timeout={} s; expected 0.001 to 3600", uri.text, connect_s));
  }
  reconnect.connect_timeout = std::chrono::milliseconds(std::llround(connect_s * 1000));
  auto decoder = make_stream_decoder(format, ingest, protocol);
  auto transport = open_transport(uri, reconnect, liveness);
  return std::make_unique<StreamSource>(std::move(transport), std::move(decoder), source_options);
}

}  // namespace eit::acquisition
