#include "run_config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace eit::cli {

std::optional<int> parse_zmq_io_cpu(const std::string& value) noexcept {
  if (value == "sink" || value == "any") return -1;
  int cpu = -1;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, cpu);
  if (ec != std::errc() || ptr != end || cpu < 0) return std::nullopt;
  return cpu;
}

std::optional<bool> parse_zmq_io_defer(const std::string& value) noexcept {
  if (value == "preempt") return false;
  if (value == "defer") return true;
  return std::nullopt;
}

std::string zmq_send_inline_refusal(bool lossless, size_t publish_batch) {
  if (lossless)
    return "--zmq-send inline: a send on the producing thread never waits, so it takes --policy "
           "live (lossless given)";
  if (publish_batch != 1)
    return fmt::format(
        "--zmq-send inline: sends each image as it comes; expected --publish-batch 1, got {}",
        publish_batch);
  return {};
}

namespace {

// The one table of run options: config key, command-line option, field. It drives reading the
// config file, "the command line wins" and the list of keys, so they cannot disagree.
template <typename F>
void for_each_field(RunConfig& c, F&& f) {
  f("model", "--model", c.model);
  f("source", "--source", c.source);
  f("backend", "--backend", c.backend);
  f("endpoint", "--endpoint", c.endpoint);
  f("push", "--push", c.push);
  f("policy", "--policy", c.policy);
  f("fps", "--fps", c.fps);
  f("loop", "--loop", c.loop);
  f("frames", "--frames", c.frames);
  f("duration", "--duration", c.duration);
  f("reference", "--reference", c.reference);
  f("normalize", "--normalize", c.normalize);
  f("stream", "--stream", c.stream);
  f("snr", "--snr", c.snr_db);
  f("max_batch", "--max-batch", c.max_batch);
  f("publish_batch", "--publish-batch", c.publish_batch);
  f("queue", "--queue", c.queue);
  f("warm_us", "--warm-us", c.warm_us);
  f("quiet", "--quiet", c.quiet);
  f("recording_format", "--recording-format", c.recording.format);
  f("variable", "--variable", c.recording.variable);
  f("values_per_frame", "--values-per-frame", c.recording.values_per_frame);
  f("layout", "--layout", c.recording.layout);
  f("complex", "--complex", c.recording.complex_part);
  f("invert", "--invert", c.recording.invert);
  f("speed", "--speed", c.recording.speed);
  f("record", "--record", c.record);
  f("record_raw", "--record-raw", c.record_raw);
  f("record_compress", "--record-compress", c.record_compress);
  f("record_chunk", "--record-chunk", c.record_chunk);
  f("force", "--force", c.force);
  f("publish", "--publish", c.publish);
  f("http", "--http", c.http);
  f("monitor", "--monitor", c.monitor);
  f("source_timeout", "--source-timeout", c.source_timeout);
  f("latency_mode", "--latency-mode", c.latency_mode);
  f("stages", "--stages", c.stages);
  f("cpu_wake_hold", "--cpu-wake-hold", c.cpu_wake_hold);
  f("cpus", "--cpus", c.cpus);
  f("zmq_io_cpu", "--zmq-io-cpu", c.zmq_io_cpu);
  f("zmq_io_wake", "--zmq-io-wake", c.zmq_io_wake);
  f("zmq_send", "--zmq-send", c.zmq_send);
  f("cpu_threads", "--cpu-threads", c.cpu_threads);
  f("curve_secret", "--curve-secret", c.curve_secret);
  f("curve_allow", "--curve-allow", c.curve_allow);
  f("insecure", "--insecure", c.insecure);
}

template <typename T>
std::string_view type_name() {
  if constexpr (std::is_same_v<T, std::string>)
    return "a string";
  else if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_same_v<T, double>)
    return "a number";
  else
    return "a non-negative integer";
}

}  // namespace

const std::vector<std::string>& run_config_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    RunConfig c;
    for_each_field(c, [&](const char* name, const char*, auto&) { k.emplace_back(name); });
    return k;
  }();
  return keys;
}

const std::vector<std::pair<const char*, const char*>>& run_option_keys() {
  static const std::vector<std::pair<const char*, const char*>> keys = [] {
    std::vector<std::pair<const char*, const char*>> k;
    RunConfig c;
    for_each_field(
        c, [&](const char* name, const char* option, auto&) { k.emplace_back(option, name); });
    return k;
  }();
  return keys;
}

namespace {

// A value of a key outside the table, as the command line would give it.
std::vector<std::string> command_line_values(const std::filesystem::path& path,
                                             const std::string& key, const nlohmann::json& v) {
  const auto one = [&](const nlohmann::json& x) -> std::string {
    if (x.is_string()) return x.get<std::string>();
    if (x.is_boolean() || x.is_number()) return x.dump();
    throw std::runtime_error(fmt::format("config {}: key '{}' is {}, expected a value or a list",
                                         path.string(), key, v.dump()));
  };
  std::vector<std::string> values;
  if (v.is_array())
    for (const auto& x : v) values.push_back(one(x));
  else
    values.push_back(one(v));
  return values;
}

}  // namespace

std::vector<OtherConfigKey> apply_config_file(const std::filesystem::path& path,
                                              RunConfig& config) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("config {}: cannot open the file", path.string()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number like 1e400
    throw std::runtime_error(fmt::format("config {}: not valid JSON: {}", path.string(), e.what()));
  }
  if (!j.is_object())
    throw std::runtime_error(fmt::format("config {}: expected a JSON object", path.string()));
  const auto& keys = run_config_keys();
  std::vector<OtherConfigKey> others;
  for (const auto& [key, value] : j.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      others.push_back({key, command_line_values(path, key, value)});
  for_each_field(config, [&](const char* name, const char*, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if (!j.contains(name)) return;
    const auto& v = j[name];
    const bool ok = std::is_same_v<T, std::string> ? v.is_string()
                    : std::is_same_v<T, bool>      ? v.is_boolean()
                    : std::is_same_v<T, double>    ? v.is_number()
                                                   : v.is_number_unsigned();
    if (!ok)
      throw std::runtime_error(fmt::format("config {}: key '{}' is {}, expected {}", path.string(),
                                           name, v.dump(), type_name<T>()));
    field = v.get<T>();
    // fps < 0 is the struct's "not given"; from the file it would silently mean the default.
    if constexpr (std::is_same_v<T, double>)
      if (std::string_view(name) == "fps" && field < 0)
        throw std::runtime_error(
            fmt::format("config {}: key 'fps': --fps {}: expected a rate in frames/s, or 0 for as "
                        "fast as possible",
                        path.string(), v.dump()));
  });
  return others;
}

void copy_key(const std::string& key, RunConfig from, RunConfig& to) {
  for_each_field(to, [&](const char* name, const char*, auto& dst) {
    if (key != name) return;
    for_each_field(from, [&](const char* other, const char*, auto& src) {
      if constexpr (std::is_same_v<std::decay_t<decltype(src)>, std::decay_t<decltype(dst)>>)
        if (key == other) dst = src;
    });
  });
}

}  // namespace eit::cli
