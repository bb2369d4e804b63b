// The options of `eitstream run` and their config keys (run_options.hpp).
#include "run_options.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "eit/sinks/image_batch.hpp"
#include "phantom_source.hpp"
#include "recording_option_table.hpp"
#include "run_security.hpp"

namespace eit::cli {

void add_run_options(CLI::App& app, RunConfig& cli) {
  CLI::App* cmd = &app;
  cmd->add_option("--model", cli.model, "Model file (HDF5); default: the built-in model");
  cmd->add_option(
         "--source", cli.source,
         std::string("synthetic (an anomaly orbiting in the body) | ") + kBreathingSourceHelp +
             " | recording file (any format of docs/formats.md, incl. eitstream raw "
             ".h5) | device URI (tcp://, tcp-listen://, tls-connect://, tls-listen://, udp://, "
             "serial://, file://, nats://HOST:PORT?site=S&bed=B; options: docs/protocol.md; TLS: "
             "docs/security.md)")
      ->capture_default_str();
  cmd->add_option("--backend", cli.backend, "auto | cpu | cuda")->capture_default_str();
  cmd->add_option("--endpoint", cli.endpoint, "ZeroMQ endpoint to bind")->capture_default_str();
  cmd->add_flag("--push", cli.push, "PUSH for lossless consumers instead of PUB");
  cmd->add_option("--policy", cli.policy, "live (drop newest) | lossless (wait)")
      ->capture_default_str();
  cmd->add_option("--fps", cli.fps,
                  "Frame rate: synthetic default 50, replay default the file's, nats:// the "
                  "frames' Eit-Rate; 0 = as fast as possible")
      // Here as well as at set-up: a negative value would otherwise read as "not given".
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            return v.starts_with('-') ? "expected a rate in frames/s, or 0 for as fast as possible"
                                      : "";
          },
          "", "non-negative"));
  cmd->add_flag("--loop", cli.loop, "Replay: start over at the end of the recording");
  cmd->add_option("--frames", cli.frames, "Stop after N frames (0 = no limit)");
  cmd->add_option("--duration", cli.duration, "Stop after N seconds (0 = until Ctrl-C)");
  cmd->add_option("--reference", cli.reference,
                  "model | phantom | first:N | mean:A-B | frame:K | variable:NAME | file:PATH "
                  "(default: phantom for the synthetic source, the file's stored reference for "
                  "eitstream raw files, else first:10; printed at start)");
  cmd->add_flag("--normalize", cli.normalize, "Images from dv/|v_ref|");
  cmd->add_option("--stream", cli.stream, "Stream name in topics eit/<stream>/…")
      ->capture_default_str();
  cmd->add_option("--snr", cli.snr_db, "Synthetic noise, SNR in dB")->capture_default_str();
  cmd->add_option("--max-batch", cli.max_batch, "Most frames per backend call")
      ->capture_default_str();
  cmd->add_option("--publish-batch", cli.publish_batch,
                  "Most images per ZeroMQ message. Above 1, images that wait for the publisher "
                  "leave together as one 'imgs' message (docs/protocol.md): libzmq's cost is per "
                  "message, so this lifts the images/s one socket carries; a lone image still "
                  "goes at once as 'img'. Consumers must read 'imgs' (listen, view, Python do)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, sinks::kMaxImageBatch));
  cmd->add_option("--queue", cli.queue,
                  "Capacity of each queue, 2 to 1048576 frames (rounded up to a power of two)")
      ->capture_default_str();
  cmd->add_option("--warm-us", cli.warm_us,
                  "Idle reconstructor re-reads H this often (µs) to keep it cached; 0 = never")
      ->capture_default_str();
  cmd->add_flag("--quiet", cli.quiet, "No status line");
  cmd->add_option("--record", cli.record,
                  "Keep every image in this HDF5 file (SWMR; layout in docs/formats.md). "
                  "--policy lossless waits for the disk; live drops for the file alone when the "
                  "disk falls behind (counted, in the summary)");
  cmd->add_option("--record-raw", cli.record_raw,
                  "Keep every frame's measurements in this HDF5 file (replay or reconstruct it "
                  "later)");
  cmd->add_option("--record-compress", cli.record_compress,
                  "Deflate level 1-9 for the image file (0 = none)")
      ->capture_default_str();
  cmd->add_option("--record-chunk", cli.record_chunk, "Frames per HDF5 chunk")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  cmd->add_flag("--force", cli.force,
                "Replace existing --record/--record-raw files (by default an existing file is "
                "refused: an earlier recording is never overwritten)");
  add_recording_options(cmd, cli.recording, true);
  cmd->add_option("--publish", cli.publish,
                  "Also publish images to NATS JetStream: nats://HOST:4222?site=S&bed=B "
                  "(subjects eit.S.B.img|series; see docs/scale-out.md), or to a shared-memory "
                  "ring for consumers on this host: shm://NAME (live; docs/protocol.md)");
  cmd->add_option("--http", cli.http,
                  "Also serve the live view (web page) on HOST:PORT, e.g. 127.0.0.1:8080 (port 0: "
                  "any free port, printed); its recapture button recaptures the reference");
  cmd->add_option("--source-timeout", cli.source_timeout,
                  "Live device source (tcp, tcp-listen, udp, serial, file URI): end with exit "
                  "status 5 and the reason when no valid frame arrived in N s from the start, or "
                  "only rejected frames for N s (0: never; a run that ends without one valid "
                  "frame fails either way)")
      ->capture_default_str();
  cmd->add_option("--monitor", cli.monitor,
                  "Also publish the images PUB (live: never waits, drops per slow subscriber) on "
                  "this endpoint, e.g. for viewers beside a lossless --push consumer");
  cmd->add_option("--latency-mode", cli.latency_mode,
                  "How stages wait for work: spin (busy-poll, a core per stage), balanced (poll "
                  "30 µs, then sleep on a futex; ~0 CPU idle), idle (sleep at once)")
      ->capture_default_str();
  cmd->add_option("--zmq-io-cpu", cli.zmq_io_cpu,
                  "sink (with --cpus, any latency mode) puts each ZeroMQ publisher's I/O thread on "
                  "its sink thread's CPU (lowest latency to the consumer at a paced rate; on a "
                  "2-core VM, --cpus 1 keeps the whole chain on one CPU); spin mode only: a CPU "
                  "number puts them all on that CPU, kept out of idle by a "
                  "lowest-priority spinner, so the sink thread only hands each image over (the "
                  "shortest frame → sent; give no stage that CPU, and place the consumer's own "
                  "I/O thread there too: ZMQ_THREAD_AFFINITY_CPU_ADD); any leaves them to the "
                  "kernel, for unpaced runs, where one CPU running the sink and the I/O thread "
                  "halves the frames/s (docs/benchmarks.md, \"Publish batches\" and \"A CPU kept "
                  "awake for ZeroMQ's I/O threads\")")
      ->capture_default_str()
      ->check([](const std::string& v) {
        return parse_zmq_io_cpu(v) ? std::string()
                                   : fmt::format("'{}': expected {}", v, kZmqIoCpuChoices);
      });
  cmd->add_option("--zmq-io-wake", cli.zmq_io_wake,
                  "Placed I/O threads (--cpus or --zmq-io-cpu N): preempt lets the kernel run "
                  "one inside the send call that wakes it; defer starts them at SCHED_BATCH, so "
                  "it runs when the sink thread yields, right after the send call (which then only "
                  "hands the image over; docs/benchmarks.md, \"I/O threads that wait for the "
                  "sink to yield\")")
      ->capture_default_str()
      ->check([](const std::string& v) {
        return parse_zmq_io_defer(v) ? std::string()
                                     : fmt::format("'{}': expected preempt or defer", v);
      });
  cmd->add_option("--zmq-send", cli.zmq_send,
                  "lane: the ZeroMQ publisher has its own thread and queue; inline: it sends on "
                  "the thread that finished the frame (live policy, --publish-batch 1; with "
                  "--cpus its I/O threads join that thread's CPU): one thread hand-off less and "
                  "the frame stays on one CPU, but the send call then delays the next frame and "
                  "the other sinks (docs/benchmarks.md, \"The publisher inline\")")
      ->capture_default_str()
      ->check(CLI::IsMember({"lane", "inline"}));
  cmd->add_option("--cpu-wake-hold", cli.cpu_wake_hold,
                  "Keep every CPU out of deep idle states while running (Linux PM QoS, "
                  "/dev/cpu_dma_latency, needs write access): auto (with --latency-mode spin), "
                  "on, off. On wakes sleeping threads (stages, ZeroMQ's I/O threads, local "
                  "subscribers) in µs instead of tens of µs: on a 2-core VM at 1 kHz, end to end "
                  "p50 ~210 → ~130 µs. Idle CPUs then poll instead of halting (power; a VM's "
                  "vCPUs stay busy)")
      ->capture_default_str();
  cmd->add_option("--stages", cli.stages,
                  "auto | pipelined | run-to-completion (read, reconstruct and hand to the sinks "
                  "on one thread; auto picks it for the CPU backend with a source paced at ≥ 500 frames/s)")
      ->capture_default_str();
  cmd->add_option("--cpus", cli.cpus,
                  "Pin the stage threads (source, reconstructor, each sink) to these CPUs, "
                  "round robin, e.g. 2,3,4 (with --latency-mode spin on a dedicated host). In "
                  "spin mode each ZeroMQ publisher's I/O thread then shares its sink thread's "
                  "CPU: no cross-CPU wake-up per image (a consumer gets the same by placing its "
                  "own context's I/O thread there: ZMQ_THREAD_AFFINITY_CPU_ADD), unless "
                  "--zmq-io-cpu any");
  cmd->add_option("--cpu-threads", cli.cpu_threads,
                  "CPU backend: threads each batch is split over (rows of H; ≥ 1). Each thread "
                  "takes a core while a batch runs")
      ->capture_default_str();
  add_security_options(*cmd, cli);
}

