#pragma once
// The files `eitstream bench` writes at the end (--json, --csv, --svg, --frames-csv), checked
// before the first run: a benchmark of minutes must not end in "cannot open for writing". Each
// path must be openable for writing (an existing file is replaced at the end, as before; a new one
// is created and removed again here), and no two options may name the same file. Throws
// CommandError naming the option and the path.
#include "bench_plan.hpp"

namespace eit::cli {

void check_bench_outputs(const BenchArgs& a);

}  // namespace eit::cli
