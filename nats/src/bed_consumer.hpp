#pragma once
// The durable pull consumer through which a worker reads one bed's raw frames on EIT_RAW
// (ack-all). A worker taking the bed, or rewinding it after a failed publish, makes a consumer of
// its own, `eitworker-<site>-<bed>-<revision>`, to deliver from the first frame nobody
// acknowledged: frames a previous holder fetched and did not finish come first, in order, and
// nothing acknowledged comes again. The bed's resume point names it (bed_resume.hpp), and the
// consumer the point named before is deleted.
//
// Why one per holder: with one name shared by every holder, a holder frozen past a takeover that
// woke with a fetch pending was served from the taker's consumer, and a frame handed to it was
// then covered by the taker's ack-all without an image (1 frame of 800 in 2 of 20 runs of
// tests/tools/test_nats_worker_fence.cpp). Its own consumer is gone by then, and its
// acknowledgements cannot reach the taker's. `<revision>` is the point's revision the opener's
// compare-and-set replaces: only one writer can, so two openers never share a name (with no point
// yet, `new<random 64-bit hex>` stands in for it). A point an older eitstream stored names no
// consumer: then it is the shared eitworker-<site>-<bed>. Each
// consumer is deleted by the server after an hour without a fetch, the backstop for one whose
// opener died between storing the point and deleting the former one.
//
// Why not just the consumer's acknowledgement floor: nats-server 2.9 reports a floor of 0 for a
// consumer that has acknowledged nothing since it was made (a takeover with no frame since, or
// frames fetched and not finished), and resuming after 0 reconstructs the bed's whole history
// again (stored twice once the image stream's duplicate window has passed). So the consumer is
// always made "deliver by start sequence", its config keeping where it started; for a bed never
// read, an ephemeral consumer with the worker's --since policy is made first only to learn, from
// the server, which sequence that is.
//
// Why not the consumer alone: the former one is deleted before the new one is made, and a worker
// that dies in between leaves none. So the point the new one is made to start after is first
// stored as the bed's resume point (bed_resume.hpp), and the consumer starts after the latest of
// that point and the former consumer's. That store is also what fences a former holder off: it
// moves the point's revision on.
//
// Set-up path: blocking JetStream requests, called on the bed's thread.
#include <cstdint>
#include <string>

#include <nats/nats.h>

#include "bed_resume.hpp"

namespace eit::nats {

// The stream sequence through which every frame of the consumer `ci` describes is acknowledged
// (or was never to be read): the next holder starts after it.
uint64_t acknowledged_through(const jsConsumerInfo& ci) noexcept;

// eitworker-<site>-<bed>: the consumer every holder read through before each made its own, the
// one a resume point that names none goes with.
std::string shared_consumer_name(const std::string& site, const std::string& bed);

// (Re)creates the bed's consumer and subscribes to it, to deliver after the latest of the stored
// resume point, `*resume` (what the calling thread acknowledged; raw_created_ns 0: nothing) and
// what the consumer acknowledged; stores that point first, compare-and-set (bed_resume.hpp):
// `*revision` 0 takes the bed, writing over the revision it reads; otherwise it is the revision the
// caller last read or wrote, and a point stored since by another worker leaves everything as it
// is and returns NATS_MISMATCH (the bed is no longer the caller's). `since_ns` is the worker's
// --since for a bed never read: 0 all, < 0 new, > 0 from that time (the second it falls in; the
// caller drops what was stored before it). On success `*resume` is the point delivery starts
// after (its `consumer` the one `*sub` reads) and `*revision` the point's; on failure `error`
// says what and the status is returned, and `*revision` is the point's new one if it was stored
// before the failure (a next try then compares with that write).
natsStatus open_bed_consumer(jsCtx* js, const std::string& site, const std::string& bed,
                             int64_t since_ns, ResumePoint* resume, uint64_t* revision,
                             natsSubscription** sub, std::string* error);

}  // namespace eit::nats
