// `eitstream run`'s set-up checks of values and ignored options (run_checks.hpp).
#include "run_checks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/sinks/image_batch.hpp"
#include "phantom_source.hpp"
#include "run_inputs.hpp"

namespace eit::cli {
namespace {

// The queues are rings of a power of two; beyond 2^20 frames the frame pool alone would take
// gigabytes for large models.
constexpr uint64_t kMaxQueue = uint64_t{1} << 20;

// Stream names: a subscription to eit/<stream>/ must stay within the publisher's largest
// inbound message (ZmqPublisherOptions' 256 bytes).
constexpr size_t kMaxStreamName = 200;

constexpr uint64_t kMaxRecordChunk = uint64_t{1} << 20;  // as --record-chunk's parse check

}  // namespace

void check_run_values(const RunConfig& c) {
  const RunConfig defaults;
  if (!std::isfinite(c.fps) || (c.fps < 0 && c.fps != defaults.fps))
    throw CommandError(
        fmt::format("--fps {}: expected a rate in frames/s, or 0 for as fast as possible", c.fps));
  if (!std::isfinite(c.duration) || c.duration < 0)
    throw CommandError(
        fmt::format("--duration {}: expected seconds ≥ 0 (0: until Ctrl-C)", c.duration));
  if (!std::isfinite(c.source_timeout) || c.source_timeout < 0)
    throw CommandError(
        fmt::format("--source-timeout {}: expected seconds ≥ 0 (0: never)", c.source_timeout));
  if (c.queue < 2 || c.queue > kMaxQueue)
    throw CommandError(fmt::format(
        "--queue {}: expected a capacity of 2 to {} frames (rounded up to a power of two)", c.queue,
        kMaxQueue));
  if (c.max_batch == 0) throw CommandError("--max-batch 0: expected 1 or more frames");
  // The command line checks these as it parses; a --config file's values come here only.
  if (c.record_chunk == 0 || c.record_chunk > kMaxRecordChunk)
    throw CommandError(fmt::format("--record-chunk {}: expected 1 to {} frames per chunk",
                                   c.record_chunk, kMaxRecordChunk));
  // A batch never holds more frames than the queue; more only allocates (4.7 GB at 300,000).
  if (c.max_batch > std::max(c.queue, defaults.max_batch))
    throw CommandError(
        fmt::format("--max-batch {}: expected at most --queue ({}) frames", c.max_batch, c.queue));
  if (c.publish_batch == 0 || c.publish_batch > sinks::kMaxImageBatch)
    throw CommandError(fmt::format("--publish-batch {}: expected 1 to {} images", c.publish_batch,
                                   sinks::kMaxImageBatch));
  if (!std::isfinite(c.snr_db)) throw CommandError(fmt::format("--snr {}: expected dB", c.snr_db));
  // The name is a topic level (eit/<stream>/img): a '/' would split it, and a long one would
  // not fit the subscription size the publisher admits.
  const bool name_ok =
      !c.stream.empty() && c.stream.size() <= kMaxStreamName &&
      std::all_of(c.stream.begin(), c.stream.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
      });
  if (!name_ok)
    throw CommandError(
        fmt::format("--stream '{}': expected 1 to {} letters, digits, '.', '_' or '-'", c.stream,
                    kMaxStreamName));
}

std::vector<std::string> ignored_option_warnings(const RunConfig& c) {
  const RunConfig d;
  std::vector<std::string> given;
  if (!is_recording(c)) {
    const RecordingArgs& r = c.recording;
    if (r.format != d.recording.format) given.push_back("--recording-format");
    if (r.variable != d.recording.variable) given.push_back("--variable");
    if (r.values_per_frame != d.recording.values_per_frame) given.push_back("--values-per-frame");
    if (r.layout != d.recording.layout) given.push_back("--layout");
    if (r.complex_part != d.recording.complex_part) given.push_back("--complex");
    if (r.invert != d.recording.invert) given.push_back("--invert");
    if (r.speed != d.recording.speed) given.push_back("--speed");
    if (c.loop != d.loop) given.push_back("--loop");
  }
  std::vector<std::string> warnings;
  for (const std::string& option : given)
    warnings.push_back(
        fmt::format("{} ignored: it applies to recordings (a file given to --source), not to {}",
                    option, is_phantom_source(c.source) ? "a synthetic phantom" : "a live source"));
  if (!is_phantom_source(c.source) && c.snr_db != d.snr_db)
    warnings.push_back("--snr ignored: it sets the synthetic phantom's noise");
  return warnings;
}

}  // namespace eit::cli
