#pragma once
// A real `nats-server -js` (nats_server.hpp), a connection to it and a memory stream "S" on
// subject "x", through libnats directly: the set-up of the tests that drive libnats calls
// themselves. `connected` and `stream_added` say how far the set-up got (tests REQUIRE them).
#include <nats/nats.h>

#include <doctest/doctest.h>

#include "nats_server.hpp"

namespace eit::test {

struct MemoryStreamOnServer {
  NatsServer server;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  bool connected = false, stream_added = false;

  MemoryStreamOnServer() {
    if (!server.available()) return;
    connected = natsConnection_ConnectTo(&nc, server.url().c_str()) == NATS_OK;
    if (!connected) return;
    natsConnection_JetStream(&js, nc, nullptr);
    const char* subjects[] = {"x"};
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = "S";
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_MemoryStorage;
    jsErrCode err;
    stream_added = js_AddStream(nullptr, js, &cfg, nullptr, &err) == NATS_OK;
  }
  ~MemoryStreamOnServer() {
    if (js) jsCtx_Destroy(js);
    if (nc) natsConnection_Destroy(nc);
  }
  MemoryStreamOnServer(const MemoryStreamOnServer&) = delete;
  MemoryStreamOnServer& operator=(const MemoryStreamOnServer&) = delete;

  bool skipped() const { return eit::test::skipped_without_nats(server); }
};

}  // namespace eit::test
