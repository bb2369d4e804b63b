#pragma once
// The values of a live source URI's query options, read and checked (live_source.hpp lists the
// options): what open_live_source opens the source with, and what check_live_source_uri checks
// before a command loads its model, so that both refuse a value with the same message. Set-up
// only; throws std::invalid_argument naming the whole URI, the option, the value found and the
// values expected. Opens nothing.
#include <string>

#include "eit/acquisition/live_source.hpp"
#include "eit/acquisition/transports.hpp"

namespace eit::acquisition::detail {

struct LiveSourceSettings {
  std::string format;           // format=: ingest or openeit
  IngestDecoderOptions ingest;  // complex=, scale=
  double nominal_rate_hz = 0;   // rate=, else the caller's
  TcpLiveness liveness;         // idle=, keepalive=
  ReconnectPolicy reconnect;    // connect_timeout=
};

// Every option of `uri` but the scheme-specific transport ones below; `options` gives what the
// URI does not say. Also refuses complex= and scale= with format=openeit (OpenEIT lines carry
// real magnitudes in text: neither applies).
LiveSourceSettings read_live_source_settings(const LiveUri& uri, const LiveSourceOptions& options);

// serial://: baud=, bits=, parity=, stop=, flow= (8N1 at 115200 by default).
SerialOptions read_serial_settings(const LiveUri& uri, const ReconnectPolicy& reconnect);

// file://: loop=0|1.
bool read_loop_setting(const LiveUri& uri);

// All of the above that `uri`'s scheme takes, for check_live_source_uri.
void check_live_source_settings(const LiveUri& uri);

}  // namespace eit::acquisition::detail
