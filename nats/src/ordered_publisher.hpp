#pragma once
// OrderedPublisher: one subject's messages into JetStream, in order, each stored once, none lost
// within a bounded buffer — also across a cluster's stream-leader re-election or a server restart.
//
// The producer copies a message into one of `slots` preallocated slots (claim/commit, or offer)
// and returns; a full buffer drops the newest message and counts it. A sender thread of its own
// publishes the slots in order (async, Nats-Msg-Id "<prefix>.<n>", an acknowledgement deadline
// of ack_wait_ms) and frees a slot only once JetStream acknowledged it. On a refused or timed-out
// publish, a disconnection, or an acknowledgement overdue by stall_ms, it stops sending new
// messages, waits until every publish in flight is settled, and sends again from the oldest one
// not stored, in order. Nothing is published while the connection is down (libnats would buffer
// it and send it, stale, after reconnecting). A message stored twice (its first acknowledgement was
// lost) is dropped by the stream's duplicate window through its id. A message that failed while a
// later one had already been stored ends up after it: counted as `reordered` (stopping at the first
// sign of trouble makes that rare; it can happen only inside one acknowledgement round trip).
//
// Threads: claim/commit/offer on one producer thread; stats from any; finish() once, on the
// producer's thread. claim/commit/offer never block, allocate or log.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nats_link.hpp"

namespace eit::nats {

struct OrderedPublisherOptions {
  std::string subject;                   // where every message goes
  std::string msg_id_prefix;             // unique per publisher (a run id): ids are prefix.n
  std::vector<std::pair<std::string, std::string>> headers;  // name, value: on every message
  size_t slots = 1024;                   // messages kept until JetStream stored them
  size_t max_message_bytes = 0;          // per slot
  int64_t ack_wait_ms = 2000;            // an unacknowledged publish fails after this long
  int64_t stall_ms = 250;                // oldest acknowledgement this late: stop sending new
  int64_t max_in_flight = 1024;          // publishes awaiting acknowledgement
  int64_t retry_pause_ms = 100;          // between a settled failure and sending again
};

struct OrderedPublisherStats {
  uint64_t acked = 0;         // messages JetStream stored (acknowledged)
  uint64_t duplicates = 0;    // acknowledgements saying "already stored" (a resend's first copy)
  uint64_t failures = 0;      // publishes refused or not acknowledged in time (each sent again)
  uint64_t resent = 0;        // publishes of a message sent before
  uint64_t reordered = 0;     // messages stored after a later one (failed while it succeeded)
  uint64_t dropped_full = 0;  // messages dropped because every slot was taken
  uint64_t abandoned = 0;     // messages not stored when finish() gave up
  uint64_t refused_locally = 0;  // publish calls libnats refused (stalled); tried again
  size_t backlog = 0;         // messages held now, not yet stored
  std::string last_error;
};

class OrderedPublisher {
 public:
  // Connects (through `link`'s options; the ack handler is this publisher's). Throws naming the
  // server.
  OrderedPublisher(const NatsAddress& address, OrderedPublisherOptions options,
                   NatsLinkOptions link = {});
  ~OrderedPublisher();
  OrderedPublisher(const OrderedPublisher&) = delete;
  OrderedPublisher& operator=(const OrderedPublisher&) = delete;

  // A free slot of max_message_bytes, or nullptr (full: the message is dropped and counted).
  std::byte* claim() noexcept;
  // Hands the claimed slot, holding `bytes`, to the sender.
  void commit(size_t bytes) noexcept;
  // claim + copy + commit; false when dropped (full, or larger than a slot).
  bool offer(std::span<const std::byte> message) noexcept;

  // Waits up to timeout_ms for every message to be stored, then stops the sender; what is left is
  // counted as abandoned. give_up (may be empty), asked at once and then every few ms, ends the
  // wait early (a second Ctrl-C). True when nothing was abandoned.
  bool finish(int64_t timeout_ms, const std::function<bool()>& give_up = {}) noexcept;

  // Without the last error it allocates nothing.
  OrderedPublisherStats stats(bool with_last_error = true) const;
  NatsLink& link() noexcept { return *link_; }
  const NatsLink& link() const noexcept { return *link_; }

 private:
  enum : uint8_t { kEmpty = 0, kPending = 1, kAcked = 2, kFailed = 3 };
  static void on_ack(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* err, void* self);
  static void on_disconnect(void* self);
  void sender_loop() noexcept;
  bool send(uint64_t n) noexcept;
  void rewind(uint64_t head, uint64_t& next) noexcept;
  void wake() noexcept;
  std::atomic<uint8_t>& state(uint64_t n) noexcept { return state_[n % options_.slots]; }

  OrderedPublisherOptions options_;
  std::vector<std::byte> buffer_;                  // slots × max_message_bytes
  std::vector<size_t> length_;                     // per slot
  std::vector<int64_t> sent_ns_;                   // per slot, sender only
  std::vector<uint8_t> sent_before_;               // per slot, sender only: a resend?
  std::unique_ptr<std::atomic<uint8_t>[]> state_;  // per slot
  std::atomic<uint64_t> tail_{0};      // next message the producer fills
  std::atomic<uint64_t> released_{0};  // every message before this one is stored
  std::atomic<int64_t> in_flight_{0};
  std::atomic<bool> trouble_{false}, ending_{false}, stop_{false}, sender_done_{false};
  std::atomic<int64_t> end_deadline_ns_{0};
  std::atomic<uint32_t> work_{0};
  std::atomic<uint64_t> acked_{0}, duplicates_{0}, failures_{0}, resent_{0}, reordered_{0},
      dropped_full_{0}, abandoned_{0}, refused_{0};
  mutable std::mutex error_mutex_;  // failures only
  std::string last_error_;
  std::thread sender_;
  std::unique_ptr<NatsLink> link_;  // last: destroyed first, while the counters still exist
};

}  // namespace eit::nats
