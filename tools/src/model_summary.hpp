#pragma once
// Human-readable description of a Model for `eitstream model info|build|import`.
#include <cstdio>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::cli {

// Shape, algorithm, parameters, protocol, geometry, id and statistics of H, to `out`.
void print_model_summary(std::FILE* out, const recon::Model& model, const std::string& file);

}  // namespace eit::cli
