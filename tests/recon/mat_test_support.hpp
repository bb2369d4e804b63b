#pragma once
// Shared by the .mat reader tests (test_mat_file.cpp: v5; test_mat73_file.cpp: v7.3).
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>

#include "eit/recon/array_file.hpp"
#include "eit/recon/mat_file.hpp"
#include "test_data.hpp"

namespace eit::test {

// A .mat file's 128-byte header: `text` padded to 116 bytes, 8 bytes of subsystem offset, the
// version (0x0100: v5; 0x0200: v7.3) and the 'IM' indicator, little-endian.
inline std::string mat_header(const std::string& text, uint16_t version) {
  std::string head = text;
  head.resize(116, ' ');
  head.append(8, '\0');
  head += static_cast<char>(version & 0xff);
  head += static_cast<char>(version >> 8);
  return head + "IM";
}

// What reading variable `variable` of `p` throws; empty when it reads.
inline std::string mat_read_error(const std::filesystem::path& p,
                                  const std::string& variable = "v") {
  try {
    recon::read_mat_variable(p, variable);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// True (and the skip reported) when this build reads no .mat files.
inline bool skip_without_matio() {
  if (recon::mat_reader_available()) return false;
  report_skip(".mat reading", "built without libmatio");
  return true;
}

}  // namespace eit::test
