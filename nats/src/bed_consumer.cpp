// Where a worker resumes a bed's raw frames (see bed_consumer.hpp).
#include "bed_consumer.hpp"

#include <algorithm>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

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

// A consumer its holder stopped reading for this long is deleted by the server: the backstop for
// one nobody deleted (its opener died between storing the point and deleting the former one).
// Long against any pause of a live holder (a round waits at most 5 s, a reopen a few requests);
// a bed all workers left for longer resumes from its stored point alone.
constexpr int64_t kInactiveThresholdNs = int64_t{3600} * 1'000'000'000;
constexpr int64_t kProbeInactiveNs = int64_t{30} * 1'000'000'000;

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
  *floor = ResumePoint{0, si->Created, {}};
  jsStreamInfo_Destroy(si);
  if (mine.raw_created_ns == floor->raw_created_ns) floor->acked_through = mine.acked_through;
  s = load_resume_point(js, resume_key, stored, revision, error);
  if (s != NATS_OK) return s;
  if (*stored && (*stored)->raw_created_ns != floor->raw_created_ns) stored->reset();
  if (*stored) floor->acked_through = std::max(floor->acked_through, (*stored)->acked_through);
  return NATS_OK;
}

// The consumers the bed was read through, whose acknowledgements count and which the opener
// deletes: the one the stored point names; a point from an eitstream before per-holder consumers
// names none, and then it is the name all holders shared. With no stored point: this thread's own
// (`mine`, empty for a taker) and the shared name; and when the key was written once (deleted
// since, by hand), every consumer of the bed's subject, found by its filter (a listing of
// EIT_RAW's consumers: only then).
natsStatus former_consumers(jsCtx* js, const std::string& site, const std::string& bed,
                            const std::optional<ResumePoint>& stored, uint64_t stored_revision,
                            const std::string& mine, std::vector<std::string>* formers,
                            std::string* error) {
  const std::string shared = shared_consumer_name(site, bed);
  if (stored) {
    formers->push_back(stored->consumer.empty() ? shared : stored->consumer);
    return NATS_OK;
  }
  formers->push_back(shared);
  if (!mine.empty()) formers->push_back(mine);
  if (stored_revision == 0) return NATS_OK;
  const std::string subject = fmt::format("eit.{}.{}.raw", site, bed);
  jsConsumerInfoList* list = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const natsStatus s = js_Consumers(&list, js, kRawStream, nullptr, &err);
  if (s == NATS_NOT_FOUND) return NATS_OK;  // none at all
  if (s != NATS_OK) {
    *error = failure("consumers of", kRawStream, s, err);
    return s;
  }
  for (int i = 0; i < list->Count; ++i) {
    const jsConsumerInfo* ci = list->List[i];
    if (ci->Name && ci->Config && ci->Config->FilterSubject &&
        subject == ci->Config->FilterSubject &&
        std::find(formers->begin(), formers->end(), ci->Name) == formers->end())
      formers->emplace_back(ci->Name);
  }
  jsConsumerInfoList_Destroy(list);
  return NATS_OK;
}

// This opener's own consumer: named after the point's revision its store must replace, which only
// one writer can, so no other holder, former or later, ever reads or acknowledges through it (a
// revision is the bucket's sequence: unique across beds too). A bed never opened has no point to
// replace: a random tag stands in, since "-0" would give site icu-1 bed 2 and site icu bed 1-2
// one name. (A point deleted by hand leaves a delete marker, whose revision serves.)
std::string own_consumer_name(const std::string& site, const std::string& bed, uint64_t revision) {
  if (revision > 0) return fmt::format("eitworker-{}-{}-{}", site, bed, revision);
  std::random_device random;
  const uint64_t tag = (uint64_t{random()} << 32) | random();
  return fmt::format("eitworker-{}-{}-new{:016x}", site, bed, tag);
}

}  // namespace

std::string shared_consumer_name(const std::string& site, const std::string& bed) {
  return fmt::format("eitworker-{}-{}", site, bed);
}

