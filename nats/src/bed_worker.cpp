// One bed's reconstruction thread for `eitstream worker` (see bed_worker.hpp).
#include "bed_worker.hpp"

#include <array>
#include <chrono>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "bed_consumer.hpp"
#include "bed_resume.hpp"
#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/nats/nats_frames.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_reconstructor.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/sinks/image_header_fill.hpp"
#include "eit/sinks/series_message.hpp"
#include "nats_link.hpp"
#include "raw_frame_headers.hpp"
#include "start_time.hpp"

namespace eit::nats {

namespace {
// How long a published image or series message waits for JetStream's answer, and a round for
// all of them: a lost answer comes back as a failure, not never.
constexpr int64_t kPublishWaitMs = 5000;
}  // namespace

void WorkerCounters::note(std::string message) {
  std::lock_guard lock(error_mutex);
  last_error = std::move(message);
}

namespace {

// A stable, non-zero series id per bed and model: a bed keeps its series across takeovers.
uint64_t bed_series_id(const std::string& site, const std::string& bed, const std::string& model) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const std::string* s : {&site, &bed, &model}) {
    for (unsigned char c : *s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  }
  return h ? h : 1;
}

// What libnats' ack thread reports: image publishes JetStream refused (counted), the outcome of
// resume-point writes (to the writer).
struct AckFailures {
  std::atomic<uint64_t> images{0};
  ResumeWriter* resume = nullptr;
};

}  // namespace

// Everything the thread owns; built on the thread, at a bed's first frame and on a model change.
struct BedWorker::State {
  jsCtx* js = nullptr;
  natsSubscription* sub = nullptr;
  AckFailures ack_failures;
  ResumeWriter resume;
  std::string model_name = "\x01";  // no model yet
  std::shared_ptr<const recon::Model> model;
  std::unique_ptr<acquisition::IngestDecoder> decoder;
  std::unique_ptr<pipeline::CpuReconstructor> recon;
  std::unique_ptr<pipeline::FramePool> pool;
  pipeline::FrameSlot* slot = nullptr;
  sinks::ImageHeader header_template;
  sinks::SeriesInfo series;
  std::string series_json;         // the bed's image geometry, as `run --publish` sends it
  int64_t next_series_ns = 0;      // 0: before the next image
  std::vector<std::byte> message;  // header + image
  uint64_t last_seq = 0;
  bool have_seq = false;
  StartTimeGate gate;  // frames stored before since=T: a new one each time the consumer opens

  explicit State(std::string resume_key) : resume(std::move(resume_key)) {
    ack_failures.resume = &resume;
  }
  ~State() {
    if (slot) pool->release(slot);
    if (sub) natsSubscription_Destroy(sub);  // the durable consumer stays on the server
    if (js) jsCtx_Destroy(js);
  }
};

namespace {

void on_publish_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
  auto* failures = static_cast<AckFailures*>(closure);
  if (std::string_view(natsMsg_GetSubject(msg)).starts_with("$KV."))
    failures->resume->on_ack(pa, pae);
  else if (pae)
    failures->images.fetch_add(1, std::memory_order_relaxed);
  natsMsg_Destroy(msg);
}

}  // namespace

BedWorker::BedWorker(const BedContext& context, std::string site, std::string bed)
    : context_(context),
      site_(std::move(site)),
      bed_(std::move(bed)),
      state_(std::make_unique<State>(resume_subject(site_, bed_))) {
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = 4 * context_.fetch_batch;
  jo.PublishAsync.AckHandler = &on_publish_ack;
  jo.PublishAsync.AckHandlerClosure = &state_->ack_failures;
  if (natsConnection_JetStream(&state_->js, context_.nc, &jo) != NATS_OK)
    throw std::runtime_error(fmt::format("bed {}.{}: JetStream context", site_, bed_));
  thread_ = std::thread([this] { loop(); });
}

BedWorker::~BedWorker() { join(); }

void BedWorker::join() noexcept {
  stop();
  if (thread_.joinable()) thread_.join();
}

