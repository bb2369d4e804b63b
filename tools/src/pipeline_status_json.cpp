#include "pipeline_status_json.hpp"

#include "eit/sinks/json_text.hpp"

#include <nlohmann/json.hpp>

namespace eit::cli {

std::string pipeline_status_json(const pipeline::PipelineStats& s,
                                 const std::vector<std::string>& warnings) {
  nlohmann::json sinks = nlohmann::json::array();
  for (size_t i = 0; i < s.sink_queues.size(); ++i) {
    const auto& q = s.sink_queues[i];
    const pipeline::SinkStats own = i < s.sinks.size() ? s.sinks[i] : pipeline::SinkStats{};
    sinks.push_back({{"name", q.name}, {"sent", own.sent}, {"dropped", s.sink_missed(i)}});
  }
  const auto& l = s.latency[pipeline::kSpanTotal];
  const nlohmann::json j = {{"kind", "pipeline"},
                            {"running", s.running},
                            {"backend", s.backend},
                            {"frames_in", s.frames_in},
                            {"frames_out", s.frames_out},
                            {"dropped", s.dropped()},
                            {"sinks", std::move(sinks)},
                            {"reference_captures", s.reference_captures},
                            {"latency_p99_ms", static_cast<double>(l.p99_ns) / 1e6},
                            {"source",
                             {{"bad_frames", s.source.bad_frames},
                              {"seq_gaps", s.source.seq_gaps},
                              {"reordered", s.source.reordered},
                              {"bytes_skipped", s.source.bytes_skipped},
                              {"reconnects", s.source.reconnects},
                              {"last_error", s.source.last_error}}},
                            {"warnings", warnings},
                            {"error", s.error}};
  return sinks::json_text(j);
}

}  // namespace eit::cli
