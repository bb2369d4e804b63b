#pragma once
// Checks a written SVG with programs outside eitstream, each skipped visibly when absent: Python's
// XML parser reads it and finds an <svg> root, and rsvg-convert renders it to a PNG of more than
// 1 kB. `what` names the SVG in the skip lines.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "test_data.hpp"

namespace eit::test {

inline void check_svg_parses_and_renders(const std::filesystem::path& svg,
                                         const std::filesystem::path& png,
                                         const std::string& what) {
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") == 0) {
    const std::string cmd = fmt::format(
        "python3 -c \"import sys, xml.etree.ElementTree as E; "
        "r = E.parse(sys.argv[1]).getroot(); sys.exit(0 if r.tag.endswith('svg') else 3)\" '{}'",
        svg.string());
    CHECK(std::system(cmd.c_str()) == 0);
  } else {
    report_skip(what + " XML parse", "python3 not found");
  }
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") == 0) {
    const std::string cmd = fmt::format("rsvg-convert -o '{}' '{}'", png.string(), svg.string());
    CHECK(std::system(cmd.c_str()) == 0);
    REQUIRE(std::filesystem::exists(png));
    CHECK(std::filesystem::file_size(png) > 1000);
  } else {
    report_skip(what + " rendering", "rsvg-convert not installed");
  }
}

}  // namespace eit::test
