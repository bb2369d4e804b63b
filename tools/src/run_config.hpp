#pragma once
// Settings of `eitstream run`: defaults, a JSON config file with the same keys as the long
// options (without the dashes), and command-line options on top (explicit options win).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recording_option_table.hpp"

namespace eit::cli {

struct RunConfig {
  std::string model;                 // HDF5 model file; empty: built-in
  std::string source = "synthetic";  // synthetic | recording file | live URI
  std::string backend = "auto";      // auto | cpu | cuda
  std::string endpoint = "tcp://127.0.0.1:5555";
  bool push = false;            // PUSH (lossless consumers) instead of PUB
  std::string policy = "live";  // live | lossless
  double fps = -1;              // < 0: the source's default (synthetic 50, replay: the file's)
  bool loop = false;            // replay: start over at the end
  uint64_t frames = 0;          // stop after N frames (0: no limit)
  double duration = 0;          // stop after N seconds (0: no limit)
  std::string reference;        // reference_choice.hpp; empty: automatic
  bool normalize = false;
  std::string stream = "default";  // topic eit/<stream>/…
  double snr_db = 60;              // synthetic noise
  uint64_t max_batch = 16;
  uint64_t publish_batch = 1;  // most images per ZeroMQ message (image_batch.hpp); 1: one each
  uint64_t queue = 256;
  uint64_t warm_us = 1000;  // idle backend re-reads H this often (0: never)
  bool quiet = false;       // no status line
  RecordingArgs recording;  // how to read a recording source (recording_option_table.hpp)
  std::string record;       // HDF5 image file to write ("" = none)
  std::string record_raw;   // HDF5 raw-frame file to write ("" = none)
  uint64_t record_compress = 0;  // deflate level of the image file (0 = none)
  uint64_t record_chunk = 64;    // frames per HDF5 chunk
  bool force = false;            // replace existing --record/--record-raw files
  std::string publish;      // also publish to NATS JetStream: nats://host:port?site=S&bed=B
  std::string http;         // live view address (HOST:PORT); empty: none
  double source_timeout = 10;  // live source: fail after N s without a valid frame (0: never)
  std::string monitor;      // also publish images PUB/live here (beside a lossless PUSH); "" = no
  std::string latency_mode = "balanced";  // spin | balanced | idle (how stages wait for work)
  std::string stages = "auto";            // auto | pipelined | run-to-completion
  std::string cpu_wake_hold = "auto";     // auto (spin only) | on | off: keep CPUs out of deep idle
  std::string cpus;                       // pin stage threads to these CPUs ("2,3"); empty: no
  // sink: with --cpus, the I/O threads on the sink's CPU (any mode); any; spin: a CPU number.
  std::string zmq_io_cpu = "sink";
  // preempt | defer: whether placed I/O threads may run inside the send call
  // (zmq_io_placement.hpp).
  std::string zmq_io_wake = "preempt";
  // lane | inline: the ZeroMQ publisher on its own sink thread, or on the thread that finishes
  // each frame (ZmqPublisherOptions::send_inline; live, publish batch 1).
  std::string zmq_send = "lane";
  uint64_t cpu_threads = 1;  // CPU backend: threads each batch is split over (rows of H)
  // Security (run_security.hpp, docs/security.md): file names, never keys themselves.
  std::string curve_secret;  // the server's secret certificate; empty: no CURVE
  std::string curve_allow;   // the client public keys admitted (a file or a folder)
  bool insecure = false;     // bind beyond loopback without CURVE/TLS anyway
};

// --zmq-io-cpu: sink or any → -1, a CPU number → that number, anything else → nullopt.
std::optional<int> parse_zmq_io_cpu(const std::string& value) noexcept;
inline constexpr const char* kZmqIoCpuChoices = "sink, any or a CPU number";

// --zmq-io-wake: preempt or defer → true for defer, anything else → nullopt.
std::optional<bool> parse_zmq_io_defer(const std::string& value) noexcept;

// --zmq-send inline with this policy and publish batch (run and bench): why it is refused, or ""
// (a send on the producing thread never waits and goes out at once).
std::string zmq_send_inline_refusal(bool lossless, size_t publish_batch);

// Keys a config file may hold (those of RunConfig).
const std::vector<std::string>& run_config_keys();

// (command-line option, config key) of every key: `run` copies the options given on the command
// line over the config file's values (explicit options win).
const std::vector<std::pair<const char*, const char*>>& run_option_keys();

// A config-file key that is no RunConfig field (the --indices options): its values as a command
// line gives them (a list: one value each; true/false for a flag).
struct OtherConfigKey {
  std::string key;
  std::vector<std::string> values;
};

// Reads `path` (JSON object) over `config` and returns its other keys, for the caller to match
// to options. Throws std::runtime_error naming the file and the key for a syntax error or a
// value of the wrong type.
std::vector<OtherConfigKey> apply_config_file(const std::filesystem::path& path, RunConfig& config);

// Copies one key's value from `from` to `to` (for "command line wins over the file").
void copy_key(const std::string& key, RunConfig from, RunConfig& to);

}  // namespace eit::cli
