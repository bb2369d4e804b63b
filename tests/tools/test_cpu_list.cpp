// The --cpus list that `eitstream run` and `eitstream bench` share (tools/src/cpu_list.hpp):
// CPU numbers in 0..(online − 1), anything else refused naming the option, the list and the item.
#include <doctest/doctest.h>

#include <unistd.h>

#include <string>

#include <fmt/format.h>

#include "../../tools/src/command_registry.hpp"
#include "../../tools/src/cpu_list.hpp"

using eit::cli::CommandError;
using eit::cli::parse_cpu_list;

TEST_CASE("a --cpus list gives its CPU numbers in order, the empty list none") {
  CHECK(parse_cpu_list("").empty());
  CHECK(parse_cpu_list("0") == std::vector<int>{0});
  CHECK(parse_cpu_list("0,0") == std::vector<int>{0, 0});  // sharing a CPU is allowed
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (n >= 2) CHECK(parse_cpu_list(fmt::format("{},0", n - 1)) == std::vector<int>{int(n - 1), 0});
}

TEST_CASE("a --cpus item that is not an online CPU number is refused naming it") {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  const std::string range = fmt::format("in 0..{}", n - 1);
  for (const std::string bad : {"x", "-1", "1.5", "0,,1", "0;1", "2a", "auto"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_cpu_list(bad), CommandError);
  }
  CHECK_THROWS_WITH(parse_cpu_list(fmt::format("0,{}", n), "--cpus"),
                    fmt::format("--cpus '0,{}': '{}' is not a CPU number {}", n, n, range).c_str());
  CHECK_THROWS_WITH(parse_cpu_list("0,x", "--cpus"),
                    fmt::format("--cpus '0,x': 'x' is not a CPU number {}", range).c_str());
}
