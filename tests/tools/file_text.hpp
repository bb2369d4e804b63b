#pragma once
// The whole text of a file the test had written (a report, a log, captured output); "" when the
// file cannot be read, so a missing file fails the content checks that follow.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace eit::test {

inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace eit::test
