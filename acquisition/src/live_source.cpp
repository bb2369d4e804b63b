// open_live_source: URI → transport + decoder → StreamSource.
#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/tls_transport.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/openeit_line_decoder.hpp"
#include "eit/acquisition/transports.hpp"
#include "live_source_settings.hpp"
#include "tls_context.hpp"

namespace eit::acquisition {

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
  if (uri.scheme == "file") return make_file_transport(uri.path, detail::read_loop_setting(uri));
  if (uri.scheme == "serial")
    return make_serial_transport(detail::read_serial_settings(uri, reconnect));
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
  detail::check_live_source_settings(uri);
  detail::check_tls_files(uri, fmt::format("source '{}'", text), true);
}

std::unique_ptr<StreamSource> open_live_source(std::string_view text,
                                               const LiveSourceOptions& options,
                                               const recon::Protocol& protocol) {
  const LiveUri uri = parse_live_uri(text);
  check_live_source_options(uri);
  const detail::LiveSourceSettings settings = detail::read_live_source_settings(uri, options);
  StreamSourceOptions source_options;
  source_options.nominal_rate_hz = settings.nominal_rate_hz;
  auto decoder = make_stream_decoder(settings.format, settings.ingest, protocol);
  auto transport = open_transport(uri, settings.reconnect, settings.liveness);
  return std::make_unique<StreamSource>(std::move(transport), std::move(decoder), source_options);
}

}  // namespace eit::acquisition
