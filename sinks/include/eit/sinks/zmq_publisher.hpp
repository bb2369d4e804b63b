#pragma once
// ZmqPublisher: the ImageSink that sends every image over ZeroMQ in the wire format of
// docs/protocol.md: multipart [topic "eit/<stream>/img", 112-byte ImageHeader, float32 payload],
// plus JSON series messages on "eit/<stream>/series" at begin(), every interval_s and a
// series-end at end().
//
// Patterns: kPub (PUB, binds; subscribers filter by topic prefix) or kPush (PUSH, binds; for
// lossless consumers such as recorders). Policies: live — non-blocking sends; PUB queues and drops
// per subscriber (a stalled subscriber never holds back the others; PeerGuard counts the frames
// published while a subscriber was stalled), PUSH drops and counts a frame that finds no peer or
// a full queue; lossless — publish() waits until the socket takes the frame or abort() is
// called, and end() waits (up to drain_timeout_s) until every frame and the series-end have left
// for the consumer and been acknowledged by its TCP stack, then (up to drain_timeout_s again) for
// the consumers to close their connections, as docs/protocol.md asks them to after the
// series-end; frames that did not leave are counted in stats().dropped and health().undelivered.
// Never CONFLATE (multipart messages).
//
// Hardening: ZMQ_MAXMSGSIZE bounds what a peer may send in one message (max_inbound_bytes);
// PeerGuard disconnects a peer over its inbound byte budget (subscription floods) and refuses
// connections beyond max_peers.
//
// Security (docs/security.md): with curve_server set the socket is a CURVE server (encrypted,
// the server authenticated by its key) and a ZapAuthenticator on the publisher's context admits
// only clients whose public key is in curve_allowed; refused handshakes are counted in
// health().curve_refused. Needs a context no other ZAP handler is bound on.
//
// Zero-copy: header and image of each frame are written into a slot of a preallocated
// FrameBufferPool and handed to libzmq with zmq_msg_init_data; the free callback returns the slot.
// publish() allocates nothing itself (libzmq allocates a 40-byte refcount block per zero-copy
// message internally); when every slot is lent out (several subscribers stalled at different
// points) a frame is sent by copy instead and counted in copied_sends().
//
// Batches (publish_batch > 1, image_batch.hpp): a slot holds that many images; publish() adds
// the frame to the open slot and sends it as one "imgs" message once it is full, flush() (the
// sink's queue ran empty) sends what it holds. libzmq's cost per message, not bytes, limits how
// many images one socket carries (~290 k messages/s over ipc on the H200 host), so a backlog
// leaves in a few large messages; a lone image still goes at once, as the 3-part "img" message.
//
// Threads: construction anywhere (binds: throws std::runtime_error naming the endpoint);
// begin/publish/tick/end on one thread at a time (whichever thread drives the sink: not
// necessarily the same thread as the constructor); stats/health/abort/endpoint from any thread.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/curve_keys.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/series_message.hpp"
#include "eit/sinks/zmq_io_placement.hpp"

namespace eit::sinks {

class FrameBufferPool;
class PeerGuard;
class ZapAuthenticator;
struct PeerGuardStats;

// What the status line shows about the publisher's peers (see PeerGuard).
struct PublisherHealth {
  uint64_t peers = 0, stalled = 0, accepted = 0, abusers = 0, refused = 0;
  uint64_t frames_while_stalled = 0;  // published while at least one peer was stalled, in all
  uint64_t copied_sends = 0;          // frames sent by copy because the pool was exhausted
  uint64_t undelivered = 0;           // lossless: frames still queued when end() gave up
  bool series_end_delivered = false;  // lossless: the series-end left before end() returned
  uint64_t consumers_lingering = 0;   // lossless: consumers still connected when end() gave up
                                      // waiting for them (everything was TCP-acknowledged)
  uint64_t curve_accepted = 0;        // CURVE handshakes the allow list admitted
  uint64_t curve_refused = 0;         // CURVE: handshakes refused (unknown key, plaintext…)
  uint64_t curve_unknown_keys = 0;    // of those, CURVE clients whose key is not allowed
};

enum class ZmqPattern { kPub, kPush };

struct ZmqPublisherOptions {
  std::string endpoint = "tcp://127.0.0.1:5555";  // "tcp://127.0.0.1:*" for an ephemeral port
  ZmqPattern pattern = ZmqPattern::kPub;
  bool lossless = false;
  int send_hwm = 1000;              // messages queued per peer before live sends drop
  int linger_ms = 1000;             // how long closing waits to flush queued messages
  double drain_timeout_s = 10;      // lossless end(): longest wait for queued frames to leave
  int64_t max_inbound_bytes = 256;  // ZMQ_MAXMSGSIZE: a peer sending more in one message is cut
  size_t max_peers = 64;            // simultaneous connections; more are refused
  uint64_t peer_inbound_budget = 16384;  // bytes a peer may send (+256 B/s) before it is cut
  size_t pool_slots = 0;  // zero-copy slots; 0: 2·send_hwm + 64, at most 64 MiB in all
  // Most images per message, 1 … kMaxImageBatch (1: "img" only); fewer where that many images
  // would exceed kMaxBatchPayloadBytes (publish_batch() says what the publisher uses).
  size_t publish_batch = 1;
  // ≥ 0: the context's I/O threads run on this CPU (zmq_io_placement.hpp), meant to be the CPU of
  // the thread that publishes; a given context must not have made a socket yet. -1: unplaced.
  int io_cpu = -1;
  // With io_cpu ≥ 0: whether those threads may preempt the publishing thread when a send wakes
  // them (kPreempt) or wait for it to yield (kDefer; zmq_io_placement.hpp).
  IoWake io_wake = IoWake::kPreempt;
  // Live, one image per message only: publish() runs on the thread that finished the frame, with
  // no sink queue or thread (ImageSink::inline_safe()). Its send never waits (a full peer queue
  // drops and counts); it saves a thread hand-off and keeps the frame on one CPU, at the cost of
  // the send call on the producing thread (place io_cpu on that thread's CPU).
  bool send_inline = false;
  SeriesInfo series;      // stream name, series id (0: random), description, interval
  // CURVE server keys (secret_z85 empty: plaintext) and the client public keys (z85) admitted.
  CurveKeyPair curve_server;
  std::vector<std::string> curve_allowed;
};

class ZmqPublisher final : public pipeline::ImageSink {
 public:
  ZmqPublisher(const recon::Model& model, ZmqPublisherOptions options,
               std::shared_ptr<zmq::context_t> context = nullptr);
  ~ZmqPublisher() override;

