#pragma once
// DeviceLink: the device side of a live link, for `eitstream emulate` and tests: sends frames
// the way a device would, to whatever eitstream listens with open_live_source().
//
//   tcp-listen://host:port   listen (port 0 or *: ephemeral); one receiver at a time, re-accepted
//   tcp://host:port          connect to a receiver; reconnect with backoff after a loss
//   udp://host:port          one datagram per send()
//   pty                      a pseudo-terminal pair (openpty); endpoint() is the slave's path,
//                            which eitstream opens as serial://<path>; a receiver is there
//                            while someone has that path open
//   file://path              append to a file (a capture for replay or a hexdump)
//
// send() never throws: when no receiver is connected, the message is dropped and counted (a
// device keeps measuring whether or not a host listens) and the link tries again later. It may
// block while a connected receiver is slow (TCP, pty); a signal that interrupts that wait gives
// the message up, counted as dropped (TCP then closes the connection, as a disconnect, since a
// part-sent frame cannot be taken back). Set-up (open_device_link) throws naming the URI. One
// thread sends, drains and asks messages_unread(); the counters may be read from any.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "eit/acquisition/byte_transport.hpp"

namespace eit::acquisition {

class DeviceLink {
 public:
  virtual ~DeviceLink() = default;
  virtual std::string describe() const = 0;
  // "127.0.0.1:40123" (bound or connected address), "/dev/pts/7", the file path.
  virtual std::string endpoint() const = 0;
  // The URI the receiving side passes to open_live_source() (without ?format=).
  virtual std::string receiver_uri() const = 0;
  // Blocks until a receiver is there (TCP: accepted or connected; pty: the slave opened) or the
  // timeout passes. Datagram and file links are always ready.
  virtual bool wait_for_receiver(std::chrono::milliseconds timeout) = 0;
  // Sends one message (a frame, a line). False when it was dropped for want of a receiver.
  virtual bool send(std::span<const uint8_t> bytes) = 0;
  // Waits until what was sent has left this process's side of the link, so closing it loses
  // nothing (a pty's buffer is read by the receiver; NATS's messages are stored by JetStream): up
  // to `timeout`, and no longer than until give_up() returns true. True when drained.
  bool drain(std::chrono::milliseconds timeout, const std::function<bool()>& give_up = {}) {
    return wait_drained(timeout, give_up);
  }
  // Messages sent that have not reached the receiver, as far as the link can tell: NATS's not
  // stored by JetStream when drain() gave up; a pty's not read (or read in part) among the bytes
  // in the port's read buffer, the only ones the kernel counts (some 4 KiB: more may wait behind
  // them), so a lower bound. Else 0.
  virtual uint64_t messages_unread() const { return 0; }

  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  uint64_t disconnects() const noexcept { return disconnects_.load(std::memory_order_relaxed); }

 protected:
  // drain()'s wait; `give_up` may be empty. Links that hold nothing back are drained at once.
  virtual bool wait_drained(std::chrono::milliseconds /*timeout*/,
                            const std::function<bool()>& /*give_up*/) {
    return true;
  }
  void count_dropped() noexcept {
    dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void count_disconnect() noexcept {
    disconnects_.store(disconnects_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> dropped_{0}, disconnects_{0};
};

std::unique_ptr<DeviceLink> open_device_link(std::string_view uri, ReconnectPolicy reconnect = {});

// Throws what open_device_link(uri) throws for a malformed URI, an option the link does not take,
// a scheme that cannot send or (TLS schemes) a certificate, key, CA or CRL file that cannot be
// used, naming the option and the file; opens nothing (for a command that checks its arguments
// before slower set-up). `more_schemes`: schemes the caller takes besides the link's (emulate:
// nats://), listed with them in messages.
void check_device_link_uri(std::string_view uri, std::string_view more_schemes = {});

}  // namespace eit::acquisition
