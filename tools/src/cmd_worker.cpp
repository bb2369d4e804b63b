// `eitstream worker nats://HOST:PORT[?site=S] --model-dir DIR`: one of any number of
// reconstruction workers sharing every bed's raw frames in JetStream (eit/nats/nats_worker.hpp,
// docs/scale-out.md). Prints a status line every --status-interval seconds and a summary at the
// end (SIGINT/SIGTERM, or --duration). A first signal gives the beds back, each after its batch
// is stored and acknowledged; a signal during that leaves without waiting, as a killed worker
// would (its beds move to the others within the lease, nothing acknowledged is lost).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "command_registry.hpp"
#include "option_checks.hpp"
#include "run_nats.hpp"
#include "stop_signals.hpp"
#if EIT_HAVE_NATS
#include "eit/nats/nats_worker.hpp"
#endif

namespace eit::cli {
namespace {

struct WorkerArgs {
  std::string uri;
  std::string model_dir;
  std::string id;
  double lease_s = 3.0;
  int batch = 64;
  std::string since = "all";
  int replicas = 1;
  double duration_s = 0;
  double status_s = 2.0;
};

#if EIT_HAVE_NATS
std::string status_line(const nats::WorkerStats& s) {
  return fmt::format(
      "worker: beds held {} of {} ({} workers), frames {}, bad {}, gaps {}, publish failures {}, "
      "rewinds {}, beds taken {}, released {}, lost {}, taken over {}, bed errors {}",
      s.beds_held, s.beds_seen, s.workers_seen, s.frames, s.bad_frames, s.gaps, s.publish_failures,
      s.rewinds, s.beds_taken, s.beds_released, s.beds_lost, s.beds_taken_over, s.bed_errors);
}

int64_t parse_worker_since(const std::string& v) {
  if (v == "all") return 0;
  if (v == "new") return -1;
  try {
    size_t used = 0;
    const double s = std::stod(v, &used);
    if (used == v.size() && s > 0 && s <= nats::kMaxSinceSeconds)
      return static_cast<int64_t>(s * 1e9);
  } catch (const std::exception&) {
  }
  throw CommandError(
      fmt::format("--since '{}': expected all, new or seconds since the epoch (at most 9.2e9; not "
                  "milliseconds)",
                  v));
}

void print_summary(const nats::NatsWorker& worker) {
  fmt::print("{}\n", status_line(worker.stats()));
  if (auto e = worker.last_error(); !e.empty()) fmt::print("last problem: {}\n", e);
  std::fflush(stdout);
}

// A signal while stopping: the summary, then out at once, as if killed. The manager and bed
// threads are still inside libnats calls and cannot be joined; the beds' leases lapse and the
// frames they had not acknowledged are read again by the worker that takes them.
[[noreturn]] void leave_now(const nats::NatsWorker& worker, const WorkerArgs& a) {
  print_summary(worker);
  fmt::print(
      "left at a signal while stopping, before every bed was given back: other workers take "
      "them within the lease ({:g} s)\n",
      a.lease_s);
  std::fflush(stdout);
  std::_Exit(0);
}

void run_worker(const WorkerArgs& a) {
  const nats::NatsAddress address = nats::parse_nats_subscriber_address(a.uri);
  // Workers share every bed of the server (or of site=): a bed= would be silently ignored.
  if (a.uri.find("bed=") != std::string::npos)
    throw CommandError(fmt::format(
        "'{}': bed= is not read from a worker's URI; workers share every bed (of site=S)", a.uri));
  // The worker's start is --since; a since= in its URI went unread.
  if (nats::parse_since(a.uri).kind != nats::Since::Kind::kAbsent)
    throw CommandError(fmt::format(
        "'{}': since= is not read from a worker's URI; give --since (where a bed never read "
        "before starts)",
        a.uri));
  nats::WorkerOptions o;
  o.model_dir = a.model_dir;
  o.worker_id = a.id;
  o.site = a.uri.find("site=") != std::string::npos ? address.site : "";
  o.lease_s = a.lease_s;
  o.fetch_batch = a.batch;
  o.since_ns = parse_worker_since(a.since);
  o.limits.replicas = a.replicas;
  if (!(a.lease_s >= 0.4 && a.lease_s <= 3600))
    throw CommandError(fmt::format("--lease {}: expected seconds from 0.4 to 3600", a.lease_s));
  if (!(a.status_s >= 0) || !std::isfinite(a.status_s))
    throw CommandError(fmt::format("--status-interval {}: expected seconds ≥ 0", a.status_s));
  // After the connection is made (the constructor waits for the server, saying so: a signal
  // then ends the process as by default, --duration gives up), kept through the summary.
  report_nats_server_waits(a.duration_s);
  nats::NatsWorker worker(address, o);
  const StopSignals signals;
  fmt::print("worker on {} (sites: {}), models from {}\n", address.server_url,
             o.site.empty() ? "all" : o.site, a.model_dir);
  std::fflush(stdout);
  std::atomic<bool> stop{false}, stopped{false};
  std::thread manager([&] {
    worker.run(stop);
    stopped.store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  auto next_status = start + std::chrono::duration<double>(a.status_s);
  std::string last_error;
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto now = std::chrono::steady_clock::now();
    if (signals.count() > 0 ||
        (a.duration_s > 0 && now - start >= std::chrono::duration<double>(a.duration_s)))
      stop.store(true);
    if (a.status_s > 0 && now >= next_status) {
      next_status = now + std::chrono::duration<double>(a.status_s);
      fmt::print(stderr, "{}\n", status_line(worker.stats()));
      if (auto e = worker.last_error(); e != last_error) {
        fmt::print(stderr, "worker: {}\n", e);
        last_error = e;
      }
    }
  }
  // Giving the beds back waits for JetStream (up to 5 s a request, a stalled server holds every
  // one): said after a second, and a signal from now on gives up waiting.
  const int signals_at_stop = signals.count();
  const auto stop_began = std::chrono::steady_clock::now();
  bool told = false;
  while (!stopped.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (signals.count() > signals_at_stop) leave_now(worker, a);
    if (!told && std::chrono::steady_clock::now() - stop_began >= std::chrono::seconds(1)) {
      fmt::print(stderr,
                 "worker: stopping: waiting for its beds to store and acknowledge their last "
                 "batch; Ctrl-C to leave without waiting\n");
      told = true;
    }
  }
  manager.join();
  print_summary(worker);
}
#else
void run_worker(const WorkerArgs& a) {
  throw CommandError(fmt::format("{}: this eitstream was built without NATS (libnats-dev)", a.uri));
}
#endif

const RegisterCommand kWorker{
    35, [](CLI::App& app) {
      auto a = std::make_shared<WorkerArgs>();
      auto* cmd = app.add_subcommand(
          "worker",
          "Reconstruct beds from NATS JetStream, sharing them with other workers: each bed's raw "
          "frames (eit.SITE.BED.raw) become images (eit.SITE.BED.img), every frame once and in "
          "order; a dead worker's beds move to the others (docs/scale-out.md)");
      cmd->add_option("server", a->uri,
                      "nats://HOST:PORT[?site=S][&creds=FILE|nkey=PUB&seed=FILE][&tls-ca=FILE]: "
                      "without site=, beds of every site")
          ->required();
      cmd->add_option("--model-dir", a->model_dir,
                      "Models: NAME.h5 for raw frames whose header Eit-Model is NAME (emulate --to "
                      "'nats://…?model=NAME'), default.h5 for the others; each needs a v_ref")
          ->required();
      cmd->add_option("--id", a->id, "This worker's name (default HOST-PID)");
      cmd->add_option("--lease", a->lease_s,
                      "Seconds a bed's lease lasts without renewal: how soon a dead worker's beds "
                      "move to the others")
          ->capture_default_str();
      cmd->add_option("--batch", a->batch, "Raw frames per fetch and per acknowledgement")
          ->capture_default_str()
          ->check(within(1, 65536, false, false));
      cmd->add_option("--since", a->since,
                      "Where a bed never read before starts: all, new, or seconds since the epoch")
          ->capture_default_str();
      cmd->add_option("--replicas", a->replicas,
                      "Replicas of the streams and lease bucket it creates (3 on a 3-node cluster)")
          ->capture_default_str();
      cmd->add_option("--duration", a->duration_s,
                      "Stop after N seconds (default: until SIGINT or SIGTERM)");
      cmd->add_option("--status-interval", a->status_s, "Seconds between status lines (0: none)")
          ->capture_default_str();
      cmd->footer(
          "SIGINT or SIGTERM (as --duration) stops it: each bed stores and acknowledges its "
          "batch and is given back, then the summary is printed. A signal while it waits for "
          "that (a stalled server: up to 5 s a request) prints the summary and leaves at once, "
          "as a killed worker: the others take its beds within --lease and read again what it "
          "had not acknowledged.\n"
          "Exit status: 0 at the end of --duration or after SIGINT/SIGTERM, with its summary "
          "(also when a second signal left before every bed was given back); 1 a wrong set-up "
          "(the URI, an option value, a NATS server that refuses it, a build without NATS); 2 a "
          "command line that does not parse. A signal while it connects (it waits for the NATS "
          "server before it prints 'worker on …'), and SIGKILL at any time, end it with 128 + "
          "the signal (130 SIGINT, 143 SIGTERM, 137 SIGKILL) and no summary.");
      cmd->callback([a] { run_worker(*a); });
    }};

}  // namespace
}  // namespace eit::cli
