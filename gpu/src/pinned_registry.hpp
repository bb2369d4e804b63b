#pragma once
// Which host ranges the GPU can read and write in place: every block from make_pinned_allocator()
// is recorded here with its device address. The per-frame path looks frames up (lock-free reads
// of a fixed table); frames outside every range go through the backend's own pinned staging.
// Registration and removal happen at set-up (FramePool construction and destruction) only.
#include <cstddef>
#include <cstdint>

namespace eit::gpu {

// Records [host, host + bytes) as mapped, at device address `device`. Set-up only.
void register_pinned_range(const void* host, size_t bytes, void* device);
void unregister_pinned_range(const void* host) noexcept;

// The device address of [p, p + bytes) when that span lies inside one registered range, else
// nullptr. Lock-free; safe on the per-frame path.
void* device_address(const void* p, size_t bytes) noexcept;

}  // namespace eit::gpu
