#pragma once
// The per-breath JSON message (topic eit/<stream>/breath, docs/protocol.md) and the CSV row of
// `eitstream indices`, written into a caller's fixed buffer so that the live path allocates
// nothing. NaN becomes null in JSON and an empty field in CSV.
//
// Threads: any; no shared state. Allocation: none.
#include <cstddef>
#include <span>
#include <string_view>

#include "eit/indices/body_layout.hpp"
#include "eit/indices/breath_indices.hpp"

namespace eit::indices {

// Bytes a breath message can take for this layout (with images); size the buffer with it.
size_t breath_json_capacity(const BodyLayout& layout) noexcept;

// Writes one JSON object. Returns the length written, or 0 when `out` is too small.
size_t write_breath_json(const BreathIndices& b, const BodyLayout& layout, std::string_view stream,
                         bool with_images, std::span<char> out) noexcept;

// CSV: header line and one row per breath (scalars and region tidal variations).
size_t write_breath_csv_header(const BodyLayout& layout, std::span<char> out) noexcept;
size_t write_breath_csv_row(const BreathIndices& b, const BodyLayout& layout,
                            std::span<char> out) noexcept;

}  // namespace eit::indices
