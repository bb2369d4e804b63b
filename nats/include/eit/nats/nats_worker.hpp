#pragma once
// NatsWorker: `eitstream worker nats://…`, one of any number of reconstruction workers that share
// every bed whose raw frames are in JetStream (eit.<site>.<bed>.raw, stream EIT_RAW).
//
// How the beds are shared (docs/scale-out.md, "Workers"):
//  - Leases. Each worker puts a heartbeat `w.<worker>` into the key-value bucket EIT_WORKERS
//    (keys expire after lease_s) every lease_s/4; the bucket EIT_BEDS maps `b.<site>.<bed>` to
//    the worker holding the bed. A worker takes a bed that nobody holds, or whose holder's
//    heartbeat is gone, by a compare-and-set on that key (of several trying, one wins), and
//    gives it back by deleting the key. A worker killed outright stops its heartbeat; within
//    lease_s the others see it gone and take its beds. One heartbeat renews all of a worker's
//    beds, so a worker holds hundreds at the cost of one request per tick.
//  - Fair share. Each worker holds at most ceil(beds / live workers): a worker that starts makes
//    the others give back beds above their new share, which it then takes.
//  - Order and no loss. A bed is read through a durable pull consumer of its holder's own,
//    `eitworker-<site>-<bed>-<revision>`, with ack-all: after a batch's images are stored
//    (JetStream acknowledged every publish) the batch's last raw frame is acknowledged. A worker
//    that takes a bed makes its consumer after the last frame acknowledged and deletes its
//    previous holder's (nats/src/bed_consumer.hpp), so the frames that holder fetched but did not
//    finish come first, in order, nothing after them can overtake them, and a holder woken after
//    the takeover cannot be handed the taker's frames. That point is also kept in EIT_BEDS as
//    `r.<site>.<bed>`, naming the consumer (stored before the former consumer is deleted, and at
//    most once a second as frames are acknowledged), so a worker dying between deleting one and
//    making the other does not send the next one back to --since (nats/src/bed_resume.hpp).
//  - Geometry. The bed's series message (…series, as `run --publish` sends it) goes out before
//    a taker's first image, at a model change and every 2 s while images flow; its rate_hz is
//    the raw frames' Eit-Rate header (0 without one).
//  - Exactly once. Each image is published with Nats-Msg-Id `<site>.<bed>.<raw stream sequence>`:
//    a frame reconstructed again after a takeover is dropped by JetStream's duplicate window
//    (EIT_IMAGES keeps 2 minutes of ids), so every raw frame has one image.
//  - Fencing by time: a bed thread acknowledges only within 2/3 lease_s of its worker's last
//    stored heartbeat; past that it stops and leaves the bed, and a worker whose heartbeat lapsed
//    that long gives up all its beds and starts over.
//  - Fencing by revision: the bed's resume point is written compare-and-set on the revision its
//    holder last wrote, and a taker always writes it, so a holder frozen past a takeover has its
//    next write refused and gives the bed up (counted as taken over) instead of moving the point
//    back. A lease key is deleted only at the revision its holder wrote.
//
// Integer samples are multiplied by each raw message's Eit-Scale header (1 without one). Which
// model: the first raw message's header Eit-Model: NAME picks DIR/NAME.h5; without the header,
// DIR/default.h5. The model must carry a v_ref (every worker then computes the same image
// of a bed); set-up problems of one bed are counted and reported, never fatal to the others.
//
// Threads: run() on the caller's thread manages leases; each held bed has a thread of its own
// (fetch, decode, reconstruct on the CPU, publish). stats() from any thread. Per frame: libnats
// allocates its messages; eitstream's own per-frame path (decode, reconstruct, header) does not.
#include <atomic>
#include <cstdint>
#include <string>

#include "eit/nats/nats_address.hpp"
#include "eit/nats/nats_streams.hpp"

namespace eit::nats {

inline constexpr const char* kWorkerBucket = "EIT_WORKERS";  // heartbeats
inline constexpr const char* kBedBucket = "EIT_BEDS";        // who holds, where each resumes

struct WorkerOptions {
  std::string model_dir;  // NAME.h5 per Eit-Model header, default.h5 otherwise
  std::string worker_id;  // unique per worker; default host-pid
  std::string site;       // only beds of this site; empty: every site
  double lease_s = 3.0;   // a dead worker's beds move after at most this (+ one tick)
  int fetch_batch = 64;   // raw frames per fetch, and per image-ack round
  int64_t since_ns = 0;   // where a bed never read before starts: 0 all, -1 new, else time
  StreamLimits limits;    // for the streams and the lease bucket it creates (replicas)
};

struct WorkerStats {
  uint64_t frames = 0;            // raw frames reconstructed and stored as images (acknowledged)
  uint64_t bad_frames = 0;        // raw messages the decoder rejected (acknowledged, no image)
  uint64_t gaps = 0;              // frames missing in a bed's device sequence
  uint64_t publish_failures = 0;  // image publishes JetStream refused or never acknowledged
  uint64_t rewinds = 0;           // a bed's consumer recreated from its ack floor after a failure
  uint64_t beds_taken = 0, beds_released = 0, beds_lost = 0;
  // Beds given up because another worker took them over while this one was frozen (a
  // compare-and-set of the bed's resume point refused); not in beds_lost.
  uint64_t beds_taken_over = 0;
  uint64_t bed_errors = 0;  // beds whose set-up failed (model missing, no v_ref, …)
  size_t beds_held = 0;
  size_t beds_seen = 0, workers_seen = 0;
};

class NatsWorker {
 public:
  // Connects (waiting for the server), creates the streams and the lease bucket if missing.
  // Throws naming the server or the model directory.
  NatsWorker(const NatsAddress& address, WorkerOptions options);
  ~NatsWorker();
  NatsWorker(const NatsWorker&) = delete;
  NatsWorker& operator=(const NatsWorker&) = delete;

  // Until `stop` is set: leases, bed threads. Then gives every bed back (its threads finish
  // their batch and acknowledge it) and returns.
  void run(const std::atomic<bool>& stop);
  WorkerStats stats() const;
  // The last set-up problem of a bed, in words (empty when none).
  std::string last_error() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace eit::nats
