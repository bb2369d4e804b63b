// NatsWorker: leases, fair share and the bed threads (see eit/nats/nats_worker.hpp).
#include "eit/nats/nats_worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
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

// The distinct subjects of a stream under `filter` (stream info with its subject list); nullopt
// when the server did not answer (a stalled or lost server), which is not "no subjects".
std::optional<std::vector<std::string>> stream_subjects(jsCtx* js, const char* stream,
                                                        const std::string& filter) {
  std::vector<std::string> out;
  jsOptions o;
  jsOptions_Init(&o);
  o.Stream.Info.SubjectsFilter = filter.c_str();
  jsStreamInfo* si = nullptr;
  jsErrCode err = static_cast<jsErrCode>(0);
  if (js_GetStreamInfo(&si, js, stream, &o, &err) != NATS_OK) return std::nullopt;
  if (si->State.Subjects)
    for (int i = 0; i < si->State.Subjects->Count; ++i)
      out.emplace_back(si->State.Subjects->List[i].Subject);
  jsStreamInfo_Destroy(si);
  return out;
}

}  // namespace

struct NatsWorker::Impl {
  NatsAddress address;
  WorkerOptions options;
  std::unique_ptr<NatsLink> link;
  kvStore* workers_kv = nullptr;  // w.<id> heartbeats, expiring after lease_s
  kvStore* beds_kv = nullptr;     // b.<site>.<bed> → the worker that holds it (no expiry)
  ModelShelf models;
  WorkerCounters counters;
  // A bed this worker holds: its thread, and the revision of the lease key this worker wrote.
  struct Held {
    std::unique_ptr<BedWorker> worker;
    uint64_t lease_revision = 0;
  };
  std::map<std::string, Held> held;  // by key b.<site>.<bed>
  std::atomic<uint64_t> taken{0}, released{0}, lost{0}, taken_over{0};
  std::atomic<size_t> n_held{0}, n_beds{0}, n_workers{0};
  int64_t lease_ns = 0;
  std::atomic<int64_t> valid_until_ns{0};  // 2/3 lease after the last heartbeat stored
  std::atomic<bool> lapsed{false};         // a heartbeat came more than 2/3 lease late

  kvStore* bucket(const char* name, const char* description, int64_t ttl_ns) {
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = name;
    kc.Description = description;
    kc.History = 1;
    kc.TTL = ttl_ns;  // libnats 3.4 passes it on as the stream's MaxAge, in ns
    kc.StorageType = js_FileStorage;
    kc.Replicas = options.limits.replicas;
    kvStore* kv = nullptr;
    const natsStatus created = js_CreateKeyValue(&kv, link->jetstream(), &kc);
    const char* why = nats_GetLastError(nullptr);
    const std::string create_error = why ? why : "";
    if (created != NATS_OK && js_KeyValue(&kv, link->jetstream(), name) != NATS_OK)
      throw std::runtime_error(fmt::format("NATS {}: key-value bucket {}: {} ({})",
                                           address.server_url, name, natsStatus_GetText(created),
                                           create_error));
    return kv;
  }

  Impl(const NatsAddress& a, WorkerOptions o)
      : address(a), options(std::move(o)), models(options.model_dir) {
    if (options.worker_id.empty()) options.worker_id = default_worker_id();
    lease_ns = static_cast<int64_t>(options.lease_s * 1e9);
    NatsLinkOptions lo;
    lo.client_name = fmt::format("eitstream worker {}", options.worker_id);
    link = std::make_unique<NatsLink>(address, lo);
    link->ensure_streams(options.limits);
    workers_kv = bucket(kWorkerBucket, "eitstream workers' heartbeats (w.ID)", lease_ns);
    beds_kv = bucket(kBedBucket,
                     "which eitstream worker holds each bed (b.SITE.BED), where it resumes "
                     "(r.SITE.BED)",
                     0);
  }
  ~Impl() {
    held.clear();  // joins every bed thread before the connection goes
    if (workers_kv) kvStore_Destroy(workers_kv);
    if (beds_kv) kvStore_Destroy(beds_kv);
  }