  // The endpoint actually bound (the ephemeral port resolved), e.g. "tcp://127.0.0.1:40123".
  const std::string& endpoint() const noexcept { return endpoint_; }
  uint64_t series_id() const noexcept { return options_.series.series_id; }
  size_t publish_batch() const noexcept { return options_.publish_batch; }

  std::string_view name() const noexcept override { return "zmq"; }
  void begin() noexcept override;
  void publish(const pipeline::FrameSlot& frame) noexcept override;
  void flush() noexcept override;
  void tick(int64_t now_ns) noexcept override;
  void end() noexcept override;
  pipeline::SinkStats stats() const noexcept override;
  pipeline::SinkPolicy policy() const noexcept override {
    return options_.lossless ? pipeline::SinkPolicy::kBlock : pipeline::SinkPolicy::kDropNewest;
  }
  void abort() noexcept override { aborted_.store(true, std::memory_order_relaxed); }
  // options.send_inline. libzmq's own per-message work is the exception to the inline contract:
  // a 40-byte refcount block and its mailbox's (uncontended) lock when it wakes the I/O thread.
  bool inline_safe() const noexcept override { return options_.send_inline; }
  bool helpers_on_caller_cpu() const noexcept override { return io_tag_ >= 0; }
  // With IoWake::kDefer: whether a message went to the I/O threads since the last call.
  bool take_handoff() noexcept override { return std::exchange(handed_off_, false); }
  // Lossless, when the run is asked to stop: wait for the consumer at most until
  // `deadline_ns` (pipeline clock), in publish() and in end()'s drain together; a frame the
  // socket has not taken by then is dropped and counted. Without it a lossless run with no
  // consumer waits for one for ever. The first call sets the deadline; any thread.
  void stop_waiting_at(int64_t deadline_ns) noexcept;
  PublisherHealth health() const noexcept;
  // One line for the status line, e.g. "subscribers 2 (1 stalled: 1804 frames), cut 1".
  std::string health_line() const;
  // With options.io_cpu ≥ 0: that CPU, and the tag in the names of the context's I/O threads,
  // for io_thread_cpus() (zmq_io_placement.hpp); else -1 both.
  int io_cpu() const noexcept { return io_tag_ >= 0 ? options_.io_cpu : -1; }
  int io_tag() const noexcept { return io_tag_; }
  bool io_defers() const noexcept { return io_tag_ >= 0 && options_.io_wake == IoWake::kDefer; }

 private:
  // images: how many images the message carries (counted as dropped if it does not go out).
  bool send_message(zmq::message_t* parts, size_t n, uint64_t images) noexcept;
  void send_copy(const ImageHeader& h, const float* image) noexcept;
  // Where image i's payload goes in a batch slot: after the slot's publish_batch headers.
  std::byte* payload_place(std::byte* slot, size_t i) const noexcept {
    return slot + options_.publish_batch * sizeof(ImageHeader) + i * payload_bytes_;
  }
  bool send_series(const std::string& json, bool lend = false) noexcept;
  void guard(int64_t now_ns) noexcept;
  void drain() noexcept;

  ZmqPublisherOptions options_;
  std::shared_ptr<zmq::context_t> context_;
  int io_tag_ = -1;  // the I/O threads' name tag when placed
  bool handed_off_ = false;  // take_handoff(): set by a send while the I/O threads defer
  zmq::socket_t socket_;
  std::string endpoint_;
  std::string image_topic_, batch_topic_, series_topic_, series_json_;
  ImageHeader header_template_;
  size_t payload_bytes_ = 0;
  int64_t batch_slot_ = -1;  // the slot publish() fills (-1: none open)
  size_t batch_count_ = 0;   // images in it
  int64_t next_series_ns_ = 0;
  int64_t next_guard_ns_ = 0;
  bool end_taken_ = false;  // libzmq took the series-end
  std::unique_ptr<FrameBufferPool> pool_;
  std::unique_ptr<PeerGuard> guard_;
  std::unique_ptr<ZapAuthenticator> zap_;
  std::atomic<bool> aborted_{false}, end_delivered_{false};
  std::atomic<int64_t> give_up_ns_{INT64_MAX};  // stop_waiting_at()
  // Lossless waiting is over: abort() or the stop_waiting_at() deadline passed.
  bool done_waiting() const noexcept;
  std::atomic<uint64_t> sent_{0}, dropped_{0}, errors_{0}, copied_{0}, undelivered_{0},
      lingering_{0};
};

}  // namespace eit::sinks
