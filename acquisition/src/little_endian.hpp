#pragma once
// Little-endian loads and stores of fixed-width integers and floats at unaligned addresses.
#include <bit>
#include <cstdint>
#include <cstring>

namespace eit::acquisition::le {

template <typename T>
inline T load(const uint8_t* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    using U = std::conditional_t<sizeof(T) == 2, uint16_t,
                                 std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    U u;
    std::memcpy(&u, &v, sizeof(T));
    u = sizeof(T) == 2   ? __builtin_bswap16(u)
        : sizeof(T) == 4 ? __builtin_bswap32(u)
                         : __builtin_bswap64(u);
    std::memcpy(&v, &u, sizeof(T));
  }
  return v;
}

template <typename T>
inline void store(uint8_t* p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    using U = std::conditional_t<sizeof(T) == 2, uint16_t,
                                 std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
    U u;
    std::memcpy(&u, &v, sizeof(T));
    u = sizeof(T) == 2   ? __builtin_bswap16(u)
        : sizeof(T) == 4 ? __builtin_bswap32(u)
                         : __builtin_bswap64(u);
    std::memcpy(p, &u, sizeof(T));
  } else {
    std::memcpy(p, &v, sizeof(T));
  }
}

}  // namespace eit::acquisition::le