  BedContext context() {
    BedContext c;
    c.nc = link->connection();
    c.models = &models;
    c.counters = &counters;
    c.fetch_batch = options.fetch_batch;
    c.since_ns = options.since_ns;
    c.valid_until_ns = &valid_until_ns;
    return c;
  }

  // The heartbeat thread: w.<id> every lease/4. Acknowledgements are allowed for two thirds of
  // a lease after the last heartbeat stored.
  void heartbeat(const std::atomic<bool>& stop) {
    const std::string key = fmt::format("w.{}", options.worker_id);
    int64_t last_ok = 0;
    while (!stop.load()) {
      const int64_t t0 = pipeline::now_ns();
      uint64_t rev = 0;
      if (kvStore_PutString(&rev, workers_kv, key.c_str(), "alive") == NATS_OK) {
        if (last_ok != 0 && t0 - last_ok > lease_ns * 2 / 3) lapsed.store(true);
        last_ok = t0;
        // Not while a lapse waits for the manager: the bed threads, woken with this thread after a
        // freeze, would take a heartbeat stored now as leave to acknowledge beds that others may
        // hold by now. The next heartbeat after the manager gave them up renews it.
        if (!lapsed.load()) valid_until_ns.store(t0 + lease_ns * 2 / 3);
      }
      const int64_t next = t0 + lease_ns / 4;
      while (!stop.load() && pipeline::now_ns() < next)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Deletes the lease key `key` if it is still at `revision` (this worker's): a worker that lost
  // the bed while frozen must not delete the lease of the one that took it over.
  natsStatus delete_lease(const std::string& key, uint64_t revision) {
    natsMsg* msg = nullptr;
    const std::string subject = fmt::format("$KV.{}.{}", kBedBucket, key);
    if (const natsStatus c = natsMsg_Create(&msg, subject.c_str(), nullptr, nullptr, 0);
        c != NATS_OK)
      return c;
    natsMsgHeader_Set(msg, "KV-Operation", "DEL");  // what kvStore_Delete sends
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.ExpectLastSubjectSeq = revision;
    jsErrCode err = static_cast<jsErrCode>(0);
    const natsStatus s = js_PublishMsg(nullptr, link->jetstream(), msg, &po, &err);
    natsMsg_Destroy(msg);
    return s;
  }

  // Ends a bed's thread (after its batch, acknowledged, unless it was taken over) and gives its
  // lease up (unless `delete_lease_too` is false: the lease then lapses with the heartbeat).
  // Counted as released, or as taken over. The status of the lease's deletion.
  natsStatus release(std::map<std::string, Held>::iterator it, bool delete_lease_too = true) {
    it->second.worker->join();
    const bool superseded = it->second.worker->superseded();
    const natsStatus s =
        delete_lease_too ? delete_lease(it->first, it->second.lease_revision) : NATS_OK;
    held.erase(it);
    (superseded ? taken_over : released).fetch_add(1);
    return s;
  }

  // Stopping: every bed's thread ends its round and stores its resume point at once (one wait,
  // not one per bed, when the server stalls); after one lease deletion the server did not
  // answer, the other leases are left to lapse with the heartbeat instead of waiting on each.
  void release_all() {
    for (auto& [key, h] : held) h.worker->stop();
    bool answering = true;
    while (!held.empty())
      if (release(held.begin(), answering) == NATS_TIMEOUT) answering = false;
  }

  // Takes `key` when nobody holds it, its holder's heartbeat is gone, or its holder is this
  // worker (which let it go when its own heartbeat lapsed, e.g. through a server restart, and
  // nobody took it meanwhile) (compare-and-set: of several workers trying at once, one wins).
  // The lease key's revision this worker wrote; 0 when not taken.
  uint64_t try_take(const std::string& key, const std::set<std::string>& live) {
    uint64_t rev = 0;
    kvEntry* e = nullptr;
    const natsStatus g = kvStore_Get(&e, beds_kv, key.c_str());
    if (g == NATS_NOT_FOUND)
      return kvStore_CreateString(&rev, beds_kv, key.c_str(), options.worker_id.c_str()) == NATS_OK
                 ? rev
                 : 0;
    if (g != NATS_OK) return 0;
    const std::string owner = kvEntry_ValueString(e) ? kvEntry_ValueString(e) : "";
    const uint64_t last = kvEntry_Revision(e);
    kvEntry_Destroy(e);
    if (owner != options.worker_id && live.count(owner)) return 0;
    return kvStore_UpdateString(&rev, beds_kv, key.c_str(), options.worker_id.c_str(), last) ==
                   NATS_OK
               ? rev
               : 0;
  }

  void tick() {
    if (lapsed.exchange(false)) {
      // Our heartbeat lapsed: others may have taken our beds. Start over.
      lost.fetch_add(held.size());
      held.clear();
    }
    for (auto it = held.begin(); it != held.end();) {
      if (!it->second.worker->finished()) {
        ++it;
      } else if (it->second.worker->superseded()) {  // taken over while this worker was frozen
        release((it++));
      } else {  // its lease ran out before it could acknowledge
        it = held.erase(it);
        lost.fetch_add(1);
      }
    }
    // Beds with raw frames, live workers, our fair share. A listing the server did not answer
    // changes nothing: taken for "no beds", it made the share 0 and gave every bed up (and the
    // summary read 'beds held 0 of 0'); the next tick asks again.
    const std::string site = options.site.empty() ? "*" : options.site;
    const std::string prefix = fmt::format("$KV.{}.w.", kWorkerBucket);
    const auto bed_subjects =
        stream_subjects(link->jetstream(), kRawStream, fmt::format("eit.{}.*.raw", site));
    const auto worker_subjects = stream_subjects(
        link->jetstream(), (std::string("KV_") + kWorkerBucket).c_str(), prefix + ">");
    if (!worker_subjects) return;
    std::vector<std::string> beds;
    for (const auto& s : bed_subjects.value_or(std::vector<std::string>{}))
      beds.push_back("b." + s.substr(4, s.size() - 8));  // eit.S.B.raw → b.S.B
    if (!bed_subjects && !held.empty()) return;
    std::set<std::string> live;
    for (const auto& s : *worker_subjects) live.insert(s.substr(prefix.size()));
    const size_t workers = std::max<size_t>(1, live.size());
    n_beds = beds.size();
    n_workers = workers;
    const size_t share = (beds.size() + workers - 1) / workers;
    while (held.size() > share) release(std::prev(held.end()));
    if (held.size() < share && pipeline::now_ns() < valid_until_ns.load()) {
      // Start at a place of our own in the list so that starting workers do not all race for
      // the same beds.
      const size_t offset =
          std::hash<std::string>{}(options.worker_id) % std::max<size_t>(1, beds.size());
      for (size_t k = 0; k < beds.size() && held.size() < share; ++k) {
        const std::string& key = beds[(offset + k) % beds.size()];
        if (held.count(key)) continue;
        const uint64_t lease_revision = try_take(key, live);
        if (lease_revision == 0) continue;
        const auto dot = key.find('.', 2);
        held.emplace(key, Held{std::make_unique<BedWorker>(context(), key.substr(2, dot - 2),
                                                           key.substr(dot + 1)),
                               lease_revision});
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
  std::thread heartbeat([this, &stop] { impl_->heartbeat(stop); });
  while (!stop.load() && impl_->valid_until_ns.load() == 0)  // the first heartbeat
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  while (!stop.load()) {
    const auto next = std::chrono::steady_clock::now() + period;
    impl_->tick();
    while (!stop.load() && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  impl_->release_all();
  impl_->n_held = 0;
  heartbeat.join();
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
  s.beds_taken_over = impl_->taken_over.load();
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