natsStatus open_bed_consumer(jsCtx* js, const std::string& site, const std::string& bed,
                             int64_t since_ns, ResumePoint* resume, uint64_t* revision,
                             natsSubscription** sub, std::string* error) {
  const std::string subject = fmt::format("eit.{}.{}.raw", site, bed);
  const std::string resume_key = resume_subject(site, bed);
  ResumePoint floor;
  std::optional<ResumePoint> stored;
  uint64_t stored_revision = 0;
  natsStatus s = done_through(js, resume_key, *resume, &floor, &stored, &stored_revision, error);
  if (s != NATS_OK) return s;
  if (*revision != 0 && stored_revision != *revision) {
    // Taken over: whoever took the bed stored its point (and made its own consumer) since.
    *error = fmt::format(
        "resume point {}: at revision {}, this worker's is {}: another worker took "
        "the bed",
        resume_key, stored_revision, *revision);
    return NATS_MISMATCH;
  }
  // Read before, by this thread or by a worker that stored the point.
  const bool mine_counts = resume->raw_created_ns == floor.raw_created_ns;
  const bool read_before = stored || mine_counts;
  std::vector<std::string> formers;
  s = former_consumers(js, site, bed, stored, stored_revision,
                       mine_counts ? resume->consumer : std::string(), &formers, error);
  if (s != NATS_OK) return s;
  const std::string own = own_consumer_name(site, bed, stored_revision);

  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = kRawStream;
  so.Config.AckPolicy = js_AckAll;
  so.Config.AckWait = int64_t{120} * 1'000'000'000;  // only this worker reads it meanwhile
  ResumePoint start = floor;
  start.consumer = own;
  std::vector<std::string> existing;
  for (const std::string& former : formers) {
    jsErrCode err = static_cast<jsErrCode>(0);
    jsConsumerInfo* ci = nullptr;
    s = js_GetConsumerInfo(&ci, js, kRawStream, former.c_str(), nullptr, &err);
    if (s == NATS_NOT_FOUND && err == JSConsumerNotFoundErr) continue;
    if (s != NATS_OK) {
      *error = failure("consumer", former, s, err);
      return s;
    }
    start.acked_through = std::max(start.acked_through, acknowledged_through(*ci));
    jsConsumerInfo_Destroy(ci);
    existing.push_back(former);
  }
  if (existing.empty() && !read_before) {
    // A bed never read: the server finds where --since starts, in a consumer made only to ask
    // (ephemeral, deleted at once); the bed's consumer is then made from that sequence like any
    // other.
    jsConsumerConfig probe = so.Config;
    probe.FilterSubject = subject.c_str();
    probe.InactiveThreshold = kProbeInactiveNs;
    if (since_ns > 0) {
      deliver_from_time(probe, since_ns);
    } else if (since_ns < 0) {
      probe.DeliverPolicy = js_DeliverNew;
    }
    jsErrCode err = static_cast<jsErrCode>(0);
    jsConsumerInfo* ci = nullptr;
    s = js_AddConsumer(&ci, js, kRawStream, &probe, nullptr, &err);
    if (s != NATS_OK) {
      *error = failure("consumer", fmt::format("probing --since of {}", subject), s, err);
      return s;
    }
    start.acked_through = std::max(start.acked_through, acknowledged_through(*ci));
    if (ci->Name) js_DeleteConsumer(js, kRawStream, ci->Name, nullptr, nullptr);
    jsConsumerInfo_Destroy(ci);
  }
  // Always stored, even unchanged: the new revision is what fences a former holder off, and the
  // point now names this opener's consumer. Against the revision read above; a former holder that
  // wrote in between makes it fail, and the caller tries again.
  s = store_resume_point(js, resume_key, start, &stored_revision, error);
  if (s != NATS_OK) return s;  // the former consumers stay: nothing is deleted without the point
  *revision = stored_revision;  // the caller's from now on, whatever fails next
  for (const std::string& former : existing) {
    // Its holder, if it wakes, fetches from a consumer that is gone: nothing of this opener's
    // can be handed to it, and nothing it acknowledges covers a frame of this opener's.
    jsErrCode err = static_cast<jsErrCode>(0);
    s = js_DeleteConsumer(js, kRawStream, former.c_str(), nullptr, &err);
    if (s != NATS_OK && !(s == NATS_NOT_FOUND && err == JSConsumerNotFoundErr)) {
      *error = failure("delete consumer", former, s, err);
      return s;
    }
  }
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = start.acked_through + 1;
  so.Config.InactiveThreshold = kInactiveThresholdNs;
  jsErrCode err = static_cast<jsErrCode>(0);
  s = js_PullSubscribe(sub, js, subject.c_str(), own.c_str(), nullptr, &so, &err);
  if (s != NATS_OK) {
    *error = failure(fmt::format("consumer on {}:", subject), own, s, err);
    return s;
  }
  *resume = std::move(start);
  return NATS_OK;
}

}  // namespace eit::nats
