#pragma once
// After a gn model's reconstruction: diverged frames, iterations, and how the recording's cold
// frames fit the model's homogeneous voltages, with a warning that names the likely cause when
// they do not match (pipeline/gn_reconstructor.hpp, GnFrameCounts).
#include <cstdio>

#include "eit/pipeline/reconstructor.hpp"

namespace eit::cli {

// Prints nothing unless `reconstructor` is a GnReconstructor. `out`: the summary line; warnings
// go to stderr.
void print_gn_summary(std::FILE* out, const pipeline::Reconstructor& reconstructor);

}  // namespace eit::cli
