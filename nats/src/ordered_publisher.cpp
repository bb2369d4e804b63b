// OrderedPublisher: the slots, the sender's send / settle / rewind cycle and the acknowledgement
// bookkeeping (see ordered_publisher.hpp).
#include "ordered_publisher.hpp"

#include <charconv>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/pipeline/clock.hpp"

namespace eit::nats {
namespace {
constexpr const char* kMsgIdHeader = "Nats-Msg-Id";

// n from "prefix.n"; false when the message is not one of ours.
bool message_number(natsMsg* msg, const std::string& prefix, uint64_t& n) {
  const char* id = nullptr;
  if (natsMsgHeader_Get(msg, kMsgIdHeader, &id) != NATS_OK || !id) return false;
  const size_t len = std::strlen(id);
  if (len <= prefix.size() + 1 || std::memcmp(id, prefix.data(), prefix.size()) != 0 ||
      id[prefix.size()] != '.')
    return false;
  const char* first = id + prefix.size() + 1;
  return std::from_chars(first, id + len, n).ec == std::errc{};
}
}  // namespace

OrderedPublisher::OrderedPublisher(const NatsAddress& address, OrderedPublisherOptions options,
                                   NatsLinkOptions link)
    : options_(std::move(options)) {
  if (options_.slots == 0 || options_.max_message_bytes == 0)
    throw std::invalid_argument(fmt::format(
        "NATS publisher {}: slots {} and max_message_bytes {}; expected both at least 1",
        options_.subject, options_.slots, options_.max_message_bytes));
  buffer_.resize(options_.slots * options_.max_message_bytes);
  length_.resize(options_.slots);
  sent_ns_.resize(options_.slots);
  sent_before_.resize(options_.slots);
  state_ = std::make_unique<std::atomic<uint8_t>[]>(options_.slots);
  link.ack_handler = &OrderedPublisher::on_ack;
  link.ack_closure = this;
  link.on_disconnect = &OrderedPublisher::on_disconnect;
  link.disconnect_closure = this;
  link.max_pending_acks = std::max<int64_t>(link.max_pending_acks, options_.max_in_flight + 64);
  link_ = std::make_unique<NatsLink>(address, link);
  sender_ = std::thread([this] {
    sender_loop();
    sender_done_.store(true);
  });
}

OrderedPublisher::~OrderedPublisher() {
  stop_.store(true);
  wake();
  if (sender_.joinable()) sender_.join();
}

void OrderedPublisher::wake() noexcept {
  work_.fetch_add(1, std::memory_order_release);
  work_.notify_one();
}

std::byte* OrderedPublisher::claim() noexcept {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  if (tail - released_.load(std::memory_order_acquire) >= options_.slots) {
    dropped_full_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return buffer_.data() + (tail % options_.slots) * options_.max_message_bytes;
}

void OrderedPublisher::commit(size_t bytes) noexcept {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  length_[tail % options_.slots] = bytes;
  tail_.store(tail + 1, std::memory_order_release);
  wake();
}

bool OrderedPublisher::offer(std::span<const std::byte> message) noexcept {
  if (message.size() > options_.max_message_bytes) {
    dropped_full_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::byte* slot = claim();
  if (!slot) return false;
  std::memcpy(slot, message.data(), message.size());
  commit(message.size());
  return true;
}

void OrderedPublisher::on_ack(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* err, void* self) {
  auto* p = static_cast<OrderedPublisher*>(self);
  uint64_t n = 0;
  // Other publishes on this connection (a sink's series messages) are not ours to count.
  if (natsMsg_GetSubject(msg) != p->options_.subject ||
      !message_number(msg, p->options_.msg_id_prefix, n)) {
    natsMsg_Destroy(msg);
    return;
  }
  if (ack) {
    if (ack->Duplicate) p->duplicates_.fetch_add(1, std::memory_order_relaxed);
    p->acked_.fetch_add(1, std::memory_order_relaxed);
    p->state(n).store(kAcked);
  } else {
    p->failures_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(p->error_mutex_);
      p->last_error_ = fmt::format(
          "JetStream did not store {} #{}: {}", p->options_.subject, n,
          err && err->ErrText ? err->ErrText
                              : (err ? natsStatus_GetText(err->Err) : "no acknowledgement"));
    }
    p->state(n).store(kFailed);
    p->trouble_.store(true);
  }
  // After the state: a sender that sees nothing in flight sees every state settled.
  p->in_flight_.fetch_sub(1);
  natsMsg_Destroy(msg);
  p->wake();
}

void OrderedPublisher::on_disconnect(void* self) {
  // What was in flight on the lost connection may never be acknowledged: stop sending new
  // messages until it is settled (acknowledged or timed out).
  auto* p = static_cast<OrderedPublisher*>(self);
  p->trouble_.store(true);
  p->wake();
}

bool OrderedPublisher::send(uint64_t n) noexcept {
  const size_t slot = n % options_.slots;
  natsMsg* msg = nullptr;
  if (natsMsg_Create(&msg, options_.subject.c_str(), nullptr,
                     reinterpret_cast<const char*>(buffer_.data() + slot * options_.max_message_bytes),
                     static_cast<int>(length_[slot])) != NATS_OK)
    return false;
  for (const auto& [name, value] : options_.headers) {
    if (natsMsgHeader_Set(msg, name.c_str(), value.c_str()) != NATS_OK) {
      natsMsg_Destroy(msg);
      return false;
    }
  }
  char id[160];
  const auto r = fmt::format_to_n(id, sizeof id - 1, "{}.{}", options_.msg_id_prefix, n);
  *r.out = '\0';
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MsgId = id;
  po.MaxWait = options_.ack_wait_ms;
  state_[slot].store(kPending);
  in_flight_.fetch_add(1);
  if (js_PublishMsgAsync(link_->jetstream(), &msg, &po) != NATS_OK) {
    in_flight_.fetch_sub(1);
    state_[slot].store(kEmpty);
    natsMsg_Destroy(msg);  // still ours when the publish failed
    return false;
  }
  if (sent_before_[slot]) resent_.fetch_add(1, std::memory_order_relaxed);
  sent_before_[slot] = 1;
  sent_ns_[slot] = pipeline::now_ns();
  return true;
}

// Every publish is settled: go back to the oldest message not stored. One that failed while a
// later one was stored will land after it.
void OrderedPublisher::rewind(uint64_t head, uint64_t& next) noexcept {
  bool failed_before = false;
  uint64_t failed_run = 0;
  for (uint64_t n = head; n < next; ++n) {
    const uint8_t s = state(n).load();
    if (s == kFailed || s == kEmpty) {
      failed_before = true;
      ++failed_run;
      state(n).store(kEmpty);
    } else if (s == kAcked && failed_before) {
      reordered_.fetch_add(failed_run, std::memory_order_relaxed);
      failed_run = 0;
    }
  }
  next = head;
}

void OrderedPublisher::sender_loop() noexcept {
  using namespace std::chrono;
  uint64_t head = 0, next = 0;  // head: oldest not stored; next: the next to send
  int64_t pause_until_ns = 0;
  // After a failure one message at a time until one is stored (while a leader is being elected
  // every publish fails: sending the whole backlog again each round only adds load).
  bool probing = false;
  while (!stop_.load()) {
    const uint32_t seen = work_.load(std::memory_order_acquire);
    while (head < next && state(head).load() == kAcked) {
      const size_t slot = head % options_.slots;
      state_[slot].store(kEmpty);
      sent_before_[slot] = 0;
      released_.store(++head, std::memory_order_release);
      probing = false;
    }
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    const int64_t now = pipeline::now_ns();
    if (ending_.load()) {
      if (head == tail) return;
      if (now > end_deadline_ns_.load()) {
        abandoned_.store(tail - head);
        released_.store(tail, std::memory_order_release);  // counted as abandoned, not backlog
        return;
      }
    }
    if (trouble_.load()) {
      if (in_flight_.load() == 0) {  // everything settled: start again from the oldest
        trouble_.store(false);
        rewind(head, next);
        pause_until_ns = now + options_.retry_pause_ms * 1'000'000;
        probing = true;
      } else {
        std::this_thread::sleep_for(milliseconds(1));
        continue;
      }
    }
    // An acknowledgement long overdue (a leader lost, a dead route): send nothing new until it
    // settles, so that what follows cannot be stored before it.
    const bool stalled = head < next && state(head).load() == kPending &&
                         now - sent_ns_[head % options_.slots] > options_.stall_ms * 1'000'000;
    bool refused = false, disconnected = false;
    if (!stalled && now >= pause_until_ns) {
      const int64_t limit = probing ? 1 : options_.max_in_flight;
      while (next < tail && in_flight_.load() < limit && !trouble_.load()) {
        if (state(next).load() == kAcked) {  // stored before a rewind
          ++next;
          continue;
        }
        // Nothing is published while disconnected: libnats would keep it in its reconnect
        // buffer and send it after reconnecting, even once its acknowledgement had timed out
        // and the message before it was being sent again, so the two would be stored out of
        // order. (The disconnect callback, which also raises trouble_, can come milliseconds
        // after the connection's state changed; the state itself is read here.)
        if (!link_->connected()) {
          trouble_.store(true);
          disconnected = true;
          break;
        }
        if (!send(next)) {
          refused_.fetch_add(1, std::memory_order_relaxed);
          refused = true;
          break;
        }
        ++next;
      }
    }
    // Acknowledgements, failures, disconnections and new messages all wake the sender; only a
    // pause, a refusal, a connection not yet back (nothing wakes the sender when it returns, and
    // a full buffer takes no new messages) or the end's deadline need the clock.
    if (refused || disconnected || now < pause_until_ns || ending_.load())
      std::this_thread::sleep_for(milliseconds(1));
    else
      work_.wait(seen, std::memory_order_acquire);
  }
}

bool OrderedPublisher::finish(int64_t timeout_ms, const std::function<bool()>& give_up) noexcept {
  end_deadline_ns_.store(pipeline::now_ns() + timeout_ms * 1'000'000);
  ending_.store(true);
  wake();
  while (give_up && !sender_done_.load()) {
    if (give_up()) {
      end_deadline_ns_.store(pipeline::now_ns());  // the sender abandons the rest at once
      wake();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (sender_.joinable()) sender_.join();
  return abandoned_.load() == 0;
}

OrderedPublisherStats OrderedPublisher::stats(bool with_last_error) const {
  OrderedPublisherStats s;
  s.acked = acked_.load(std::memory_order_relaxed);
  s.duplicates = duplicates_.load(std::memory_order_relaxed);
  s.failures = failures_.load(std::memory_order_relaxed);
  s.resent = resent_.load(std::memory_order_relaxed);
  s.reordered = reordered_.load(std::memory_order_relaxed);
  s.dropped_full = dropped_full_.load(std::memory_order_relaxed);
  s.abandoned = abandoned_.load(std::memory_order_relaxed);
  s.refused_locally = refused_.load(std::memory_order_relaxed);
  s.backlog = tail_.load(std::memory_order_relaxed) - released_.load(std::memory_order_relaxed);
  if (!with_last_error) return s;
  {
    std::lock_guard lock(error_mutex_);
    s.last_error = last_error_;
  }
  if (s.last_error.empty()) s.last_error = link_->last_error();
  return s;
}

}  // namespace eit::nats
