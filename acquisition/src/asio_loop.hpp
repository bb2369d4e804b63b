#pragma once
// IoLoop: runs one Boost.Asio operation at a time on the caller's thread with a deadline, and
// lets another thread interrupt it. The pattern every transport uses:
//
//   Completion c;
//   socket.async_read_some(buf, c.handler());
//   loop.run(c, deadline, [&] { socket.cancel(); });
//   if (c.ok()) ...           // else c.ec says why (operation_aborted: deadline or stop)
//
// run() returns only once the operation has completed (successfully, with an error, or
// cancelled), so the buffer and the Completion are free again afterwards.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <new>

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

namespace eit::acquisition::detail {

// Memory for the one operation a Completion has in flight. Asio allocates each asynchronous
// operation through the handler's associated allocator; its default only recycles memory on
// threads inside io_context::run(), and a transport starts its operations outside it, so without
// this every read would call operator new.
class HandlerMemory {
 public:
  void* allocate(std::size_t size) {
    if (!in_use_ && size <= sizeof(storage_)) {
      in_use_ = true;
      return storage_;
    }
    return ::operator new(size);
  }
  void deallocate(void* p) noexcept {
    if (p == storage_) {
      in_use_ = false;
    } else {
      ::operator delete(p);
    }
  }

 private:
  alignas(std::max_align_t) unsigned char storage_[1024];
  bool in_use_ = false;
};

template <typename T>
struct HandlerAllocator {
  using value_type = T;
  explicit HandlerAllocator(HandlerMemory& m) noexcept : memory(&m) {}
  template <typename U>
  HandlerAllocator(const HandlerAllocator<U>& other) noexcept : memory(other.memory) {}
  T* allocate(std::size_t n) { return static_cast<T*>(memory->allocate(sizeof(T) * n)); }
  void deallocate(T* p, std::size_t) noexcept { memory->deallocate(p); }
  template <typename U>
  bool operator==(const HandlerAllocator<U>& o) const noexcept {
    return memory == o.memory;
  }
  template <typename U>
  bool operator!=(const HandlerAllocator<U>& o) const noexcept {
    return memory != o.memory;
  }
  HandlerMemory* memory;
};

struct Completion {
  bool done = false;
  boost::system::error_code ec;
  size_t bytes = 0;
  HandlerMemory memory;

  struct Handler {
    Completion* c;
    using allocator_type = HandlerAllocator<void>;
    allocator_type get_allocator() const noexcept { return allocator_type(c->memory); }
    void operator()(const boost::system::error_code& e, size_t n = 0) const {
      c->done = true;
      c->ec = e;
      c->bytes = n;
    }
  };

  bool ok() const noexcept { return done && !ec; }
  Handler handler() noexcept {
    done = false;
    ec.clear();
    bytes = 0;
    return Handler{this};
  }
};

class IoLoop {
 public:
  using Clock = std::chrono::steady_clock;

  boost::asio::io_context& io() noexcept { return io_; }
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }
  // Any thread. Makes the running (or next) run() cancel its operation and return.
  void stop() noexcept {
    stopped_.store(true, std::memory_order_release);
    io_.stop();
  }

  template <typename Cancel>
  void run(Completion& c, Clock::time_point deadline, Cancel&& cancel) {
    io_.restart();  // a stop() from here on still interrupts run_one_until
    if (!stopped()) {
      while (!c.done && io_.run_one_until(deadline) != 0) {
      }
    }
    if (!c.done) finish(c, cancel);
  }

  // As run(), except that reaching `deadline` leaves the operation in flight and returns false,
  // so that a later call (or finish()) goes on with it: an operation with a timeout of its own
  // that outlasts one read's deadline. True once it completed; after stop() it is cancelled.
  template <typename Cancel>
  bool run_part(Completion& c, Clock::time_point deadline, Cancel&& cancel) {
    io_.restart();
    if (!stopped()) {
      while (!c.done && io_.run_one_until(deadline) != 0) {
      }
      if (c.done || !stopped()) return c.done;
    }
    if (!c.done) finish(c, cancel);
    return true;
  }

  // Cancels the operation in flight and waits for its handler.
  template <typename Cancel>
  void finish(Completion& c, Cancel&& cancel) {
    cancel();
    while (!c.done) {  // the cancelled handler runs promptly; restart defeats a racing stop()
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(100));
    }
  }

 private:
  boost::asio::io_context io_;
  std::atomic<bool> stopped_{false};
};

}  // namespace eit::acquisition::detail
