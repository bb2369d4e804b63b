#pragma once
// `eitstream model import`: a reconstruction matrix from .npy or MATLAB .mat (e.g. EIDORS' GREIT)
// turned into a Model file, on a pixel grid or a mesh.
#include <CLI/CLI.hpp>

namespace eit::cli {

// Adds the `import` subcommand to `eitstream model`.
void attach_model_import(CLI::App* model);

}  // namespace eit::cli
