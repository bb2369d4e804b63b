#pragma once
// The files `eitstream bench` writes at the end (--json, --csv, --svg, --frames-csv), checked
// before the first run: a benchmark of minutes must not end in "cannot open for writing" or
// replace a report someone keeps. An existing file is refused unless --force (as every command
// that writes files, existing_output.hpp); each path must be openable for writing (a new one is
// created and removed again here); no two options may name the same file. Throws CommandError
// naming the option and the path.
#include "bench_plan.hpp"

namespace eit::cli {

void check_bench_outputs(const BenchArgs& a);

}  // namespace eit::cli
