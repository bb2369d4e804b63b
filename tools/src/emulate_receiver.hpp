#pragma once
// The URI `eitstream emulate` prints after "receiver: ": what a receiver opens to decode what
// emulate sends, taken by `run --source` as printed.
// Set-up only; no state.
#include <string>

namespace eit::cli {

// The link's receiver URI (DeviceLink::receiver_uri) with format= appended: after '?', or after
// '&' when the URI has a query already (a NATS bed's site=…&bed=…). NATS raw frames are always
// ingest framing, so a nats:// or tls:// bed gets no format=.
std::string emulate_receiver_uri(const std::string& link_uri, const std::string& format);

}  // namespace eit::cli
