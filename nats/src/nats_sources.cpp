// The raw-frame readers' sources (`run --source nats://…`, `reconstruct nats://…`): a reader's
// URI taken apart, its transport opened, and its nominal rate chosen. See nats_frames.hpp.
#include "eit/nats/nats_frames.hpp"

#include <charconv>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/acquisition/stream_source.hpp"
#include "nats_replay_transport.hpp"
#include "nats_transport.hpp"

namespace eit::nats {
namespace {

// since=: absent → resume (or all, for a new consumer) and all → 0; new → -1 (only new frames); a
// time → its ns since the epoch.
int64_t start_ns_of(std::string_view uri) {
  const Since since = parse_since(uri);
  if (since.kind == Since::Kind::kNew) return -1;
  return since.kind == Since::Kind::kTime ? since.epoch_ns : 0;
}

// A raw-frame reader's URI: scale= (integer samples are multiplied by it, as the live sources'
// scale=, docs/protocol.md) is its option alone, taken out before parse_nats_address so that
// every other NATS URI refuses it as unknown.
struct RawReaderUri {
  std::string uri;  // without scale=
  acquisition::IngestDecoderOptions ingest;
  bool scale_given = false;
};

RawReaderUri raw_reader_uri(std::string_view uri, const acquisition::LiveSourceOptions& options) {
  RawReaderUri r{std::string(uri), options.ingest};
  const auto q = uri.find('?');
  if (q == std::string_view::npos) return r;
  r.uri = std::string(uri.substr(0, q + 1));
  bool scaled = false;
  for (std::string_view query = uri.substr(q + 1); !query.empty();) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (!item.starts_with("scale=")) {
      r.uri += std::string(item) + "&";
      continue;
    }
    const std::string_view v = item.substr(6);
    double scale = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), scale);
    if (scaled || v.empty() || ec != std::errc{} || end != v.data() + v.size() ||
        !std::isfinite(scale) || scale == 0)
      throw std::invalid_argument(
          fmt::format("'{}': scale={} {}; expected one finite number other than 0", uri, v,
                      scaled ? "given twice" : "is not a number for integer samples"));
    r.ingest.integer_scale = scale;
    r.scale_given = scaled = true;
  }
  r.uri.pop_back();  // the last '&', or the '?' of an emptied query
  return r;
}

// A raw-frame reader's nominal rate: --fps (options.nominal_rate_hz) when given, else what the
// frames state; a warning (if `warnings`) when both are known and differ.
double nominal_rate_hz(const acquisition::LiveSourceOptions& options, double stated,
                       const NatsAddress& address, std::vector<std::string>* warnings) {
  if (warnings && options.nominal_rate_hz > 0 && stated > 0 && stated != options.nominal_rate_hz)
    warnings->push_back(fmt::format(
        "--fps {} wins over the {} frames/s the raw frames on {} state (Eit-Rate): the series "
        "message's rate_hz, recordings and indices use {}",
        options.nominal_rate_hz, stated, address.subject("raw"), options.nominal_rate_hz));
  return options.nominal_rate_hz > 0 ? options.nominal_rate_hz : stated;
}

}  // namespace

NatsAddress raw_reader_address(std::string_view uri) {
  return parse_nats_subscriber_address(raw_reader_uri(uri, {}).uri);
}

std::unique_ptr<pipeline::Source> open_nats_replay_source(
    std::string_view uri, const acquisition::LiveSourceOptions& options,
    const recon::Protocol& protocol, int64_t idle_ms, std::vector<std::string>* warnings) {
  const RawReaderUri raw = raw_reader_uri(uri, options);
  const NatsAddress address = parse_nats_subscriber_address(raw.uri);
  const int64_t since = start_ns_of(uri);
  if (since < 0)
    throw std::invalid_argument(fmt::format("'{}': a replay needs since=all or a time", uri));
  auto decoder = std::make_unique<acquisition::IngestDecoder>(protocol.n_meas(), raw.ingest);
  auto transport = std::make_unique<NatsReplayTransport>(address, since, idle_ms, decoder.get(),
                                                         raw.ingest.integer_scale);
  acquisition::StreamSourceOptions so;
  so.nominal_rate_hz = nominal_rate_hz(options, transport->stated_rate_hz(), address, warnings);
  return std::make_unique<acquisition::StreamSource>(std::move(transport), std::move(decoder), so);
}

std::unique_ptr<pipeline::Source> open_nats_source(std::string_view uri,
                                                   const acquisition::LiveSourceOptions& options,
                                                   const recon::Protocol& protocol,
                                                   std::vector<std::string>* warnings) {
  const RawReaderUri raw = raw_reader_uri(uri, options);
  const NatsAddress address = parse_nats_subscriber_address(raw.uri);
  auto decoder = std::make_unique<acquisition::IngestDecoder>(protocol.n_meas(), raw.ingest);
  auto transport = std::make_unique<NatsTransport>(address, start_ns_of(uri), decoder.get(),
                                                   raw.ingest.integer_scale);
  const double stated_scale = transport->stated_scale();
  acquisition::StreamSourceOptions so;
  so.nominal_rate_hz = nominal_rate_hz(options, transport->stated_rate_hz(), address, warnings);
  if (warnings && raw.scale_given && stated_scale > 0 && stated_scale != raw.ingest.integer_scale)
    warnings->push_back(fmt::format(
        "the raw frames on {} state their integer scale (Eit-Scale {}): frames that state one are "
        "decoded with it, the URI's scale={} applies only to frames that state none",
        address.subject("raw"), stated_scale, raw.ingest.integer_scale));
  return std::make_unique<acquisition::StreamSource>(std::move(transport), std::move(decoder), so);
}

}  // namespace eit::nats
