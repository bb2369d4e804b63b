#include "eit/bench/latency_svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/bench/svg_document.hpp"

namespace eit::bench {
namespace {

constexpr double kWidth = 1200;
constexpr double kHeaderHeight = 84;
constexpr double kRunHeight = 370;
// Distinct, colour-blind-friendly (Okabe–Ito and Tol); end to end is drawn black and thicker.
constexpr std::array<std::string_view, 8> kColors{"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                  "#D55E00", "#56B4E9", "#999933", "#882255"};

struct Frame {  // a plot area in pixels
  double x, y, w, h;
};

struct LogAxis {  // log10 scale over [lo, hi] decades
  double lo, hi;
  double frac(double v) const {
    const double l = std::log10(std::max(v, std::pow(10.0, lo)));
    return std::clamp((l - lo) / (hi - lo), 0.0, 1.0);
  }
};

LogAxis decades_for(double min_v, double max_v) {
  const double lo = std::floor(std::log10(std::max(min_v, 10.0)));
  double hi = std::ceil(std::log10(std::max(max_v, 10.0)));
  if (hi <= lo) hi = lo + 1;
  return {lo, hi};
}

void draw_log_ticks(SvgDocument& svg, const Frame& f, const LogAxis& ax, bool horizontal) {
  for (int d = static_cast<int>(ax.lo); d <= static_cast<int>(ax.hi); ++d) {
    for (int m = 1; m < 10; ++m) {
      const double v = m * std::pow(10.0, d);
      if (std::log10(v) > ax.hi + 1e-9) break;
      const double t = ax.frac(v);
      const bool major = m == 1;
      SvgDocument::Stroke grid{major ? "#c8c8c8" : "#ececec", 1};
      if (horizontal) {
        const double x = f.x + t * f.w;
        svg.line(x, f.y, x, f.y + f.h, grid);
        if (major)
          svg.text(x, f.y + f.h + 15, format_duration(v), {10, SvgDocument::Anchor::kMiddle});
      } else {
        const double y = f.y + f.h - t * f.h;
        svg.line(f.x, y, f.x + f.w, y, grid);
        if (major) svg.text(f.x - 5, y + 3.5, format_duration(v), {10, SvgDocument::Anchor::kEnd});
      }
    }
  }
}

// Percentile axis: y = log10(1 / (1 − F)), so 90 % sits at 1, 99 % at 2, 99.9 % at 3.
double nines(double F) { return -std::log10(std::max(1.0 - F, 1e-12)); }

void draw_cdf(SvgDocument& svg, const Frame& f, const RunResult& run) {
  std::vector<const IntervalResult*> curves;
  for (const auto& iv : run.intervals) curves.push_back(&iv);
  curves.push_back(&run.end_to_end);
  double vmin = 1e18, vmax = 0;
  size_t nmax = 0;
  for (const auto* c : curves) {
    if (c->sorted_ns.empty()) continue;
    const auto first_pos = std::upper_bound(c->sorted_ns.begin(), c->sorted_ns.end(), 0);
    if (first_pos != c->sorted_ns.end()) vmin = std::min(vmin, static_cast<double>(*first_pos));
    vmax = std::max(vmax, static_cast<double>(c->sorted_ns.back()));
    nmax = std::max(nmax, c->sorted_ns.size());
  }
  svg.rect(f.x, f.y, f.w, f.h, "#fafafa", {"#888", 1});
  svg.text(f.x + f.w / 2, f.y - 8, "latency CDF per stage (y stretched toward the tail)",
           {12, SvgDocument::Anchor::kMiddle, true});
  if (nmax == 0) {
    svg.text(f.x + f.w / 2, f.y + f.h / 2, "no complete frames",
             {12, SvgDocument::Anchor::kMiddle});
    return;
  }
  const LogAxis ax = decades_for(vmin, vmax);
  const double ymax = std::max(1.0, std::ceil(std::log10(static_cast<double>(nmax + 1))));
  draw_log_ticks(svg, f, ax, true);
  for (int k = 0; k <= static_cast<int>(ymax); ++k) {
    const double y = f.y + f.h - k / ymax * f.h;
    svg.line(f.x, y, f.x + f.w, y, {"#c8c8c8", 1});
    const std::string label =
        k == 0 ? "0 %" : fmt::format("{} %", 100.0 - 100.0 * std::pow(10.0, -k));
    svg.text(f.x - 5, y + 3.5, label, {10, SvgDocument::Anchor::kEnd});
  }
  const double y50 = f.y + f.h - nines(0.5) / ymax * f.h;
  svg.line(f.x, y50, f.x + f.w, y50, {"#c8c8c8", 1, "3 3"});
  svg.text(f.x - 5, y50 + 3.5, "50 %", {10, SvgDocument::Anchor::kEnd});
  svg.text(f.x + f.w / 2, f.y + f.h + 32, "latency (log scale)",
           {11, SvgDocument::Anchor::kMiddle});

  for (size_t ci = 0; ci < curves.size(); ++ci) {
    const auto& s = curves[ci]->sorted_ns;
    if (s.empty()) continue;
    const size_t n = s.size();
    std::vector<std::pair<double, double>> pts;
    // Sample the percentile axis evenly (plus every one of the last 50 samples), so the bulk of
    // a long run costs a few hundred points and the tail keeps every sample.
    const size_t steps = 400;
    size_t last_i = SIZE_MAX;
    for (size_t k = 0; k <= steps + 50; ++k) {
      size_t i;
      if (k <= steps) {
        const double F = 1.0 - std::pow(10.0, -ymax * static_cast<double>(k) / steps);
        i = std::min(n - 1, static_cast<size_t>(F * static_cast<double>(n)));
      } else {
        const size_t back = steps + 50 - k;
        if (back >= n) continue;
        i = n - 1 - back;
      }
      if (i == last_i || (last_i != SIZE_MAX && i < last_i)) continue;
      last_i = i;
      const double F = static_cast<double>(i + 1) / static_cast<double>(n + 1);
      pts.emplace_back(f.x + ax.frac(static_cast<double>(s[i])) * f.w,
                       f.y + f.h - std::min(nines(F), ymax) / ymax * f.h);
    }
    const bool e2e = curves[ci] == &run.end_to_end;
    svg.begin_group(fmt::format(
        "{}: p50 {}, max {}", curves[ci]->name,
        format_duration(static_cast<double>(curves[ci]->summary.percentiles[0].value_ns)),
        format_duration(static_cast<double>(curves[ci]->summary.max_ns))));
    svg.polyline(pts, {e2e ? "#000" : kColors[ci % kColors.size()], e2e ? 2.4 : 1.6});
    svg.end_group();
  }
  // Legend, right of the plot.
  double ly = f.y + 8;
  for (size_t ci = 0; ci < curves.size(); ++ci) {
    const bool e2e = curves[ci] == &run.end_to_end;
    const auto* c = curves[ci];
    const double lx = f.x + f.w + 12;
    svg.line(lx, ly, lx + 18, ly, {e2e ? "#000" : kColors[ci % kColors.size()], e2e ? 2.4 : 1.6});
    const std::string name = e2e ? "end to end" : c->name;
    svg.text(lx + 23, ly + 4, name, {11, SvgDocument::Anchor::kStart, e2e});
    const auto& p50 = c->summary.percentiles[0];
    const auto& p99 = c->summary.percentiles[2];
    svg.text(lx + 23, ly + 17,
             fmt::format("p50 {} · p99 {}", format_duration(static_cast<double>(p50.value_ns)),
                         p99.quoted ? format_duration(static_cast<double>(p99.value_ns)) : "—"),
             {9.5, SvgDocument::Anchor::kStart, false, "#555"});
    ly += 33;
  }
}

void draw_over_time(SvgDocument& svg, const Frame& f, const RunResult& run) {
  svg.rect(f.x, f.y, f.w, f.h, "#fafafa", {"#888", 1});
  svg.text(f.x + f.w / 2, f.y - 8, "end-to-end latency over the run",
           {12, SvgDocument::Anchor::kMiddle, true});
  const auto& series = run.end_to_end_over_time;
  if (series.empty()) return;
  double vmin = 1e18, vmax = 0;
  for (const auto& [t, v] : series) {
    if (v > 0) vmin = std::min(vmin, static_cast<double>(v));
    vmax = std::max(vmax, static_cast<double>(v));
  }
  const LogAxis ay = decades_for(vmin, vmax);
  const double tmax = std::max(series.back().first, 1e-6);
  draw_log_ticks(svg, f, ay, false);
  for (int k = 0; k <= 5; ++k) {
    const double x = f.x + k / 5.0 * f.w;
    svg.line(x, f.y + f.h, x, f.y + f.h + 4, {"#888", 1});
    svg.text(x, f.y + f.h + 15, fmt::format("{:.3g}", tmax * k / 5.0),
             {10, SvgDocument::Anchor::kMiddle});
  }
  svg.text(f.x + f.w / 2, f.y + f.h + 32, "time since the first measured frame was scheduled (s)",
           {11, SvgDocument::Anchor::kMiddle});
  // Buckets of equal time; per bucket min, median, max.
  const size_t buckets = std::clamp<size_t>(series.size() / 5, 1, 300);  // ≥ 5 frames each
  std::vector<std::vector<int64_t>> per(buckets);
  for (const auto& [t, v] : series)
    per[std::min(buckets - 1, static_cast<size_t>(t / tmax * static_cast<double>(buckets)))]
        .push_back(v);
  std::vector<std::pair<double, double>> lo, mid, hi;
  for (size_t b = 0; b < buckets; ++b) {
    auto& v = per[b];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const double x = f.x + (static_cast<double>(b) + 0.5) / static_cast<double>(buckets) * f.w;
    const auto y = [&](int64_t ns) { return f.y + f.h - ay.frac(static_cast<double>(ns)) * f.h; };
    lo.emplace_back(x, y(v.front()));
    mid.emplace_back(x, y(v[v.size() / 2]));
    hi.emplace_back(x, y(v.back()));
  }
  svg.polyline(hi, {"#D55E00", 1.2, {}, 0.9});
  svg.polyline(mid, {"#0072B2", 1.6});
  svg.polyline(lo, {"#009E73", 1.0, {}, 0.9});
  const auto& p99 = run.end_to_end.summary.percentiles[2];
  if (p99.quoted) {
    const double y = f.y + f.h - ay.frac(static_cast<double>(p99.value_ns)) * f.h;
    svg.line(f.x, y, f.x + f.w, y, {"#000", 1, "5 4"});
    svg.text(f.x + f.w - 4, y - 4,
             fmt::format("p99 {}", format_duration(static_cast<double>(p99.value_ns))),
             {10, SvgDocument::Anchor::kEnd});
  }
  const double lx = f.x + 8, ly = f.y + 14;
  const std::array<std::pair<std::string_view, std::string_view>, 3> legend{
      {{"#D55E00", "max"}, {"#0072B2", "median"}, {"#009E73", "min"}}};
  for (size_t i = 0; i < legend.size(); ++i) {
    const double x = lx + static_cast<double>(i) * 118;
    svg.line(x, ly - 4, x + 16, ly - 4, {legend[i].first, 2});
    svg.text(x + 20, ly, fmt::format("{} / bucket", legend[i].second), {10});
  }
}

}  // namespace

std::string format_duration(double ns) {
  const auto trim = [](double v, std::string_view unit) { return fmt::format("{:g} {}", v, unit); };
  if (ns < 1e3) return trim(std::round(ns * 10) / 10, "ns");
  if (ns < 1e6) return trim(std::round(ns / 1e1) / 1e2, "µs");
  if (ns < 1e9) return trim(std::round(ns / 1e4) / 1e2, "ms");
  return trim(std::round(ns / 1e7) / 1e2, "s");
}

std::string render_latency_svg(const BenchReport& report) {
  const double height =
      kHeaderHeight + kRunHeight * static_cast<double>(std::max<size_t>(1, report.runs.size()));
  SvgDocument svg(kWidth, height);
  const auto& m = report.machine;
  svg.text(20, 24, "eitstream bench", {17, SvgDocument::Anchor::kStart, true});
  svg.text(20, 42,
           fmt::format("{} · {} CPUs · {} · GPU: {} · {}", m.cpu_model, m.logical_cpus, m.kernel,
                       m.gpu, m.started_utc),
           {11, SvgDocument::Anchor::kStart, false, "#444"});
  svg.text(20, 58, fmt::format("$ {}", m.command_line),
           {11, SvgDocument::Anchor::kStart, false, "#444"});
  if (report.runs.empty()) svg.text(20, 100, "no runs", {14});
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const RunResult& r = report.runs[i];
    const double top = kHeaderHeight + kRunHeight * static_cast<double>(i);
    svg.line(10, top - 4, kWidth - 10, top - 4, {"#bbb", 1});
    svg.text(20, top + 14,
             fmt::format("run {}: {} · {} measured frames (warm-up {} excluded) · offered {:.1f} / "
                         "delivered {:.1f} frames/s · not published {} · lost in transport {}",
                         i + 1, r.config.label(), r.measured, r.warmup_excluded, r.offered_fps,
                         r.delivered_fps, r.not_published, r.not_received),
             {12, SvgDocument::Anchor::kStart, true});
    draw_cdf(svg, {80, top + 48, 470, 260}, r);
    draw_over_time(svg, {760, top + 48, 410, 260}, r);
  }
  return svg.str();
}

void write_latency_svg(const BenchReport& report, const std::string& path) {
  const std::string text = render_latency_svg(report);
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error(fmt::format("{}: cannot open for writing", path));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error(fmt::format("{}: write failed", path));
}

}  // namespace eit::bench
