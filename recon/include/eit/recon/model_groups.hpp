#pragma once
// The /protocol and /geometry groups of eitstream's HDF5 files (layout: docs/formats.md): one
// writer and one reader for the Model file, the image recordings (`run --record`, read back by
// `eitstream indices`) and the raw-frame recordings (the protocol). Set-up only: they allocate,
// do file I/O and throw std::runtime_error naming the file, dataset, shape found and expected.
#include <hdf5.h>

#include <string>
#include <variant>

#include "eit/recon/model.hpp"

namespace eit::recon {

using OutputGeometry = std::variant<MeshGeometry, GridGeometry>;

void write_protocol(hid_t root, const Protocol& protocol, const std::string& file);
void write_geometry(hid_t root, const Model& model, const std::string& file);

// /protocol's option attributes alone (what a raw-frame recording needs to map its frames), each
// bounded so that none wraps into a plausible int: n_electrodes 2–1024, steps within ±1024.
ProtocolOptions read_protocol_options(hid_t root, const std::string& file);
// /protocol, whose measurements dataset must have n_meas rows (H's columns); no validation beyond
// the shapes (validate_model checks the indices).
Protocol read_protocol(hid_t root, const std::string& file, hsize_t n_meas);
// /geometry: shapes checked (nodes n × 2 or 3, elements with one column more, mask of the grid's
// size); the values are not: validate_geometry() checks those.
OutputGeometry read_geometry(hid_t root, const std::string& file);

// That the geometry describes n_out outputs and its indices are in range: element nodes, electrode
// nodes (and, with n_electrodes ≥ 0, one per electrode), a grid of positive sizes whose mask
// matches. `outputs` says where n_out comes from in messages ("H has 780 rows"). Throws
// std::invalid_argument starting with `what`.
void validate_geometry(const OutputGeometry& geometry, size_t n_out, const std::string& outputs,
                       int n_electrodes, const std::string& what);

}  // namespace eit::recon
