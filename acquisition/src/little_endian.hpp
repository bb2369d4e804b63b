#pragma once
// Little-endian loads and stores of fixed-width integers and floats at unaligned addresses.
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace eit::acquisition::le {

// Big-endian hosts only: the unsigned integer as wide as T, and its bytes reversed. Swapped bytes
// stay in the integer, never in a float (a swapped float can be a signalling NaN).
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 2, uint16_t,
                                std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;

template <typename U>
inline U swap_bytes(U u) noexcept {
  return sizeof(U) == 2   ? __builtin_bswap16(u)
         : sizeof(U) == 4 ? __builtin_bswap32(u)
                          : __builtin_bswap64(u);
}

template <typename T>
inline T load(const uint8_t* p) noexcept {
  T v;
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    Bits<T> u;
    std::memcpy(&u, p, sizeof(T));
    u = swap_bytes(u);
    std::memcpy(&v, &u, sizeof(T));
  } else {
    std::memcpy(&v, p, sizeof(T));
  }
  return v;
}

template <typename T>
inline void store(uint8_t* p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    Bits<T> u;
    std::memcpy(&u, &v, sizeof(T));
    u = swap_bytes(u);
    std::memcpy(p, &u, sizeof(T));
  } else {
    std::memcpy(p, &v, sizeof(T));
  }
}

}  // namespace eit::acquisition::le
