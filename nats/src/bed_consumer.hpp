#pragma once
// The durable pull consumer through which a worker reads one bed's raw frames,
// eitworker-<site>-<bed> on EIT_RAW (ack-all). A worker taking the bed, or rewinding it after a
// failed publish, makes it anew so that it delivers from the first frame nobody acknowledged:
// frames a previous holder fetched and did not finish come first, in order, and nothing
// acknowledged comes again.
//
// Why not just the consumer's acknowledgement floor: nats-server 2.9 reports a floor of 0 for a
// consumer that has acknowledged nothing since it was made (a takeover with no frame since, or
// frames fetched and not finished), and resuming after 0 reconstructs the bed's whole history
// again (stored twice once the image stream's duplicate window has passed). So the consumer is
// always made "deliver by start sequence", its config keeping where it started, and a bed never
// read is first made with the worker's --since policy only to learn, from the server, which
// sequence that is.
//
// Why not the consumer alone: it is deleted before it is made anew, and a worker that dies in
// between leaves none. So the point it is made to start after is first stored as the bed's resume
// point (bed_resume.hpp), and the consumer starts after the latest of that point and its own.
// That store is also what fences a former holder off: it moves the point's revision on.
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

// (Re)creates the bed's consumer and subscribes to it, to deliver after the latest of the stored
// resume point, `*resume` (what the calling thread acknowledged; raw_created_ns 0: nothing) and
// what the consumer acknowledged; stores that point first, compare-and-set (bed_resume.hpp):
// `*revision` 0 takes the bed, writing over the revision it reads; otherwise it is the revision the
// caller last read or wrote, and a point stored since by another worker leaves everything as it
// is and returns NATS_MISMATCH (the bed is no longer the caller's). `since_ns` is the worker's
// --since for a bed never read: 0 all, < 0 new, > 0 from that time (the second it falls in; the
// caller drops what was stored before it). On success `*resume` is the point delivery starts
// after and `*revision` the point's; on failure `error` says what and the status is returned.
natsStatus open_bed_consumer(jsCtx* js, const std::string& site, const std::string& bed,
                             int64_t since_ns, ResumePoint* resume, uint64_t* revision,
                             natsSubscription** sub, std::string* error);

}  // namespace eit::nats