void BedWorker::loop() noexcept {
  State& st = *state_;
  WorkerCounters& counters = *context_.counters;
  const std::string image_subject = fmt::format("eit.{}.{}.img", site_, bed_);
  const std::string series_subject = fmt::format("eit.{}.{}.series", site_, bed_);
  st.series.stream = fmt::format("{}.{}", site_, bed_);
  st.series.source = fmt::format("eit.{}.{}.raw", site_, bed_);
  st.series.policy = "lossless";  // every raw frame stored becomes one image
  const auto pause = [this](int ms) {
    for (int i = 0; i < ms / 10 && !stop_.load(std::memory_order_relaxed); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  // Like acknowledgements, resume points are stored only while the lease is surely ours.
  const auto holding = [this](int64_t now) {
    return now < context_.valid_until_ns->load(std::memory_order_acquire);
  };
  // Another worker stored the bed's resume point since this one last did: it took the bed over
  // while this worker was frozen. Said once; the thread ends and the manager lets the bed go.
  const auto taken_over = [&](const std::string& why) {
    superseded_.store(true, std::memory_order_release);
    counters.note(
        fmt::format("bed {}.{}: taken over by another worker, given up: {}", site_, bed_, why));
  };
  // A write of the resume point was refused (libnats' ack thread says so): taken over.
  const auto refused = [&]() {
    if (!st.resume.superseded()) return false;
    taken_over(fmt::format("its resume point was written by another worker after revision {}",
                           st.resume.revision()));
    return true;
  };
  // Makes the consumer anew; false when the bed is no longer this worker's (taken over, or the
  // lease not surely held): the thread then ends.
  const auto reopen = [&]() -> bool {
    if (st.sub) natsSubscription_Destroy(st.sub);
    st.sub = nullptr;
    st.resume.settle(st.js);  // its revision is then the last this worker wrote
    std::string error;
    ResumePoint point = st.resume.point();
    // 0: the first open, taking the bed. A try that stored the point and failed after that
    // leaves it at that write: the next try compares with it (before, it compared with the
    // revision before it, found its own write and gave the bed up as taken over).
    uint64_t revision = st.resume.revision();
    while (!stop_.load(std::memory_order_relaxed)) {
      if (!holding(pipeline::now_ns())) return false;
      const uint64_t before = revision;
      const natsStatus s = open_bed_consumer(st.js, site_, bed_, context_.since_ns, &point,
                                             &revision, &st.sub, &error);
      if (s == NATS_OK) break;
      if (s == NATS_MISMATCH && before != 0) {
        taken_over(error);
        return false;
      }
      counters.note(fmt::format("bed {}.{}: {}", site_, bed_, error));
      pause(500);
    }
    st.resume.opened(point, revision);
    // A taker announces the geometry before its first image: a viewer that starts now finds it
    // as the bed's last series message.
    st.next_series_ns = 0;
    st.have_seq = false;  // the decoder's gap check restarts with the first frame delivered
    // From the acknowledgement floor the consumer may deliver again frames stored before T
    // (those of a batch not acknowledged yet): the gate closes again.
    st.gate = StartTimeGate(context_.since_ns);
    return !stop_.load(std::memory_order_relaxed);
  };
  // Model set-up at a bed's first frame and whenever its Eit-Model header changes.
  const auto use_model = [&](const char* name) -> bool {
    const std::string wanted = name ? name : "";
    if (wanted == st.model_name && st.recon) return true;
    try {
      auto model = context_.models->get(wanted);
      if (st.slot) st.pool->release(st.slot);
      st.slot = nullptr;
      st.decoder = std::make_unique<acquisition::IngestDecoder>(model->protocol.n_meas());
      st.recon = std::make_unique<pipeline::CpuReconstructor>(*model, pipeline::CpuOptions{1});
      st.pool = std::make_unique<pipeline::FramePool>(1, model->n_meas(), model->n_out(),
                                                      st.recon->frame_allocator());
      st.recon->bind_frames(*st.pool);
      st.slot = st.pool->try_acquire();
      st.series.series_id = bed_series_id(site_, bed_, model->id);
      st.header_template = sinks::image_header_template(*model, st.series.series_id);
      st.series_json = sinks::series_json(*model, st.series);
      st.next_series_ns = 0;
      st.message.assign(sizeof(sinks::ImageHeader) + model->n_out() * sizeof(float), {});
      st.model = std::move(model);
      st.model_name = wanted;
      return true;
    } catch (const std::exception& e) {
      counters.bed_errors.fetch_add(1, std::memory_order_relaxed);
      counters.note(fmt::format("bed {}.{}: {}", site_, bed_, e.what()));
      st.recon.reset();
      return false;
    }
  };

  // The gateway's Eit-Rate for the series message (none from older gateways: 0, unknown); the
  // message is made again only when the rate changes.
  const auto use_rate = [&](double rate_hz) {
    if (rate_hz == st.series.rate_hz) return;
    st.series.rate_hz = rate_hz;
    if (st.model) st.series_json = sinks::series_json(*st.model, st.series);
    st.next_series_ns = 0;
  };
  bool open = reopen();
  std::array<char, 96> msg_id{};
  while (open && !stop_.load(std::memory_order_relaxed)) {
    // Not even a fetch once the lease is not surely ours: woken after a takeover, this worker
    // would reconstruct frames the taker does too. (Its consumer is its own, deleted by the
    // taker: nothing of the taker's can be handed to it.)
    if (refused() || !holding(pipeline::now_ns())) break;
    natsMsgList list{};
    jsErrCode err = static_cast<jsErrCode>(0);
    const natsStatus f = fetch_batch(&list, st.sub, context_.fetch_batch, 100, &err);
    if (f == NATS_TIMEOUT) {
      // An idle bed stores the point of its last batch too.
      if (const int64_t now = pipeline::now_ns(); holding(now)) st.resume.maybe_write(st.js, now);
      continue;
    }
    if (f != NATS_OK) {
      counters.note(fmt::format("bed {}.{}: fetch: {}", site_, bed_, natsStatus_GetText(f)));
      natsMsgList_Destroy(&list);
      pause(100);
      open = reopen();
      continue;
    }
    const uint64_t failures_before = st.ack_failures.images.load(std::memory_order_relaxed);
    bool round_ok = true;
    uint64_t images = 0, bad = 0, gaps = 0, through = 0;
    for (int i = 0; i < list.Count && round_ok; ++i) {
      natsMsg* m = list.Msgs[i];
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, m) != NATS_OK) {
        round_ok = false;
        break;
      }
      const uint64_t stream_seq = meta->Sequence.Stream;
      through = stream_seq;
      const bool admitted = st.gate.admits(meta->Timestamp);
      jsMsgMetaData_Destroy(meta);
      if (!admitted) continue;  // stored before since=T: acknowledged with the batch, no image
      use_rate(stated_rate_hz(m));
      if (!use_model(header_of(m, kModelHeader))) {
        round_ok = false;  // nothing acknowledged: the bed waits for its model
        pause(2000);
        break;
      }
      pipeline::FrameSlot& slot = *st.slot;
      const auto bytes = std::span(reinterpret_cast<const uint8_t*>(natsMsg_GetData(m)),
                                   static_cast<size_t>(natsMsg_GetDataLength(m)));
      st.decoder->reset();
      // Integer samples: the frame's Eit-Scale; 1 when it states none (a bed has no scale= of its
      // own, unlike a reader's URI).
      st.decoder->set_integer_scale(stated_integer_scale(m, 1.0));
      slot.flags = 0;
      slot.dropped_before = 0;
      slot.stamp_ns.fill(0);
      bool frame = false;
      for (size_t pos = 0; pos < bytes.size() && !frame;) {
        const auto r = st.decoder->decode(bytes.subspan(pos), slot);
        pos += r.consumed;
        frame = r.frame;
      }
      if (!frame) {
        ++bad;
        continue;
      }
      if (st.have_seq && slot.seq > st.last_seq + 1) {
        slot.flags |= pipeline::kFlagGapBefore;
        slot.dropped_before = static_cast<uint32_t>(slot.seq - st.last_seq - 1);
        gaps += slot.seq - st.last_seq - 1;
      }
      st.last_seq = slot.seq;
      st.have_seq = true;
      const int64_t t = pipeline::now_ns();
      slot.stamp(pipeline::Stage::kScheduled, t);
      slot.stamp(pipeline::Stage::kReceived, t);
      pipeline::FrameSlot* one[1] = {&slot};
      st.recon->submit(one);
      st.recon->complete(one, true);
      slot.stamp(pipeline::Stage::kDone, pipeline::now_ns());
      const sinks::ImageHeader h = sinks::image_header_for(st.header_template, slot);
      std::memcpy(st.message.data(), &h, sizeof h);
      std::memcpy(st.message.data() + sizeof h, slot.image, st.message.size() - sizeof h);
      const auto id =
          fmt::format_to_n(msg_id.data(), msg_id.size() - 1, "{}.{}.{}", site_, bed_, stream_seq);
      *id.out = '\0';
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MsgId = msg_id.data();
      // A publish in flight when the connection dropped is otherwise never settled by libnats:
      // every later round then timed out in js_PublishAsyncComplete and rewound, the bed made no
      // progress, and its images were stored again each time the duplicate window moved on.
      // With a wait it fails (the ack handler counts it) and the rewind sends it again.
      po.MaxWait = kPublishWaitMs;
      // Not while the connection is down: libnats would keep the image in its reconnect buffer
      // and store it after reconnecting, ahead of earlier images of this round lost with the old
      // connection, which the rewind sends again (ordered_publisher.hpp has the same rule).
      if (natsConnection_Status(context_.nc) != NATS_CONN_STATUS_CONNECTED) {
        round_ok = false;
        break;
      }
      if (t >= st.next_series_ns) {
        // Repeated while images flow, as the sink does, so that a replay from a time finds the
        // geometry in the seconds before it. Ahead of the image on the same connection: stored
        // before it. A failure fails the round like an image's.
        st.next_series_ns = t + static_cast<int64_t>(st.series.interval_s * 1e9);
        jsPubOptions series_po;
        jsPubOptions_Init(&series_po);
        series_po.MaxWait = kPublishWaitMs;
        if (js_PublishAsync(st.js, series_subject.c_str(), st.series_json.data(),
                            static_cast<int>(st.series_json.size()), &series_po) != NATS_OK) {
          round_ok = false;
          break;
        }
      }
      if (js_PublishAsync(st.js, image_subject.c_str(), st.message.data(),
                          static_cast<int>(st.message.size()), &po) != NATS_OK) {
        round_ok = false;
        break;
      }
      ++images;
    }
    if (round_ok && images > 0) {
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MaxWait = kPublishWaitMs;
      round_ok = js_PublishAsyncComplete(st.js, &po) == NATS_OK &&
                 st.ack_failures.images.load(std::memory_order_relaxed) == failures_before;
    }
    if (!round_ok) {
      // Some image of the batch may be missing: read the batch again from the ack floor (images
      // already stored are dropped as duplicates by their Nats-Msg-Id).
      counters.publish_failures.fetch_add(
          st.ack_failures.images.load(std::memory_order_relaxed) - failures_before,
          std::memory_order_relaxed);
      if (st.recon) counters.rewinds.fetch_add(1, std::memory_order_relaxed);
      natsMsgList_Destroy(&list);
      open = reopen();
      continue;
    }
    const int64_t now = pipeline::now_ns();
    if (!holding(now) || refused()) {
      // The lease may have passed to another worker (or did): acknowledge nothing, leave the bed.
      natsMsgList_Destroy(&list);
      break;
    }
    if (list.Count > 0) {
      natsMsg_Ack(list.Msgs[list.Count - 1], nullptr);
      st.resume.acked(through);
      st.resume.maybe_write(st.js, now);
    }
    counters.frames.fetch_add(images, std::memory_order_relaxed);
    counters.bad_frames.fetch_add(bad, std::memory_order_relaxed);
    counters.gaps.fetch_add(gaps, std::memory_order_relaxed);
    natsMsgList_Destroy(&list);
  }
  if (superseded() && !st.resume.point().consumer.empty()) {
    // The taker deleted this thread's consumer, unless this thread made it after that (it stored
    // its point just before the taker read it): nobody else reads a consumer of this name.
    if (st.sub) natsSubscription_Destroy(st.sub);
    st.sub = nullptr;
    js_DeleteConsumer(st.js, kRawStream, st.resume.point().consumer.c_str(), nullptr, nullptr);
  }
  if (stop_.load(std::memory_order_relaxed) && !superseded() && holding(pipeline::now_ns())) {
    // Given back: the bed's next holder starts from the exact point even if its consumer is lost.
    std::string error;
    const natsStatus s = st.resume.flush(st.js, &error);
    if (s == NATS_MISMATCH)
      taken_over(error);
    else if (s != NATS_OK)
      counters.note(fmt::format("bed {}.{}: {}", site_, bed_, error));
  }
  finished_.store(true, std::memory_order_release);
}

}  // namespace eit::nats
