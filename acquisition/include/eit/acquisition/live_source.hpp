#pragma once
// open_live_source: a StreamSource from a URI, for devices that stream.
//
//   tcp://host:port                    connect to a device that listens (reconnects with backoff)
//   tcp-listen://127.0.0.1:port        listen for the device (port 0 or *: ephemeral)
//   tls-listen://host:port?cert=server.pem&key=server.key&ca=devices-ca.pem
//                                      the same over TLS; the device must present a certificate
//                                      signed by ca (tls_transport.hpp, docs/security.md)
//   tls-connect://host:port?ca=device-ca.pem&cert=client.pem&key=client.key&name=device.ward
//                                      tcp:// over TLS: the device's certificate must be signed
//                                      by ca and issued for name (default: host); cert/key are
//                                      presented when the device asks for a client certificate
//   udp://127.0.0.1:port               receive datagrams (port 0 or *: ephemeral)
//   serial:///dev/ttyUSB0?baud=115200&bits=8&parity=n&stop=1&flow=none
//   file:///path/capture.eitf?loop=1   a byte-stream capture, decoded like the live link
//
// Query options for every scheme: format=ingest|openeit (default: ingest; openeit for serial),
// complex=real|imag|magnitude and scale=<x> (ingest sample conversion: refused with
// format=openeit, whose lines are real magnitudes), rate=<Hz> (nominal rate). serial://:
// baud=<n>, bits=5..8, parity=n|e|o, stop=1|2, flow=none|rtscts; file://: loop=0|1. One spelling
// per value: loop=true or parity=even is refused.
// TCP (tcp://, tcp-listen://, tls-connect://): idle=<seconds> closes a connection that sent
// nothing for that long (0: never, up to 3600; default: five frame periods at rate=, at least
// 0.25 s, or 2 s when the rate is unknown; see tcp_liveness.hpp), keepalive=0|1 (TCP keepalive
// probes, default 1). An option the scheme does not take, given twice, or out of its range is
// refused (check_live_source_options).
// Set-up only: allocates and throws std::invalid_argument / std::runtime_error naming the URI,
// the option, the value found and the values expected.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "eit/acquisition/byte_transport.hpp"
#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/acquisition/stream_source.hpp"
#include "eit/acquisition/tcp_liveness.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::acquisition {

struct LiveUri {
  std::string text;    // the URI as given, for messages
  std::string scheme;  // tcp, tcp-listen, tls-connect, tls-listen, udp, serial, file
  std::string host;    // network schemes
  uint16_t port = 0;   // network schemes; 0 = ephemeral (listeners)
  std::string path;    // serial and file
  std::map<std::string, std::string, std::less<>> query;
};
// Who reads a live URI, for messages: its name and the schemes it takes.
struct UriRole {
  std::string_view name;
  std::string_view schemes;
};
inline constexpr UriRole kLiveSourceRole{
    "source", "tcp://, tcp-listen://, tls-connect://, tls-listen://, udp://, serial://, file://"};
// Throws std::invalid_argument naming the role and the URI for a malformed one (listing the
// role's schemes for an unknown one) or an option given twice.
LiveUri parse_live_uri(std::string_view uri, const UriRole& role = kLiveSourceRole);
// Throw std::invalid_argument naming the URI, the option and the ones expected when `uri` has an
// option its scheme does not take as a source (open_live_source) or as emulate's device link.
void check_live_source_options(const LiveUri& uri);
void check_device_link_options(const LiveUri& uri);

struct LiveSourceOptions {
  IngestDecoderOptions ingest;
  ReconnectPolicy reconnect;
  double nominal_rate_hz = 0.0;
};

std::unique_ptr<ByteTransport> open_transport(const LiveUri& uri, const ReconnectPolicy& reconnect,
                                              const TcpLiveness& liveness = {});

// The decoder named `format` ("ingest", "openeit") for frames of the protocol's measurements.
std::unique_ptr<StreamDecoder> make_stream_decoder(std::string_view format,
                                                   const IngestDecoderOptions& ingest,
                                                   const recon::Protocol& protocol);

// Throws what open_live_source(uri) throws for a malformed URI, an option its scheme does not
// take, an option value it refuses (out of range, not a number, not one of the words the option
// takes, complex= or scale= with format=openeit) or (TLS schemes) a certificate, key, CA or CRL
// file that cannot be used, naming the option and the value or file; opens nothing (for a
// command that checks its arguments before loading a model). `more_schemes`: schemes the caller
// takes besides a source's (run: nats://), listed with them in messages.
void check_live_source_uri(std::string_view uri, std::string_view more_schemes = {});

std::unique_ptr<StreamSource> open_live_source(std::string_view uri,
                                               const LiveSourceOptions& options,
                                               const recon::Protocol& protocol);

}  // namespace eit::acquisition
