// Which bind addresses reach beyond this host (the 0.0.0.0 warning of `eitstream run`, reused
// by the security work): no socket is opened here, only the addresses are classified.
#include <doctest/doctest.h>

#include "../../tools/src/network_exposure.hpp"

using eit::cli::binds_beyond_loopback;

TEST_CASE("loopback endpoints stay quiet, every other bind address is beyond loopback") {
  for (const char* quiet :
       {"tcp://127.0.0.1:5555", "tcp://127.0.0.1:*", "tcp://localhost:5555", "tcp://[::1]:5555",
        "tcp://127.1.2.3:9", "tcp-listen://127.0.0.1:0", "udp://127.0.0.1:7000?rate=50",
        "127.0.0.1:8080", "localhost:0", "ipc:///tmp/eit.sock", "inproc://images"}) {
    CAPTURE(quiet);
    CHECK_FALSE(binds_beyond_loopback(quiet));
  }
  for (const char* loud :
       {"tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://[::]:5555", "tcp://eth0:5555",
        "tcp://192.168.1.20:5555", "tcp-listen://0.0.0.0:7000", "udp://10.0.0.5:7000?rate=50",
        "0.0.0.0:8080", ":8080", "tcp://127.0.0.1.evil.example:5555", "tcp://128.0.0.1:5555"}) {
    CAPTURE(loud);
    CHECK(binds_beyond_loopback(loud));
  }
}
