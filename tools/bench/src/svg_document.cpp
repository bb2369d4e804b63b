#include "eit/bench/svg_document.hpp"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::bench {
namespace {

std::string stroke_attrs(const SvgDocument::Stroke& s) {
  std::string a = fmt::format(R"(stroke="{}" stroke-width="{:.2f}")", s.color, s.width);
  if (!s.dash.empty()) a += fmt::format(R"( stroke-dasharray="{}")", s.dash);
  if (s.opacity < 1) a += fmt::format(R"( stroke-opacity="{:.2f}")", s.opacity);
  return a;
}

}  // namespace

SvgDocument::SvgDocument(double width, double height) : width_(width), height_(height) {}

std::string SvgDocument::escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

void SvgDocument::rect(double x, double y, double w, double h, std::string_view fill) {
  rect(x, y, w, h, fill, Stroke{"none", 0});
}

void SvgDocument::rect(double x, double y, double w, double h, std::string_view fill,
                       Stroke stroke) {
  body_ +=
      fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" {}/>)", x,
                  y, w, h, fill, stroke_attrs(stroke));
  body_ += '\n';
}

void SvgDocument::line(double x1, double y1, double x2, double y2, Stroke stroke) {
  body_ += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" {}/>)", x1, y1, x2,
                       y2, stroke_attrs(stroke));
  body_ += '\n';
}

void SvgDocument::polyline(const std::vector<std::pair<double, double>>& points, Stroke stroke) {
  if (points.empty()) return;
  body_ +=
      R"(<polyline fill="none" stroke-linejoin="round" )" + stroke_attrs(stroke) + R"( points=")";
  for (const auto& [x, y] : points) body_ += fmt::format("{:.1f},{:.1f} ", x, y);
  body_ += "\"/>\n";
}

void SvgDocument::text(double x, double y, std::string_view s, Font font) {
  static constexpr std::string_view kAnchors[] = {"start", "middle", "end"};
  std::string transform;
  if (font.rotate != 0)
    transform =
        fmt::format(R"svg( transform="rotate({:.1f} {:.1f} {:.1f})")svg", font.rotate, x, y);
  body_ += fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" font-size="{:.1f}" text-anchor="{}" fill="{}"{}{}>{}</text>)",
      x, y, font.size, kAnchors[static_cast<int>(font.anchor)], font.color,
      font.bold ? R"( font-weight="bold")" : "", transform, escape(s));
  body_ += '\n';
}

void SvgDocument::begin_group(std::string_view title) {
  body_ += fmt::format("<g><title>{}</title>\n", escape(title));
}

void SvgDocument::end_group() { body_ += "</g>\n"; }

std::string SvgDocument::str() const {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" fill=\"#fff\"/>\n{2}</svg>\n",
      width_, height_, body_);
}

void SvgDocument::save(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", path));
  out << str();
  out.close();
  if (!out) throw std::runtime_error(fmt::format("{}: write failed", path));
}

}  // namespace eit::bench
