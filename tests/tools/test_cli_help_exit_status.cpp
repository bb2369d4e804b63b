// Every command's --help lists its exit statuses, signals included (docs/operations.md, section
// 4, says the same). Before, `view --help` listed none, `worker` and `emulate` said only that a
// signal gives 0 (a signal while they connect or load ends them with 128 + the signal), and
// reconstruct, indices, bench, keygen and model listed none.
#include <doctest/doctest.h>

#include <string>

#include "cli_run.hpp"

using eit::test::contains;
using eit::test::run_eitstream;

TEST_CASE("every command's help lists its exit statuses and what a signal gives") {
  for (const char* command :
       {"run", "listen", "view", "worker", "emulate", "bench", "reconstruct", "indices", "keygen",
        "model", "model build", "model info", "model export", "model rehash", "model import"}) {
    CAPTURE(command);
    const auto help = run_eitstream(std::string(command) + " --help");
    CAPTURE(help.output);
    CHECK(help.code == 0);
    CHECK(contains(help.output, "Exit status: 0 "));
    CHECK(contains(help.output, "; 1 "));
    CHECK(contains(help.output, "2 a command line that does not parse"));
    CHECK(contains(help.output, "128 + the signal"));
  }
}

TEST_CASE("the help of the commands that stop on a signal says when a signal still ends them") {
  const auto view = run_eitstream("view --help").output;
  CHECK(contains(view, "Exit status: 0 at the end of --duration or after SIGINT/SIGTERM"));
  CHECK(contains(view, "off loopback without --insecure"));
  const auto worker = run_eitstream("worker --help").output;
  CHECK(contains(worker, "A signal while it connects"));
  const auto emulate = run_eitstream("emulate --help").output;
  CHECK(contains(emulate, "no receiver within --wait-s"));
  CHECK(contains(emulate, "A signal before it waits for a receiver"));
  const auto run = run_eitstream("run --help").output;
  CHECK(contains(run, "When several apply: 3, then 5, 6, 4."));
}
