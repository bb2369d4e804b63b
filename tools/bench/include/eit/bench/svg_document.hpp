#pragma once
// SvgDocument: the few SVG 1.1 elements the benchmark's plots need (rectangles, lines, polylines,
// text), written as a standalone file any browser opens. Text is XML-escaped; coordinates are in
// user units (pixels at 100 %). Not thread-safe; allocates as it grows.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace eit::bench {

class SvgDocument {
 public:
  SvgDocument(double width, double height);

  struct Stroke {
    std::string_view color = "#000";
    double width = 1;
    std::string_view dash = {};  // e.g. "4 3"
    double opacity = 1;
  };
  enum class Anchor { kStart, kMiddle, kEnd };
  struct Font {
    double size = 12;
    Anchor anchor = Anchor::kStart;
    bool bold = false;
    std::string_view color = "#222";
    double rotate = 0;  // degrees, about the text's anchor point
  };

  void rect(double x, double y, double w, double h, std::string_view fill);  // no outline
  void rect(double x, double y, double w, double h, std::string_view fill, Stroke stroke);
  void line(double x1, double y1, double x2, double y2, Stroke stroke);
  void polyline(const std::vector<std::pair<double, double>>& points, Stroke stroke);
  void text(double x, double y, std::string_view s, Font font);
  // Wraps what follows up to end_group() in a <g> with an SVG <title> (a tooltip in browsers).
  void begin_group(std::string_view title);
  void end_group();

  // The complete document, XML declaration included.
  std::string str() const;
  // Writes str() to `path`; throws std::runtime_error naming the file on failure.
  void save(const std::string& path) const;

  static std::string escape(std::string_view s);

 private:
  double width_, height_;
  std::string body_;
};

}  // namespace eit::bench
