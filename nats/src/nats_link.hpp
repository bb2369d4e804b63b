#pragma once
// NatsLink: one connection to a NATS server (or cluster) and its JetStream context, made at
// set-up and kept up by libnats itself: it retries a failed first connect and reconnects forever
// after a loss, buffering what is published meanwhile (bounded by reconnect_buffer_bytes).
// Disconnections and reconnections are counted, the last problem kept in words.
//
// Threads: construction and ensure_streams() at set-up; connection()/jetstream() are used by
// one publishing or consuming thread; the counters and last_error() from any thread.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include <nats/nats.h>

#include "eit/nats/nats_address.hpp"
#include "eit/nats/nats_streams.hpp"
#include "eit/nats/server_wait.hpp"

namespace eit::nats {

struct NatsLinkOptions {
  std::string client_name = "eitstream";
  int64_t max_pending_acks = 4096;        // JetStream async publishes in flight
  int64_t stall_wait_ms = 20;             // how long a publish waits when that many are in flight
  int reconnect_buffer_bytes = 8 << 20;   // what libnats keeps while disconnected
  int64_t connect_timeout_ms = 2000;
  bool wait_for_server = true;  // false: fail at once when no server answers the first connect
  // While the constructor waits for a server (wait_for_server): what to report and when to give
  // up (the constructor then throws); each part not set here is the process default's.
  ServerWait wait;
  jsPubAckHandler ack_handler = nullptr;  // called for every async publish (success or error)
  void* ack_closure = nullptr;
  void (*on_disconnect)(void*) = nullptr;  // called (libnats' thread) when the connection drops
  void* disconnect_closure = nullptr;
};

class NatsLink {
 public:
  NatsLink(const NatsAddress& address, NatsLinkOptions options = {});
  ~NatsLink();
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;

  // Creates the image and raw-frame streams with `limits` unless they exist (an existing stream
  // keeps the limits its operator gave it). Needs the server.
  void ensure_streams(const StreamLimits& limits);

  natsConnection* connection() const noexcept { return nc_; }
  jsCtx* jetstream() const noexcept { return js_; }
  const NatsAddress& address() const noexcept { return address_; }
  bool connected() const noexcept;

  uint64_t disconnects() const noexcept { return disconnects_.load(std::memory_order_relaxed); }
  uint64_t reconnects() const noexcept { return reconnects_.load(std::memory_order_relaxed); }
  std::string last_error() const;
  void note_error(std::string message);

 private:
  static void on_disconnected(natsConnection* nc, void* self);
  static void on_connected(natsConnection*, void* self);
  // Waits for the first connection (wait_for_server), reporting and giving up as the options
  // say; throws std::runtime_error naming `where` when it gives up.
  void wait_connected(const std::string& where);
  void release() noexcept;  // closes and frees what the constructor made
  static void on_reconnected(natsConnection* nc, void* self);
  static void on_closed(natsConnection* nc, void* self);

  NatsAddress address_;
  NatsLinkOptions options_;
  natsOptions* opts_ = nullptr;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  std::atomic<uint64_t> disconnects_{0}, reconnects_{0};
  std::atomic<bool> closing_{false}, closed_{false}, connected_{false};
  mutable std::mutex error_mutex_;  // only to copy or replace the string, never per frame
  std::string last_error_;
};

// natsSubscription_Fetch, working around libnats 3.4.1: its Fetch first moves every message
// already queued on the subscription (late answers to earlier, expired pull requests: a busy
// process) into an array sized for `batch`, and wrote past it when more were queued (valgrind:
// "Invalid write … 0 bytes after a block of size 512" in _fetch, a worker holding 100 beds).
// Asks for at least what is queued plus room for what may still arrive meanwhile; the list can
// then hold more than `batch` messages.
natsStatus fetch_batch(natsMsgList* list, natsSubscription* sub, int batch, int64_t timeout_ms,
                       jsErrCode* err);

// Throws std::runtime_error "<what>: <libnats status text> (<last error>)" unless s is NATS_OK.
void check(natsStatus s, const std::string& what);

}  // namespace eit::nats
