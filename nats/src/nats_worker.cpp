// NatsWorker: leases, fair share and the bed threads (see eit/nats/nats_worker.hpp).
#include "eit/nats/nats_worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "bed_worker.hpp"
#include "eit/pipeline/clock.hpp"
#include "nats_link.hpp"

namespace eit::nats {
namespace {

std::string default_worker_id() {
  char host[128] = {};
  gethostname(host, sizeof host - 1);
  std::string id = fmt::format("{}-{}", host, getpid());
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  return id;
}

// The distinct subjects of a stream under `filter` (stream info with its subject list).
std::vector<std::string> stream_subjects(jsCtx* js, const char* stream, const std::string& filter) {
  std::vector<std::string> out;
  jsOptions o;
  jsOptions_Init(&o);
  o.Stream.Info.SubjectsFilter = filter.c_str();
  jsStreamInfo* si = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  if (js_GetStreamInfo(&si, js, stream, &o, &err) != NATS_OK) return out;
  if (si->State.Subjects)
    for (int i = 0; i < si->State.Subjects->Count; ++i)
      out.emplace_back(si->State.Subjects->List[i].Subject);
  jsStreamInfo_Destroy(si);
  return out;
}

}  // namespace

struct NatsWorker::Impl {
  struct Held {
    std::unique_ptr<BedWorker> worker;
    uint64_t revision = 0;
  };

  NatsAddress address;
  WorkerOptions options;
  std::unique_ptr<NatsLink> link;
  kvStore* kv = nullptr;
  ModelShelf models;
  WorkerCounters counters;
  std::map<std::string, Held> held;  // by lease key b.<site>.<bed>
  std::atomic<uint64_t> taken{0}, released{0}, lost{0};
  std::atomic<size_t> n_held{0}, n_beds{0}, n_workers{0};
  int64_t lease_ns = 0;

  Impl(const NatsAddress& a, WorkerOptions o)
      : address(a), options(std::move(o)), models(options.model_dir) {
    if (options.worker_id.empty()) options.worker_id = default_worker_id();
    lease_ns = static_cast<int64_t>(options.lease_s * 1e9);
    NatsLinkOptions lo;
    lo.client_name = fmt::format("eitstream worker {}", options.worker_id);
    link = std::make_unique<NatsLink>(address, lo);
    link->ensure_streams(options.limits);
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = kWorkerBucket;
    kc.Description = "eitstream worker heartbeats (w.ID) and bed leases (b.SITE.BED)";
    kc.History = 1;
    kc.TTL = lease_ns;  // libnats 3.4 passes it on as the stream's MaxAge, in ns
    kc.StorageType = js_MemoryStorage;
    kc.Replicas = options.limits.replicas;
    const natsStatus created = js_CreateKeyValue(&kv, link->jetstream(), &kc);
    const std::string create_error = nats_GetLastError(nullptr) ? nats_GetLastError(nullptr) : "";
    if (created != NATS_OK && js_KeyValue(&kv, link->jetstream(), kWorkerBucket) != NATS_OK)
      throw std::runtime_error(fmt::format("NATS {}: key-value bucket {}: {} ({})",
                                           address.server_url, kWorkerBucket,
                                           natsStatus_GetText(created), create_error));
  }
  ~Impl() {
    held.clear();  // joins every bed thread before the connection goes
    if (kv) kvStore_Destroy(kv);
  }

  BedContext context() {
    BedContext c;
    c.nc = link->connection();
    c.models = &models;
    c.counters = &counters;
    c.fetch_batch = options.fetch_batch;
    c.since_ns = options.since_ns;
    return c;
  }

  // Acknowledgements are allowed for two thirds of a lease after the request that renewed it.
  int64_t valid_until(int64_t t0) const { return t0 + lease_ns * 2 / 3; }

  void release(std::map<std::string, Held>::iterator it) {
    it->second.worker.reset();  // stops the thread after its batch (acknowledged)
    kvStore_Delete(kv, it->first.c_str());
    held.erase(it);
    released.fetch_add(1);
  }

