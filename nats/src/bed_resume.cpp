// A bed's resume point in EIT_BEDS (see bed_resume.hpp).
#include "bed_resume.hpp"

#include <charconv>

#include <fmt/format.h>

#include "eit/nats/nats_worker.hpp"

namespace eit::nats {
namespace {

constexpr int64_t kWriteIntervalNs = 1'000'000'000;
constexpr int64_t kWriteWaitMs = 5000;  // as the bed's image rounds

// Key-value puts are stream messages; a deletion or purge leaves one with this header.
constexpr const char* kKvOperationHeader = "KV-Operation";

}  // namespace

std::string resume_subject(const std::string& site, const std::string& bed) {
  return fmt::format("$KV.{}.r.{}.{}", kBedBucket, site, bed);
}

std::optional<ResumePoint> parse_resume_point(std::string_view text) noexcept {
  ResumePoint p;
  const char* end = text.data() + text.size();
  const auto seq = std::from_chars(text.data(), end, p.acked_through);
  if (seq.ec != std::errc{} || seq.ptr == end || *seq.ptr != ' ') return std::nullopt;
  const auto created = std::from_chars(seq.ptr + 1, end, p.raw_created_ns);
  if (created.ec != std::errc{} || created.ptr != end) return std::nullopt;
  return p;
}

natsStatus load_resume_point(jsCtx* js, const std::string& subject,
                             std::optional<ResumePoint>* point, uint64_t* revision,
                             std::string* error) {
  point->reset();
  *revision = 0;
  natsMsg* msg = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  const std::string stream = fmt::format("KV_{}", kBedBucket);
  const natsStatus s = js_GetLastMsg(&msg, js, stream.c_str(), subject.c_str(), nullptr, &err);
  if (s == NATS_NOT_FOUND && err == JSNoMessageFoundErr) return NATS_OK;  // never stored
  if (s != NATS_OK) {
    *error = fmt::format("resume point {}: {} (JetStream error {})", subject, natsStatus_GetText(s),
                         static_cast<int>(err));
    return s;
  }
  *revision = natsMsg_GetSequence(msg);
  const char* operation = nullptr;
  if (natsMsgHeader_Get(msg, kKvOperationHeader, &operation) != NATS_OK) {
    // Not deleted. A value this code did not write counts as none: the consumer decides alone.
    *point = parse_resume_point(
        std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
    const char* consumer = nullptr;
    if (*point && natsMsgHeader_Get(msg, kConsumerHeader, &consumer) == NATS_OK && consumer)
      (*point)->consumer = consumer;
  }
  natsMsg_Destroy(msg);
  return NATS_OK;
}

namespace {

// What kvStore_Update (revision > 0) or kvStore_Create (0, never written) put on a publish.
jsPubOptions compare_and_set(uint64_t revision) noexcept {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  if (revision > 0)
    po.ExpectLastSubjectSeq = revision;
  else
    po.ExpectNoMessage = true;
  return po;
}

// The message a write of the point publishes: the value, and the consumer's name as a header.
natsStatus point_message(natsMsg** msg, const std::string& subject, std::string_view text,
                         const std::string& consumer) noexcept {
  natsStatus s =
      natsMsg_Create(msg, subject.c_str(), nullptr, text.data(), static_cast<int>(text.size()));
  if (s == NATS_OK && !consumer.empty())
    s = natsMsgHeader_Set(*msg, kConsumerHeader, consumer.c_str());
  if (s != NATS_OK && *msg) {
    natsMsg_Destroy(*msg);
    *msg = nullptr;
  }
  return s;
}

}  // namespace

natsStatus store_resume_point(jsCtx* js, const std::string& subject, ResumePoint point,
                              uint64_t* revision, std::string* error) {
  const std::string text = fmt::format("{} {}", point.acked_through, point.raw_created_ns);
  jsPubOptions po = compare_and_set(*revision);
  jsPubAck* ack = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  natsMsg* msg = nullptr;
  natsStatus s = point_message(&msg, subject, text, point.consumer);
  if (s == NATS_OK) {
    s = js_PublishMsg(&ack, js, msg, &po, &err);
    natsMsg_Destroy(msg);
  }
  if (s == NATS_OK) {
    *revision = ack->Sequence;
    jsPubAck_Destroy(ack);
    return NATS_OK;
  }
  if (err == JSStreamWrongLastSequenceErr) {
    *error = fmt::format("store resume point {} = {}: another worker wrote it after revision {}",
                         subject, text, *revision);
    return NATS_MISMATCH;
  }
  *error = fmt::format("store resume point {} = {}: {} (JetStream error {})", subject, text,
                       natsStatus_GetText(s), static_cast<int>(err));
  return s;
}

void ResumeWriter::opened(ResumePoint point, uint64_t revision) {
  acked_ = std::move(point);
  written_through_ = acked_.acked_through;
  written_created_ns_ = acked_.raw_created_ns;
  revision_.store(revision, std::memory_order_release);
}

void ResumeWriter::written() noexcept {
  written_through_ = acked_.acked_through;
  written_created_ns_ = acked_.raw_created_ns;
}

bool ResumeWriter::moved() noexcept {
  // A publish failed since the last look: the point last written may not be stored.
  const uint64_t failures = failures_.load(std::memory_order_relaxed);
  if (failures != failures_seen_) {
    failures_seen_ = failures;
    written_through_ = 0;
    written_created_ns_ = 0;
  }
  return acked_.acked_through != written_through_ || acked_.raw_created_ns != written_created_ns_;
}

void ResumeWriter::maybe_write(jsCtx* js, int64_t now_ns) noexcept {
  // One write at a time: the next one compares with the revision this one makes.
  if (superseded() || in_flight_.load(std::memory_order_acquire) || now_ns < next_write_ns_ ||
      !moved())
    return;
  next_write_ns_ = now_ns + kWriteIntervalNs;
  const auto r = fmt::format_to_n(text_.data(), text_.size(), "{} {}", acked_.acked_through,
                                  acked_.raw_created_ns);
  jsPubOptions po = compare_and_set(revision());
  po.MaxWait = kWriteWaitMs;  // a lost answer comes back as a failure, not never
  natsMsg* msg = nullptr;
  if (point_message(&msg, subject_, std::string_view(text_.data(), r.size), acked_.consumer) !=
      NATS_OK)
    return;  // tried again at the next write
  in_flight_.store(true, std::memory_order_release);
  if (js_PublishMsgAsync(js, &msg, &po) == NATS_OK) {
    written();  // libnats owns the message now
  } else {
    natsMsg_Destroy(msg);
    in_flight_.store(false, std::memory_order_release);
  }
}

void ResumeWriter::on_ack(const jsPubAck* ack, const jsPubAckErr* error) noexcept {
  if (ack && !error) {
    revision_.store(ack->Sequence, std::memory_order_release);
  } else if (error && error->ErrCode == JSStreamWrongLastSequenceErr) {
    superseded_.store(true, std::memory_order_release);
  } else {
    failures_.fetch_add(1, std::memory_order_relaxed);  // not stored: written again, same revision
  }
  in_flight_.store(false, std::memory_order_release);
}

void ResumeWriter::settle(jsCtx* js) noexcept {
  if (!in_flight_.load(std::memory_order_acquire)) return;
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = kWriteWaitMs;
  js_PublishAsyncComplete(js, &po);
}

natsStatus ResumeWriter::flush(jsCtx* js, std::string* error) {
  settle(js);
  if (superseded()) return NATS_MISMATCH;
  if (!moved()) return NATS_OK;
  uint64_t revision = this->revision();
  const natsStatus s = store_resume_point(js, subject_, acked_, &revision, error);
  if (s == NATS_OK) {
    written();
    revision_.store(revision, std::memory_order_release);
  } else if (s == NATS_MISMATCH) {
    superseded_.store(true, std::memory_order_release);
  }
  return s;
}

}  // namespace eit::nats
