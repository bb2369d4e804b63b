#pragma once
// What a gateway states on each raw frame's message (nats_frames.hpp: Eit-Model, Eit-Rate), read
// the same way by the worker and by `run --source nats://…`. No allocation; called by the thread
// that holds the message.
#include <nats/nats.h>

namespace eit::nats {

// The value of header `name`, nullptr when the message has none.
const char* header_of(natsMsg* msg, const char* name) noexcept;

// Eit-Rate in frames per second; 0 (unknown) when absent or not a positive number.
double stated_rate_hz(natsMsg* msg) noexcept;

}  // namespace eit::nats
