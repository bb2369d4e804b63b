#pragma once
// A raw float32 recording of `frames` test frames (live_test_support.hpp's test_frame, `n`
// values each, no rate of its own) that emulate's tests play out: written at construction,
// removed at destruction, named after the test file and the process so parallel runs differ.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "../acquisition/live_test_support.hpp"

namespace eit::test {

class RawTestRecording {
 public:
  RawTestRecording(const std::string& tag, size_t frames, size_t n)
      : path_(std::filesystem::temp_directory_path() /
              (tag + "_" + std::to_string(::getpid()) + ".f32")) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path_.string());
    for (size_t k = 0; k < frames; ++k) {
      const auto v = test_frame(k, n);
      std::fwrite(v.data(), sizeof(float), v.size(), f);
    }
    std::fclose(f);
  }
  ~RawTestRecording() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  RawTestRecording(const RawTestRecording&) = delete;
  RawTestRecording& operator=(const RawTestRecording&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace eit::test
