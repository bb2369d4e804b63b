#pragma once
// The protocol options of `eitstream model build|import` (electrodes, drive distance, measuring
// step, order, several rings and their pattern), turned into a recon::Protocol and recorded in
// the model's parameters.
#include <string>

#include <CLI/CLI.hpp>

#include "eit/recon/mesh.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::cli {

struct ProtocolArgs {
  recon::ProtocolOptions options;
  std::string order = "std", pattern = "all";
  int exclude_next = 0, n_rings = 1;
  CLI::Option* electrodes = nullptr;

  void add(CLI::App* cmd);
  // The mesh's electrodes fix N for imported and generated meshes; an explicit --electrodes must
  // agree (std::invalid_argument naming both).
  int electrodes_for(const recon::Mesh& mesh) const;
  recon::Protocol make(int n_electrodes, int rings = 1);
  // Recorded in the model's parameters (the tables themselves are in /protocol): empty for the
  // single-ring default, else `"protocol": {"pattern": …, "n_rings": …, "exclude_next": …}`.
  std::string json() const;
};

}  // namespace eit::cli
