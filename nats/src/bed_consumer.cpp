// Where a worker resumes a bed's raw frames (see bed_consumer.hpp).
#include "bed_consumer.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "eit/nats/nats_streams.hpp"
#include "start_time.hpp"

namespace eit::nats {

uint64_t acknowledged_through(const jsConsumerInfo& ci) noexcept {
  uint64_t through = ci.AckFloor.Stream;
  // Made to start at OptStartSeq: what came before was acknowledged before, or not wanted.
  if (ci.Config && ci.Config->DeliverPolicy == js_DeliverByStartSequence &&
      ci.Config->OptStartSeq > 0)
    through = std::max(through, ci.Config->OptStartSeq - 1);
  // Nothing awaiting an acknowledgement: everything delivered was acknowledged (ack-all). For a
  // consumer that has delivered nothing, Delivered.Stream is one before where it starts.
  if (ci.NumAckPending == 0) through = std::max(through, ci.Delivered.Stream);
  return through;
}

namespace {

std::string failure(std::string_view what, const std::string& durable, natsStatus s,
                    jsErrCode err) {
  return fmt::format("{} {}: {} (JetStream error {})", what, durable, natsStatus_GetText(s),
                     static_cast<int>(err));
}

// What the bed is known to be done through: the latest of `mine` (what the calling thread
// acknowledged) and the point stored beside the bed, each only if it belongs to EIT_RAW as it is
// now (a point of a stream deleted and made again since would skip that many new frames).
// `*stored`: the stored point, if it does, and
// `*revision`: the stored point's.
natsStatus done_through(jsCtx* js, const std::string& resume_key, const ResumePoint& mine,
                        ResumePoint* floor, std::optional<ResumePoint>* stored, uint64_t* revision,
                        std::string* error) {
  jsStreamInfo* si = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, js, kRawStream, nullptr, &err);
  if (s != NATS_OK) {
    *error = failure("stream", kRawStream, s, err);
    return s;
  }
  *floor = ResumePoint{0, si->Created};
  jsStreamInfo_Destroy(si);
  if (mine.raw_created_ns == floor->raw_created_ns) floor->acked_through = mine.acked_through;
  s = load_resume_point(js, resume_key, stored, revision, error);
  if (s != NATS_OK) return s;
  if (*stored && (*stored)->raw_created_ns != floor->raw_created_ns) stored->reset();
  if (*stored) floor->acked_through = std::max(floor->acked_through, (*stored)->acked_through);
  return NATS_OK;
}

}  // namespace

natsStatus open_bed_consumer(jsCtx* js, const std::string& site, const std::string& bed,
                             int64_t since_ns, ResumePoint* resume, uint64_t* revision,
                             natsSubscription** sub, std::string* error) {
  const std::string subject = fmt::format("eit.{}.{}.raw", site, bed);
  const std::string durable = fmt::format("eitworker-{}-{}", site, bed);
  const std::string resume_key = resume_subject(site, bed);
  ResumePoint floor;
  std::optional<ResumePoint> stored;
  uint64_t stored_revision = 0;
  natsStatus s = done_through(js, resume_key, *resume, &floor, &stored, &stored_revision, error);
  if (s != NATS_OK) return s;
  if (*revision != 0 && stored_revision != *revision) {
    // Taken over: whoever took the bed stored its point (and remade the consumer) since.
    *error = fmt::format(
        "resume point {}: at revision {}, this worker's is {}: another worker took "
        "the bed",
        resume_key, stored_revision, *revision);
    return NATS_MISMATCH;
  }
  // Read before, by this thread or by a worker that stored the point.
  const bool read_before = stored || resume->raw_created_ns == floor.raw_created_ns;

  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = kRawStream;
  so.Config.AckPolicy = js_AckAll;
  so.Config.AckWait = int64_t{120} * 1'000'000'000;  // only this worker reads it meanwhile
  jsErrCode err = static_cast<jsErrCode>(0);
  jsConsumerInfo* ci = nullptr;
  s = js_GetConsumerInfo(&ci, js, kRawStream, durable.c_str(), nullptr, &err);
  const bool missing = s == NATS_NOT_FOUND && err == JSConsumerNotFoundErr;
  if (missing && !read_before) {
    // A bed never read: the server finds where --since starts; the consumer is then made anew
    // from that sequence like any other.
    jsConsumerConfig probe = so.Config;
    probe.Durable = durable.c_str();
    probe.FilterSubject = subject.c_str();
    if (since_ns > 0) {
      deliver_from_time(probe, since_ns);
    } else if (since_ns < 0) {
      probe.DeliverPolicy = js_DeliverNew;
    }
    err = static_cast<jsErrCode>(0);
    s = js_AddConsumer(&ci, js, kRawStream, &probe, nullptr, &err);
  } else if (missing) {
    s = NATS_OK;  // a bed read before whose consumer is gone: the stored point alone says where
  }
  if (s != NATS_OK) {
    *error = failure("consumer", durable, s, err);
    return s;
  }
  const bool exists = ci != nullptr;
  ResumePoint start = floor;
  if (exists) {
    start.acked_through = std::max(start.acked_through, acknowledged_through(*ci));
    jsConsumerInfo_Destroy(ci);
  }
  // Always stored, even unchanged: the new revision is what fences a former holder off. Against the
  // revision read above; a former holder that wrote in between makes it fail, and the caller tries
  // again.
  s = store_resume_point(js, resume_key, start, &stored_revision, error);
  if (s != NATS_OK) return s;  // the consumer stays: nothing is deleted without the point
  if (exists) {
    s = js_DeleteConsumer(js, kRawStream, durable.c_str(), nullptr, &err);
    if (s != NATS_OK) {
      *error = failure("delete consumer", durable, s, err);
      return s;
    }
  }
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = start.acked_through + 1;
  s = js_PullSubscribe(sub, js, subject.c_str(), durable.c_str(), nullptr, &so, &err);
  if (s != NATS_OK) {
    *error = failure(fmt::format("consumer on {}:", subject), durable, s, err);
    return s;
  }
  *resume = start;
  *revision = stored_revision;
  return NATS_OK;
}

}  // namespace eit::nats
