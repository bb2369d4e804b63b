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

// ,"name":[…] with one value per image element, null outside the body.
template <typename T>
void array(Writer& w, const char* name, const BodyLayout& layout,
           const std::vector<T>& v) noexcept {
  w.put(",\"{}\":[", name);
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) w.put(",");
    if (!layout.inside(i))
      w.put("null");
    else
      w.number(static_cast<double>(v[i]));
  }
  w.put("]");
}

// A scalar of BreathIndices as the JSON message and the CSV row name it: a value (null / empty
// when not finite) or a count (written as is); `csv` false: in the JSON message only.
struct Field {
  const char* name;
  double BreathIndices::*value = nullptr;
  size_t BreathIndices::*count = nullptr;
  bool csv = true;
};

// The global scalars after rate_per_min, in message and column order.
constexpr Field kGlobalFields[] = {
    {"tiv", &BreathIndices::tiv},
    {"tiv_expiratory", &BreathIndices::tiv_expiratory},
    {"eeli", &BreathIndices::eeli},
    {"eili", &BreathIndices::eili},
    {"eeli_change", &BreathIndices::eeli_change},
    {"eeli_trend_per_min", &BreathIndices::eeli_trend_per_min},
};

// The scalars that need the breath's pixels (BreathIndices::pixel_data).
constexpr Field kPixelFields[] = {
    {"cov_vertical_pct", &BreathIndices::cov_vertical},
    {"cov_horizontal_pct", &BreathIndices::cov_horizontal},
    {"gi", &BreathIndices::gi},
    {"rvd_mean_pct", &BreathIndices::rvd_mean},
    {"rvd_index_pct", &BreathIndices::rvd_sd},
    {"rvd_pixels", nullptr, &BreathIndices::rvd_pixels, false},
    {"silent_dependent_pct", &BreathIndices::silent_dependent},
    {"silent_nondependent_pct", &BreathIndices::silent_nondependent},
    {"lung_pixels", nullptr, &BreathIndices::lung_pixels},
    {"breaths_in_mean", nullptr, &BreathIndices::breaths_in_mean, false},
};

double field_value(const BreathIndices& b, const Field& f) noexcept {
  return f.value ? b.*f.value : static_cast<double>(b.*f.count);
}

// ,"name":value for each field.
void json_fields(Writer& w, const BreathIndices& b, std::span<const Field> fields) noexcept {
  for (const Field& f : fields) {
    w.put(",\"{}\":", f.name);
    if (f.value)
      w.number(b.*f.value);
    else
      w.put("{}", b.*f.count);
  }
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
  w.put(",\"inspiration_s\":{},\"expiration_s\":{}", b.inspiration_s, b.expiration_s);
  json_fields(w, b, kGlobalFields);
  w.put(",\"pixel_data\":{}", b.pixel_data);
  if (b.pixel_data) {
    json_fields(w, b, kPixelFields);
    w.put(",\"region_tiv\":{{");
    const auto& names = layout.region_names();
    for (size_t r = 0; r < names.size(); ++r) {
      w.put("{}\"{}\":", r ? "," : "", names[r]);
      w.number(b.region_tiv[r]);
    }
    w.put("}}");
    if (with_images) {
      array(w, "tidal", layout, b.tidal);
      array(w, "mean_tidal", layout, b.mean_tidal);
      array(w, "rvd", layout, b.rvd);
      array(w, "lung_space", layout, b.lung_space);
    }
  }
  w.put("}}");
  return w.done();
}

size_t write_breath_csv_header(const BodyLayout& layout, std::span<char> out) noexcept {
  Writer w(out);
  w.put("number,start_frame,middle_frame,end_frame,start_s,middle_s,end_s,rate_per_min");
  for (const Field& f : kGlobalFields) w.put(",{}", f.name);
  for (const Field& f : kPixelFields)
    if (f.csv) w.put(",{}", f.name);
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
  for (double v : {b.start_s, b.middle_s, b.end_s, b.rate_per_min}) field(v);
  for (const Field& f : kGlobalFields) field(field_value(b, f));
  const double nan = NAN;
  for (const Field& f : kPixelFields)
    if (f.csv) field(b.pixel_data ? field_value(b, f) : nan);
  for (size_t r = 0; r < layout.n_regions(); ++r) field(b.pixel_data ? b.region_tiv[r] : nan);
  w.put("\n");
  return w.done();
}

}  // namespace eit::indices