namespace {

// The config key of each of `cmd`'s options: its long name without "--", '-' written '_'.
std::string config_key_of(const std::string& option) {
  std::string key = option.substr(2);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::vector<std::string> config_keys(const CLI::App& cmd) {
  std::vector<std::string> keys;
  for (const CLI::Option* o : cmd.get_options())
    for (const std::string& name : o->get_lnames())
      if (name != "help" && name != "config") keys.push_back(config_key_of("--" + name));
  return keys;
}

// A key for an option outside RunConfig (the --indices options): set through CLI11 as if given
// on the command line, so its checks and conversions apply; an option given there wins.
void apply_other_key(CLI::App& cmd, const std::string& file, const OtherConfigKey& k) {
  std::string option = "--" + k.key;
  std::replace(option.begin(), option.end(), '_', '-');
  CLI::Option* opt = cmd.get_option_no_throw(option);
  if (opt == nullptr || option == "--config" || option == "--help")
    throw std::runtime_error(fmt::format("config {}: unknown key '{}' (known: {})", file, k.key,
                                         fmt::join(config_keys(cmd), ", ")));
  if (opt->count() > 0) return;
  try {
    for (const std::string& v : k.values) opt->add_result(v);
    opt->run_callback();
  } catch (const CLI::Error& e) {
    throw std::runtime_error(fmt::format("config {}: key '{}': {}", file, k.key, e.what()));
  }
}

}  // namespace

RunConfig merge_run_options(CLI::App& cmd, const RunConfig& cli, const std::string& config_file) {
  RunConfig c;
  if (!config_file.empty())
    for (const OtherConfigKey& k : apply_config_file(config_file, c))
      apply_other_key(cmd, config_file, k);
  for (const auto& [option, key] : run_option_keys())  // run_config.cpp: the one table
    if (cmd.get_option(option)->count() > 0) copy_key(key, cli, c);
  return c;
}

}  // namespace eit::cli
