// Little-endian loads and stores (acquisition/src/little_endian.hpp): the wire order on this host,
// unaligned addresses, and the byte swap that big-endian hosts use (tested here directly, since
// this host never takes that branch).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "../../acquisition/src/little_endian.hpp"

using namespace eit::acquisition;

TEST_CASE("little endian: stores put the low byte first, loads read it back at any alignment") {
  std::array<uint8_t, 16> buf{};
  le::store<uint32_t>(buf.data() + 1, 0x01020304u);  // unaligned
  CHECK(buf[1] == 0x04);
  CHECK(buf[4] == 0x01);
  CHECK(le::load<uint32_t>(buf.data() + 1) == 0x01020304u);
  le::store<int16_t>(buf.data() + 5, int16_t{-2});
  CHECK(buf[5] == 0xFE);
  CHECK(buf[6] == 0xFF);
  CHECK(le::load<int16_t>(buf.data() + 5) == -2);
  le::store<double>(buf.data() + 7, -1.5);  // IEEE 754: 0xBFF8000000000000
  CHECK(buf[7] == 0x00);
  CHECK(buf[14] == 0xBF);
  CHECK(le::load<double>(buf.data() + 7) == -1.5);
  le::store<float>(buf.data() + 3, 0.25f);  // 0x3E800000
  CHECK(buf[5] == 0x80);
  CHECK(buf[6] == 0x3E);
  CHECK(le::load<float>(buf.data() + 3) == 0.25f);
}

TEST_CASE("little endian: the big-endian hosts' byte swap reverses 2, 4 and 8 bytes") {
  CHECK(le::swap_bytes(uint16_t{0x0102}) == 0x0201);
  CHECK(le::swap_bytes(uint32_t{0x01020304}) == 0x04030201u);
  CHECK(le::swap_bytes(uint64_t{0x0102030405060708}) == 0x0807060504030201ull);
  static_assert(sizeof(le::Bits<float>) == 4 && sizeof(le::Bits<double>) == 8);
  static_assert(sizeof(le::Bits<int16_t>) == 2);
}
