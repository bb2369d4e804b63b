// A replay's set-up warning (here a CSV's header row) is said once at the start, on stderr, and
// once in the final summary's `warning:` lines, as docs/operations.md (section 5) says. Before,
// the replay also reported it as the source's last problem, so every status line repeated it and
// the summary said it a second time as `source: last problem:`.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <fmt/format.h>

#include "cli_run.hpp"

using eit::test::contains;
using eit::test::run_eitstream;

namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a replay's set-up warning is said once at the start and once in the summary") {
  const auto dir = eit::test::fresh_work_dir("replay_warning");
  const auto csv = dir / "headed.csv";
  {
    std::ofstream f(csv);
    f << "electrode pairs\n";  // a header row: skipped, with a warning
    for (int row = 0; row < 40; ++row) {
      for (int i = 0; i < 208; ++i) f << fmt::format("{}{}", i ? "," : "", 1.0 + 0.001 * (row + i));
      f << "\n";
    }
  }
  // 40 frames at 40 frames/s: a second, two status lines.
  const auto r = run_eitstream(fmt::format(
      "run --source '{}' --fps 40 --endpoint 'tcp://127.0.0.1:*' --backend cpu", csv.string()));
  CAPTURE(r.output);
  CHECK(r.code == 0);
  REQUIRE(contains(r.output, " frames/s | latency"));  // a status line was printed
  const std::string warning = "headed.csv: first row is a header, skipped";
  CHECK(contains(r.output, "eitstream: warning: " + warning + "\n"));
  CHECK(contains(r.output, "\nwarning: " + warning + "\n"));
  CHECK(count_of(r.output, warning) == 2);
  CHECK_FALSE(contains(r.output, "last problem"));
  std::filesystem::remove_all(dir);
}
