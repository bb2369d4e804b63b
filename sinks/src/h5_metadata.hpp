#pragma once
// Writes the fixed parts of a recording file (attributes, the model's geometry and protocol) in
// the Model file's own layout (docs/formats.md), so one reader serves both. Set-up only: throws
// std::runtime_error naming the file and the object. Private to eit_sinks.
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "eit/recon/model.hpp"

namespace eit::sinks::detail::h5meta {

void attr(hid_t loc, const char* name, const std::string& value, const std::string& file);
void attr(hid_t loc, const char* name, int64_t value, const std::string& file);
void attr(hid_t loc, const char* name, double value, const std::string& file);

// A fixed dataset (row-major dims) of float64 / int32 / uint8.
void dataset(hid_t loc, const char* name, const double* data, std::vector<hsize_t> dims,
             const std::string& file);
void dataset(hid_t loc, const char* name, const int32_t* data, std::vector<hsize_t> dims,
             const std::string& file);
void dataset(hid_t loc, const char* name, const uint8_t* data, std::vector<hsize_t> dims,
             const std::string& file);

// /geometry (kind grid: nx ny x0 y0 dx dy + mask; kind mesh: nodes, elements, electrode_nodes,
// output_on) and /protocol (drives, measurements and the option attributes).
void write_geometry(hid_t root, const recon::Model& model, const std::string& file);
void write_protocol(hid_t root, const recon::Protocol& protocol, const std::string& file);

}  // namespace eit::sinks::detail::h5meta
