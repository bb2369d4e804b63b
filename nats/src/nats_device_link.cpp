// The device side of raw frames over JetStream: a DeviceLink that publishes each frame through an
// OrderedPublisher (`emulate --to nats://…`). See nats_frames.hpp.
#include "eit/nats/nats_frames.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>

#include <fmt/format.h>

#include "nats_link.hpp"
#include "ordered_publisher.hpp"

namespace eit::nats {
namespace {

// Device side: each frame is copied into the ordered publisher's slots and returns; JetStream
// stores the frames in order, each once, retried across a server restart or a leader election.
class NatsDeviceLink final : public acquisition::DeviceLink {
 public:
  NatsDeviceLink(const NatsAddress& address, const NatsDeviceLinkOptions& options)
      : subject_(address.subject("raw")), url_(address.server_url) {
    NatsLinkOptions lo;
    lo.client_name = fmt::format("eitstream device {}.{}", address.site, address.bed);
    OrderedPublisherOptions po;
    po.subject = subject_;
    // A random run id: frames resent within this run are stored once, the next run's are new.
    po.msg_id_prefix = fmt::format("{}.{}.{:x}", address.site, address.bed, random_run_id());
    po.slots = options.slots;
    po.max_message_bytes = options.max_message_bytes;
    po.ack_wait_ms = options.ack_wait_ms;
    // With model=NAME every frame carries the header Eit-Model: NAME (workers pick the model),
    // with a rate Eit-Rate: HZ (workers state it in the bed's series message), with integer
    // samples Eit-Scale: X (what the readers multiply them by).
    if (!address.model.empty()) po.headers.emplace_back(kModelHeader, address.model);
    if (options.rate_hz > 0)
      po.headers.emplace_back(kRateHeader, fmt::format("{}", options.rate_hz));
    if (options.integer_scale > 0)
      po.headers.emplace_back(kScaleHeader, fmt::format("{}", options.integer_scale));
    publisher_ = std::make_unique<OrderedPublisher>(address, po, lo);
    publisher_->link().ensure_streams({});
  }
  std::string describe() const override { return fmt::format("NATS {} {}", url_, subject_); }
  std::string endpoint() const override { return url_; }
  std::string receiver_uri() const override {
    const auto& a = publisher_->link().address();
    return fmt::format("{}?site={}&bed={}", a.server_url, a.site, a.bed);
  }
  bool wait_for_receiver(std::chrono::milliseconds) override { return true; }  // JetStream keeps it
  bool send(std::span<const uint8_t> bytes) override {
    if (publisher_->offer(std::as_bytes(bytes))) return true;
    count_dropped();
    return false;
  }
  uint64_t messages_unread() const override { return publisher_->stats(false).abandoned; }
  OrderedPublisherStats publisher_stats() const { return publisher_->stats(false); }
  uint64_t reconnects() const { return publisher_->link().reconnects(); }

 protected:
  // Waits until JetStream stored every frame (then the link sends no more), ended early by
  // give_up (a second signal); what it did not store by then counts as dropped.
  bool wait_drained(std::chrono::milliseconds timeout,
                    const std::function<bool()>& give_up) override {
    const bool all = publisher_->finish(timeout.count(), give_up);
    for (uint64_t i = 0; i < publisher_->stats(false).abandoned; ++i) count_dropped();
    return all;
  }

 private:
  static uint64_t random_run_id() {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }
  std::string subject_, url_;
  std::unique_ptr<OrderedPublisher> publisher_;
};

}  // namespace

std::unique_ptr<acquisition::DeviceLink> open_nats_device_link(std::string_view uri,
                                                               NatsDeviceLinkOptions options) {
  return std::make_unique<NatsDeviceLink>(parse_nats_publisher_address(uri), options);
}

std::optional<NatsGatewayStats> nats_gateway_stats(const acquisition::DeviceLink& link) {
  const auto* gateway = dynamic_cast<const NatsDeviceLink*>(&link);
  if (!gateway) return std::nullopt;
  const auto p = gateway->publisher_stats();
  return NatsGatewayStats{p.acked,      p.failures,  p.resent,
                          p.duplicates, p.reordered, gateway->reconnects()};
}

}  // namespace eit::nats
