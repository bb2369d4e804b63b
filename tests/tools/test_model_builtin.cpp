// `eitstream model info builtin`, `model export builtin -o`, and `model rehash` of a model edited
// outside eitstream, through the real binary.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>

#include "subprocess.hpp"

namespace fs = std::filesystem;
using eit::test::Subprocess;

namespace {
int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }
}  // namespace

TEST_CASE("the built-in model can be described, exported, edited in Python and rehashed") {
  const fs::path d = fs::temp_directory_path() / fmt::format("eit_builtin_{}", ::getpid());
  fs::create_directories(d);
  const std::string bin = EITSTREAM_BIN, m = (d / "m.h5").string();
  CHECK(sh(fmt::format("{} model info builtin", bin)) == 0);
  REQUIRE(sh(fmt::format("{} model export builtin -o {}", bin, m)) == 0);
  CHECK(sh(fmt::format("{} model info {}", bin, m)) == 0);
  if (sh("python3 -c 'import h5py'") != 0) {
    MESSAGE("skipped the edit/rehash part: python3 with h5py not found");
    fs::remove_all(d);
    return;
  }
  REQUIRE(sh(fmt::format("python3 -c \"import h5py; f=h5py.File('{}','r+'); f['H'][0,0]+=1.0\"",
                         m)) == 0);
  CHECK(sh(fmt::format("{} model info {}", bin, m)) != 0);  // the id no longer matches
  Subprocess rehash({bin, "model", "rehash", m});
  CHECK(rehash.wait(std::chrono::seconds(60)) == 0);
  const std::string out = rehash.out();
  CHECK(out.find("→") != std::string::npos);
  CHECK(out.find("unchanged") == std::string::npos);
  CHECK(sh(fmt::format("{} model info {}", bin, m)) == 0);
  fs::remove_all(d);
}
