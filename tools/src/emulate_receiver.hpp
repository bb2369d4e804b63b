#pragma once
// What a receiver needs to decode what `eitstream emulate` sends, and the URI that tells it.
//
// Integer samples (--sample-type i16|i32): the ingest frame has no scale field, so the receiver
// multiplies every integer by its scale= option (docs/protocol.md, "What the values mean").
// Emulate sends value / scale, the scale being --scale or, by default, chosen from the first
// frame so that its largest magnitude uses half the integer range (room for later frames to grow
// before they clip), and prints the receiver URI with that scale=.
// Set-up only; throws CommandError naming the option, the value and what is expected.
#include <optional>
#include <span>
#include <string>

#include "eit/acquisition/ingest_frame.hpp"

namespace eit::cli {

struct IntegerScale {
  double value = 1;       // integers are multiplied by this on receipt
  std::string text;       // as printed after scale=; parses back to exactly `value`
  bool chosen = false;    // from the first frame (not --scale)
  double first_peak = 0;  // the first frame's largest finite |value|
};

// The scale for `type` (nullopt for the float types: nothing to scale) from `requested` (--scale;
// 0: choose from `first_frame`). Throws for --scale with a float type, a --scale that is not a
// finite number above 0, and a --scale at which `first_frame` would clip.
std::optional<IntegerScale> choose_integer_scale(acquisition::IngestSampleType type,
                                                 double requested,
                                                 std::span<const float> first_frame);

// The link's receiver URI (DeviceLink::receiver_uri) with format= and, for integer samples,
// scale= appended: after '?', or after '&' when the URI has a query already (a NATS bed's
// site=…&bed=…). NATS raw frames are always ingest framing, so a nats:// or tls:// bed gets no
// format=.
std::string emulate_receiver_uri(const std::string& link_uri, const std::string& format,
                                 const std::optional<IntegerScale>& scale);

}  // namespace eit::cli
