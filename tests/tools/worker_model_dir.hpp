#pragma once
// A temporary --model-dir for `eitstream worker` tests: `eitstream model build`'s default.h5 in
// /tmp/<prefix><pid>, removed with the object. Needs EITSTREAM_BIN (the CLI tests).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "subprocess.hpp"

namespace eit::test {

struct WorkerModelDir {
  std::filesystem::path path;
  explicit WorkerModelDir(const std::string& prefix) {
    path = std::filesystem::temp_directory_path() / (prefix + std::to_string(getpid()));
    std::filesystem::create_directories(path);
    Subprocess build({EITSTREAM_BIN, "model", "build", "-o", (path / "default.h5").string()});
    REQUIRE(build.wait(std::chrono::seconds(120)) == 0);
  }
  ~WorkerModelDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace eit::test
