#pragma once
// Human-readable description of a Model for `eitstream model info|build|import`.
#include <cstdio>
#include <string>

#include "eit/recon/model.hpp"
#include "eit/recon/model_header.hpp"

namespace eit::cli {

// Shape, algorithm, parameters, protocol, geometry, id and statistics of H, to `out`.
void print_model_summary(std::FILE* out, const recon::Model& model, const std::string& file);
// The same from a file's header (H not read): statistics as stored at save, the id unverified.
void print_model_header_summary(std::FILE* out, const recon::ModelHeader& header,
                                const std::string& file);

}  // namespace eit::cli
