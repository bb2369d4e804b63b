#include "eit/indices/breath_json.hpp"

#include <cmath>

#include <fmt/format.h>

namespace eit::indices {
namespace {

// Appends into a fixed buffer; remembers overflow instead of writing past the end.
class Writer {
 public:
  explicit Writer(std::span<char> out) : out_(out) {}
  template <typename... Args>
  void put(fmt::format_string<Args...> f, Args&&... args) noexcept {
    if (overflow_) return;
    const auto r =
        fmt::format_to_n(out_.data() + pos_, out_.size() - pos_, f, std::forward<Args>(args)...);
    if (r.size > out_.size() - pos_) {
      overflow_ = true;
      return;
    }
    pos_ += r.size;
  }
  void number(double v) noexcept {
    if (std::isfinite(v))
      put("{}", v);
    else
      put("null");
  }
  size_t done() const noexcept { return overflow_ ? 0 : pos_; }

 private:
  std::span<char> out_;
  size_t pos_ = 0;
  bool overflow_ = false;
};

template <typename T>
void array(Writer& w, const BodyLayout& layout, const std::vector<T>& v) noexcept {
  w.put("[");
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) w.put(",");
    if (!layout.inside(i))
      w.put("null");
    else
      w.number(static_cast<double>(v[i]));
  }
  w.put("]");
}

}  // namespace

size_t breath_json_capacity(const BodyLayout& layout) noexcept {
  // 3 images of ≤ 16 characters per value, the mask, the regions and the scalars.
  return 4096 + layout.n_out() * (3 * 17 + 2) + layout.n_regions() * 64;
}

size_t write_breath_json(const BreathIndices& b, const BodyLayout& layout, std::string_view stream,
                         bool with_images, std::span<char> out) noexcept {
  Writer w(out);
  w.put("{{\"type\":\"breath\",\"version\":1,\"stream\":\"{}\",\"number\":{},", stream, b.number);
  w.put("\"frames\":[{},{},{}],\"seq\":[{},{},{}],\"t_ns\":[{},{},{}],", b.start, b.middle, b.end,
        b.start_seq, b.middle_seq, b.end_seq, b.start_ns, b.middle_ns, b.end_ns);
  w.put("\"t_s\":[{},{},{}],\"rate_per_min\":", b.start_s, b.middle_s, b.end_s);
  w.number(b.rate_per_min);
  w.put(",\"inspiration_s\":{},\"expiration_s\":{},\"tiv\":", b.inspiration_s, b.expiration_s);
  w.number(b.tiv);
  w.put(",\"tiv_expiratory\":");
  w.number(b.tiv_expiratory);
  w.put(",\"eeli\":");
  w.number(b.eeli);
  w.put(",\"eili\":");
  w.number(b.eili);
  w.put(",\"eeli_change\":");
  w.number(b.eeli_change);
  w.put(",\"eeli_trend_per_min\":");
  w.number(b.eeli_trend_per_min);
  w.put(",\"pixel_data\":{}", b.pixel_data);
  if (b.pixel_data) {
    w.put(",\"cov_vertical_pct\":");
    w.number(b.cov_vertical);
    w.put(",\"cov_horizontal_pct\":");
    w.number(b.cov_horizontal);
    w.put(",\"gi\":");
    w.number(b.gi);
    w.put(",\"rvd_mean_pct\":");
    w.number(b.rvd_mean);
    w.put(",\"rvd_index_pct\":");
    w.number(b.rvd_sd);
    w.put(",\"rvd_pixels\":{},\"silent_dependent_pct\":", b.rvd_pixels);
    w.number(b.silent_dependent);
    w.put(",\"silent_nondependent_pct\":");
    w.number(b.silent_nondependent);
    w.put(",\"lung_pixels\":{},\"breaths_in_mean\":{},\"region_tiv\":{{", b.lung_pixels,
          b.breaths_in_mean);
    const auto& names = layout.region_names();
    for (size_t r = 0; r < names.size(); ++r) {
      w.put("{}\"{}\":", r ? "," : "", names[r]);
      w.number(b.region_tiv[r]);
    }
    w.put("}}");
    if (with_images) {
      w.put(",\"tidal\":");
      array(w, layout, b.tidal);
      w.put(",\"mean_tidal\":");
      array(w, layout, b.mean_tidal);
      w.put(",\"rvd\":");
      array(w, layout, b.rvd);
      w.put(",\"lung_space\":");
      array(w, layout, b.lung_space);
    }
  }
  w.put("}}");
  return w.done();
}

size_t write_breath_csv_header(const BodyLayout& layout, std::span<char> out) noexcept {
  Writer w(out);
  w.put(
      "number,start_frame,middle_frame,end_frame,start_s,middle_s,end_s,rate_per_min,tiv,"
      "tiv_expiratory,eeli,eili,eeli_change,eeli_trend_per_min,cov_vertical_pct,"
      "cov_horizontal_pct,gi,rvd_mean_pct,rvd_index_pct,silent_dependent_pct,"
      "silent_nondependent_pct,lung_pixels");
  for (const auto& n : layout.region_names()) w.put(",tiv_{}", n);
  w.put("\n");
  return w.done();
}

size_t write_breath_csv_row(const BreathIndices& b, const BodyLayout& layout,
                            std::span<char> out) noexcept {
  Writer w(out);
  auto field = [&](double v) {
    w.put(",");
    if (std::isfinite(v)) w.put("{}", v);
  };
  w.put("{},{},{},{}", b.number, b.start, b.middle, b.end);
  for (double v : {b.start_s, b.middle_s, b.end_s, b.rate_per_min, b.tiv, b.tiv_expiratory, b.eeli,
                   b.eili, b.eeli_change, b.eeli_trend_per_min})
    field(v);
  const double nan = NAN;
  for (double v : {b.cov_vertical, b.cov_horizontal, b.gi, b.rvd_mean, b.rvd_sd, b.silent_dependent,
                   b.silent_nondependent})
    field(b.pixel_data ? v : nan);
  field(b.pixel_data ? static_cast<double>(b.lung_pixels) : nan);
  for (size_t r = 0; r < layout.n_regions(); ++r) field(b.pixel_data ? b.region_tiv[r] : nan);
  w.put("\n");
  return w.done();
}

}  // namespace eit::indices
