#pragma once
// What a gateway states on each raw frame's message (nats_frames.hpp: Eit-Model, Eit-Rate,
// Eit-Scale), read
// the same way by the worker and by `run --source nats://…`. No allocation; called by the thread
// that holds the message.
#include <nats/nats.h>

namespace eit::nats {

// The value of header `name`, nullptr when the message has none.
const char* header_of(natsMsg* msg, const char* name) noexcept;

// Eit-Rate in frames per second; 0 (unknown) when absent or not a positive number.
double stated_rate_hz(natsMsg* msg) noexcept;

// Eit-Scale, what the frame's integer samples are multiplied by; `otherwise` when absent or not a
// positive number (frames of a gateway sending floats, or older than the header).
double stated_integer_scale(natsMsg* msg, double otherwise) noexcept;

}  // namespace eit::nats
