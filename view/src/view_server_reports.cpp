// What the view server reports: the pages' paint reports turned into display latencies, and the
// JSON of /api/state and /api/stats (and /api/stats/reset). Server thread only, as the rest of
// ViewServer::Impl (view_server_impl.hpp).
#include <cmath>

#include <nlohmann/json.hpp>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/json_text.hpp"
#include "view_server_impl.hpp"
#include "ws_session.hpp"

namespace eit::view {
using nlohmann::json;

void ViewServer::Impl::on_paint_report(const std::string& stream, uint64_t seq,
                                       double paint_wall_ms, double recv_wall_ms,
                                       double raf_wall_ms) {
  counters.paint_reports.fetch_add(1, std::memory_order_relaxed);
  const StreamState* st = find_stream(stream);
  if (!st) return;
  const auto& t = st->wall_times[seq % StreamState::kSeqRing];
  if (t.seq != seq || t.acquired_ns == 0) return;
  const auto ns = [](double ms) { return static_cast<int64_t>(ms * 1e6); };
  display_latency[kTotal].record(ns(paint_wall_ms) - t.acquired_ns);
  display_latency[kPipeline].record(t.published_ns - t.acquired_ns);
  // A page's own times are ordered (received ≤ frame start ≤ drawn) unless it is not this page.
  if (!std::isfinite(recv_wall_ms) || !std::isfinite(raf_wall_ms) ||
      !(recv_wall_ms <= raf_wall_ms && raf_wall_ms <= paint_wall_ms))
    return;
  display_latency[kToPage].record(ns(recv_wall_ms) - t.published_ns);
  display_latency[kToFrame].record(ns(raf_wall_ms - recv_wall_ms));
  display_latency[kDraw].record(ns(paint_wall_ms - raf_wall_ms));
}

std::string ViewServer::Impl::state_json() const {
  json list = json::array();
  for (const auto& [name, st] : streams)
    list.push_back({{"name", name}, {"images", st.images}, {"has_series", !st.series.empty()}});
  json source = json::object();
  if (status_provider) source = json::parse(status_provider(), nullptr, false);
  return sinks::json_text(json{{"streams", list},
                               {"recapture", static_cast<bool>(recapture)},
                               {"browsers", sessions.size()},
                               {"source", source}});
}

std::string ViewServer::Impl::stats_json() const {
  const int64_t now = pipeline::now_ns();
  json browsers = json::array();
  for (const auto& s : sessions) {
    const double age = static_cast<double>(now - s->opened_ns) / 1e9;
    browsers.push_back({{"id", s->id()},
                        {"stream", s->stream()},
                        {"images_sent", s->images_sent},
                        {"images_skipped", s->images_skipped},
                        {"images_thinned", s->images_thinned},
                        {"max_rate_hz", s->max_rate_hz()},
                        {"painted", s->painted},
                        {"seconds", age},
                        {"painted_per_s", age > 0 ? static_cast<double>(s->painted) / age : 0.0}});
  }
  const auto summary_ms = [](const pipeline::LatencySummary& l) {
    return json{{"count", l.count},
                {"p50", static_cast<double>(l.p50_ns) / 1e6},
                {"p90", static_cast<double>(l.p90_ns) / 1e6},
                {"p99", static_cast<double>(l.p99_ns) / 1e6},
                {"max", static_cast<double>(l.max_ns) / 1e6}};
  };
  json parts = json::object();
  for (size_t i = kPipeline; i < kLatencyParts; ++i)
    parts[kLatencyPartNames[i]] =
        summary_ms(display_latency[i].snapshot().since(latency_baseline[i]).summary());
  json streams_json = json::array();
  for (const auto& [name, st] : streams)
    streams_json.push_back({{"name", name},
                            {"images", st.images},
                            {"overwritten", st.channel ? st.channel->ring().overwritten() : 0}});
  return sinks::json_text(json{
      {"browsers", browsers},
      {"streams", streams_json},
      {"display_latency_ms",
       summary_ms(display_latency[kTotal].snapshot().since(latency_baseline[kTotal]).summary())},
      {"display_latency_parts_ms", parts},
      {"images_sent", counters.images_sent.load()},
      {"images_skipped", counters.images_skipped.load()},
      {"images_thinned", counters.images_thinned.load()},
      {"paint_reports", counters.paint_reports.load()},
      {"accept_failures", counters.accept_failures.load()},
      {"last_accept_error", last_accept_error}});
}

void ViewServer::Impl::reset_stats() {
  for (size_t i = 0; i < kLatencyParts; ++i) latency_baseline[i] = display_latency[i].snapshot();
  const int64_t now = pipeline::now_ns();
  for (const auto& s : sessions) {
    s->images_sent = s->images_skipped = s->images_thinned = s->painted = 0;
    s->opened_ns = now;
  }
}

}  // namespace eit::view
