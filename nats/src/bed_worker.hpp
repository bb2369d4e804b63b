#pragma once
// BedWorker: the thread that reconstructs one bed for a NatsWorker while it holds the bed's lease
// (see eit/nats/nats_worker.hpp for the whole scheme). It reads eit.<site>.<bed>.raw through a
// durable pull consumer of its own (made after the last frame acknowledged, bed_consumer.hpp, when
// the thread starts and anew after any failure), decodes each frame, reconstructs
// it on the CPU with the bed's model, publishes the image on eit.<site>.<bed>.img with Nats-Msg-Id
// `<site>.<bed>.<raw stream sequence>`, waits until JetStream acknowledged every image of the
// batch and then acknowledges the batch's last raw frame (ack-all). The bed's resume point
// (bed_resume.hpp) follows the acknowledgements, stored at most once a second and when stopped,
// each time compare-and-set on the revision this thread last wrote: one refused means another
// worker took the bed over, and the thread ends without acknowledging anything more (and deletes
// its consumer, if the taker has not).
//
// Threads: the constructor starts the bed's thread; stop()/finished() from the manager's
// thread. The destructor stops and joins. Counters are shared atomics (WorkerCounters).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nats/nats.h>

#include "eit/nats/nats_worker.hpp"
#include "eit/recon/model.hpp"
#include "model_shelf.hpp"

namespace eit::nats {

struct WorkerCounters {
  std::atomic<uint64_t> frames{0}, bad_frames{0}, gaps{0}, publish_failures{0}, rewinds{0},
      bed_errors{0};
  std::mutex error_mutex;  // set-up problems only
  std::string last_error;
  void note(std::string message);
};

struct BedContext {
  natsConnection* nc = nullptr;
  ModelShelf* models = nullptr;
  WorkerCounters* counters = nullptr;
  int fetch_batch = 64;
  int64_t since_ns = 0;
  // Acknowledgements are allowed until this CLOCK_MONOTONIC time (the worker's heartbeat thread
  // moves it on after each heartbeat it stored).
  const std::atomic<int64_t>* valid_until_ns = nullptr;
};

class BedWorker {
 public:
  BedWorker(const BedContext& context, std::string site, std::string bed);
  ~BedWorker();
  BedWorker(const BedWorker&) = delete;
  BedWorker& operator=(const BedWorker&) = delete;

  void stop() noexcept { stop_.store(true, std::memory_order_relaxed); }
  // Stops the thread and waits for it (its batch stored and acknowledged).
  void join() noexcept;
  // The thread ended by itself (its lease ran out before it could acknowledge, or it was taken
  // over).
  bool finished() const noexcept { return finished_.load(std::memory_order_acquire); }
  // Another worker took the bed over while this one was frozen: a compare-and-set of the bed's
  // resume point was refused (bed_resume.hpp). The thread ended without acknowledging more.
  bool superseded() const noexcept { return superseded_.load(std::memory_order_acquire); }
  const std::string& site() const noexcept { return site_; }
  const std::string& bed() const noexcept { return bed_; }

 private:
  struct State;
  void loop() noexcept;

  BedContext context_;
  std::string site_, bed_;
  std::atomic<bool> stop_{false}, finished_{false}, superseded_{false};
  std::unique_ptr<State> state_;
  std::thread thread_;
};

}  // namespace eit::nats
