#pragma once
// Shared by the .mat reader tests (test_mat_file.cpp: v5; test_mat73_file.cpp: v7.3).
#include <exception>
#include <filesystem>
#include <string>

#include "eit/recon/array_file.hpp"
#include "eit/recon/mat_file.hpp"
#include "test_data.hpp"

namespace eit::test {

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
