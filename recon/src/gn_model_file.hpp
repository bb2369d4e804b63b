#pragma once
// Internal: the /gn group of a Model file (layout in docs/formats.md). Throw naming file and field.
#include <string>

#include "eit/recon/hdf5_io.hpp"
#include "eit/recon/model.hpp"

namespace eit::recon::detail {

void validate_gn_model(const Model& model, const std::string& what);
void write_gn(hid_t root, const Model& model, const std::string& file);
// Reads /gn; the mesh's nodes, elements and electrodes come from the already read geometry.
GnSetup read_gn(hid_t root, const MeshGeometry& geometry, const std::string& file);

}  // namespace eit::recon::detail
