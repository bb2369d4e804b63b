#pragma once
// CRC-32 as in zlib, Ethernet and PNG (polynomial 0x04C11DB7, reflected, initial and final XOR
// 0xFFFFFFFF; Python's zlib.crc32), used by the ingest framing. Table-driven, slicing by 8; no
// allocation, any thread.
#include <cstdint>
#include <span>

namespace eit::acquisition {

// CRC of `data`, continuing from a previous result `crc` (0 to start).
uint32_t crc32(std::span<const uint8_t> data, uint32_t crc = 0) noexcept;

}  // namespace eit::acquisition