  void tick() {
    const int64_t t0 = pipeline::now_ns();
    uint64_t rev = 0;
    kvStore_PutString(&rev, kv, fmt::format("w.{}", options.worker_id).c_str(), "alive");
    // Keep what we hold (compare-and-set on the revision we wrote last).
    for (auto it = held.begin(); it != held.end();) {
      if (!it->second.worker->finished() &&
          kvStore_UpdateString(&rev, kv, it->first.c_str(), options.worker_id.c_str(),
                               it->second.revision) == NATS_OK) {
        it->second.revision = rev;
        it->second.worker->renew(valid_until(t0));
        ++it;
      } else {
        it = held.erase(it);  // someone else holds it now (or our thread gave up in time)
        lost.fetch_add(1);
      }
    }
    // Beds with raw frames, live workers, our fair share.
    const std::string site = options.site.empty() ? "*" : options.site;
    std::vector<std::string> beds;
    for (const auto& s :
         stream_subjects(link->jetstream(), kRawStream, fmt::format("eit.{}.*.raw", site)))
      beds.push_back("b." + s.substr(4, s.size() - 8));  // eit.S.B.raw → b.S.B
    const size_t workers = std::max<size_t>(
        1, stream_subjects(link->jetstream(), (std::string("KV_") + kWorkerBucket).c_str(),
                           fmt::format("$KV.{}.w.>", kWorkerBucket))
               .size());
    n_beds = beds.size();
    n_workers = workers;
    const size_t share = (beds.size() + workers - 1) / workers;
    while (held.size() > share) release(std::prev(held.end()));
    if (held.size() < share) {
      // Start at a place of our own in the list so that starting workers do not all race for
      // the same beds.
      const size_t offset =
          std::hash<std::string>{}(options.worker_id) % std::max<size_t>(1, beds.size());
      for (size_t k = 0; k < beds.size() && held.size() < share; ++k) {
        const std::string& key = beds[(offset + k) % beds.size()];
        if (held.count(key)) continue;
        if (kvStore_CreateString(&rev, kv, key.c_str(), options.worker_id.c_str()) != NATS_OK)
          continue;  // held by another worker
        const auto dot = key.find('.', 2);
        Held h;
        h.revision = rev;
        h.worker = std::make_unique<BedWorker>(context(), key.substr(2, dot - 2),
                                               key.substr(dot + 1), valid_until(t0));
        held.emplace(key, std::move(h));
        taken.fetch_add(1);
      }
    }
    n_held = held.size();
  }
};

NatsWorker::NatsWorker(const NatsAddress& address, WorkerOptions options)
    : impl_(new Impl(address, std::move(options))) {}

NatsWorker::~NatsWorker() { delete impl_; }

void NatsWorker::run(const std::atomic<bool>& stop) {
  const auto period = std::chrono::nanoseconds(impl_->lease_ns / 4);
  while (!stop.load()) {
    const auto next = std::chrono::steady_clock::now() + period;
    impl_->tick();
    while (!stop.load() && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  while (!impl_->held.empty()) impl_->release(impl_->held.begin());
  impl_->n_held = 0;
}

WorkerStats NatsWorker::stats() const {
  const auto& c = impl_->counters;
  WorkerStats s;
  s.frames = c.frames.load();
  s.bad_frames = c.bad_frames.load();
  s.gaps = c.gaps.load();
  s.publish_failures = c.publish_failures.load();
  s.rewinds = c.rewinds.load();
  s.bed_errors = c.bed_errors.load();
  s.beds_taken = impl_->taken.load();
  s.beds_released = impl_->released.load();
  s.beds_lost = impl_->lost.load();
  s.beds_held = impl_->n_held.load();
  s.beds_seen = impl_->n_beds.load();
  s.workers_seen = impl_->n_workers.load();
  return s;
}

std::string NatsWorker::last_error() const {
  std::lock_guard lock(impl_->counters.error_mutex);
  return impl_->counters.last_error;
}

}  // namespace eit::nats
