#pragma once
// `eitstream model build`: mesh → forward model → Jacobian → reconstruction matrix → Model file.
#include <CLI/CLI.hpp>

namespace eit::cli {

// Adds the `build` subcommand to `eitstream model`.
void attach_model_build(CLI::App* model);

}  // namespace eit::cli
