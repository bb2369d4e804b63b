// The one loopback rule (tools/src/bind_exposure.hpp): which addresses stay on the host, and per
// kind of socket whether an exposed, unsecured bind is allowed, warned about or refused. No
// socket is opened here, only addresses classified and verdicts taken.
#include <doctest/doctest.h>

#include "../../tools/src/bind_exposure.hpp"
#include "../../tools/src/command_registry.hpp"

using namespace eit::cli;

TEST_CASE("loopback binds are local, every other bind address is beyond loopback") {
  for (const char* local :
       {"tcp://127.0.0.1:5555", "tcp://127.0.0.1:*", "tcp://localhost:5555", "tcp://[::1]:5555",
        "tcp://127.1.2.3:9", "tcp://lo:5555", "ipc:///tmp/eit.sock", "inproc://images"}) {
    CAPTURE(local);
    CHECK(is_local_bind(BindKind::kZmq, local));
  }
  for (const char* exposed :
       {"tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://[::]:5555", "tcp://eth0:5555",
        "tcp://192.168.1.20:5555", "tcp://127.0.0.1.evil.example:5555", "tcp://128.0.0.1:5555",
        "udp://127.0.0.1:5555", "tcp://[::ffff:10.0.0.1]:5555"}) {
    CAPTURE(exposed);
    CHECK_FALSE(is_local_bind(BindKind::kZmq, exposed));
  }
  CHECK(is_local_bind(BindKind::kTcpIngest, "tcp-listen://127.0.0.1:0"));
  CHECK(is_local_bind(BindKind::kUdpIngest, "udp://127.0.0.1:7000?rate=50"));
  CHECK(is_local_bind(BindKind::kTlsIngest, "tls-listen://[::1]:0?cert=a&key=b&ca=c"));
  CHECK_FALSE(is_local_bind(BindKind::kTcpIngest, "tcp-listen://0.0.0.0:7000"));
  CHECK_FALSE(is_local_bind(BindKind::kUdpIngest, "udp://10.0.0.5:7000?rate=50"));
  CHECK_FALSE(is_local_bind(BindKind::kTcpIngest, "tcp-listen://[::]:7000"));
  // The live view binds 127.0.0.1 when no host is given (view_server.hpp).
  for (const char* local : {"127.0.0.1:8080", "localhost:0", "[::1]:8080", ":8080", "8080"}) {
    CAPTURE(local);
    CHECK(is_local_bind(BindKind::kHttp, local));
  }
  for (const char* exposed : {"0.0.0.0:8080", "[::]:8080", "ward-pc:8080", "10.1.1.1:0"}) {
    CAPTURE(exposed);
    CHECK_FALSE(is_local_bind(BindKind::kHttp, exposed));
  }
}

TEST_CASE("one table decides per kind: refuse, warn with --insecure, UDP warns, TLS is allowed") {
  using enum BindVerdict;
  struct Row {
    BindKind kind;
    BindVerdict exposed, exposed_insecure, exposed_secured;
  };
  const Row rows[] = {
      {BindKind::kZmq, kRefuse, kWarn, kAllow},
      {BindKind::kHttp, kRefuse, kWarn, kAllow},
      {BindKind::kTcpIngest, kRefuse, kWarn, kAllow},
      {BindKind::kTlsIngest, kAllow, kAllow, kAllow},
      {BindKind::kUdpIngest, kWarn, kWarn, kAllow},
  };
  for (const Row& r : rows) {
    CAPTURE(static_cast<int>(r.kind));
    for (bool secured : {false, true})
      for (bool insecure : {false, true}) CHECK(bind_verdict(r.kind, true, secured, insecure) == kAllow);
    CHECK(bind_verdict(r.kind, false, false, false) == r.exposed);
    CHECK(bind_verdict(r.kind, false, false, true) == r.exposed_insecure);
    CHECK(bind_verdict(r.kind, false, true, false) == r.exposed_secured);
  }
}

TEST_CASE("check_bind refuses naming the option, the address and the way to secure it") {
  CHECK_NOTHROW(check_bind(BindKind::kZmq, "--endpoint", "tcp://127.0.0.1:5555", false, false));
  CHECK_NOTHROW(check_bind(BindKind::kZmq, "--endpoint", "tcp://0.0.0.0:5555", true, false));
  CHECK_THROWS_WITH_AS(check_bind(BindKind::kZmq, "--indices", "tcp://0.0.0.0:5556", false, false),
                       doctest::Contains("--indices 'tcp://0.0.0.0:5556'"), CommandError);
  CHECK_THROWS_WITH_AS(check_bind(BindKind::kZmq, "--endpoint", "tcp://*:5555", false, false),
                       doctest::Contains("--curve-secret with --curve-allow"), CommandError);
  CHECK_THROWS_WITH_AS(
      check_bind(BindKind::kTcpIngest, "--source", "tcp-listen://0.0.0.0:7000", false, false),
      doctest::Contains("tls-listen://"), CommandError);
  CHECK_NOTHROW(check_bind(BindKind::kTcpIngest, "--source", "tcp-listen://0.0.0.0:7000", false, true));
  CHECK_NOTHROW(check_bind(BindKind::kUdpIngest, "--source", "udp://0.0.0.0:7000", false, false));
  CHECK_NOTHROW(
      check_bind(BindKind::kTlsIngest, "--source", "tls-listen://0.0.0.0:7000?cert=a", true, false));
  // The live view's way out reads as one phrase (it used to splice a parenthesis into the list).
  CHECK_THROWS_WITH_AS(
      check_bind(BindKind::kHttp, "--http", "10.0.0.1:8080", false, false),
      doctest::Contains("expected a loopback address (127.0.0.1) with an authenticating TLS proxy "
                        "on the same host in front of it (the live view serves plain HTTP), or "
                        "--insecure to do it anyway"),
      CommandError);
  CHECK_THROWS_WITH_AS(check_bind(BindKind::kZmq, "--endpoint", "tcp://*:5555", false, false),
                       doctest::Contains("(127.0.0.1), --curve-secret with --curve-allow, or "
                                         "--insecure"),
                       CommandError);
}
