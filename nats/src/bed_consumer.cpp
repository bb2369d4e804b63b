// Where a worker resumes a bed's raw frames (see bed_consumer.hpp).
#include "bed_consumer.hpp"

#include <algorithm>
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

}  // namespace

natsStatus open_bed_consumer(jsCtx* js, const std::string& site, const std::string& bed,
                             int64_t since_ns, natsSubscription** sub, std::string* error) {
  const std::string subject = fmt::format("eit.{}.{}.raw", site, bed);
  const std::string durable = fmt::format("eitworker-{}-{}", site, bed);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = kRawStream;
  so.Config.AckPolicy = js_AckAll;
  so.Config.AckWait = int64_t{120} * 1'000'000'000;  // only this worker reads it meanwhile
  jsErrCode err = static_cast<jsErrCode>(0);
  jsConsumerInfo* ci = nullptr;
  natsStatus s = js_GetConsumerInfo(&ci, js, kRawStream, durable.c_str(), nullptr, &err);
  if (s == NATS_NOT_FOUND && err == JSConsumerNotFoundErr) {
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
  }
  if (s != NATS_OK) {
    *error = failure("consumer", durable, s, err);
    return s;
  }
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = acknowledged_through(*ci) + 1;
  jsConsumerInfo_Destroy(ci);
  s = js_DeleteConsumer(js, kRawStream, durable.c_str(), nullptr, &err);
  if (s != NATS_OK) {
    *error = failure("delete consumer", durable, s, err);
    return s;
  }
  s = js_PullSubscribe(sub, js, subject.c_str(), durable.c_str(), nullptr, &so, &err);
  if (s != NATS_OK) *error = failure(fmt::format("consumer on {}:", subject), durable, s, err);
  return s;
}

}  // namespace eit::nats
