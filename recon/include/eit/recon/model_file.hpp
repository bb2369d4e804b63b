#pragma once
// The Model file: one HDF5 file holding everything the streaming path needs (H, v_ref, the
// protocol that fixes the measurement order, the output geometry, the algorithm and its
// parameters) plus a content hash as the model's id. The layout is documented in
// docs/formats.md ("Model file (.h5)"); h5py and MATLAB's h5read read it without eitstream.
//
// Set-up only: these functions allocate, do file I/O and throw (std::runtime_error naming the
// file, dataset, shape found and shape expected). HDF5 is not assumed thread-safe: call them from
// one thread at a time.
#include <filesystem>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::recon {

inline constexpr int kModelFormatVersion = 1;

// The model's id: FNV-1a 64-bit over a canonical little-endian serialisation of H, v_ref,
// normalize, the protocol, the geometry, the algorithm and its parameters; 16 hex digits.
// Independent of model.id itself and of the HDF5 layout.
std::string model_content_hash(const Model& model);

// Checks that the model's parts agree (H columns = measurements, v_ref length, geometry size =
// H rows, indices in range); throws std::invalid_argument naming the field otherwise.
void validate_model(const Model& model, const std::string& what = "model");

// Validates, sets model.id = model_content_hash(model) and writes the file: into a temporary file
// beside it, renamed over `path` once whole (a failed write leaves an earlier file as it was).
void save_model(const std::filesystem::path& path, Model& model);  // empty parameters → "{}"

// Throws std::runtime_error naming `path` when the folder it is to be written in does not exist
// (a command checks before its slow steps).
void check_output_folder(const std::filesystem::path& path);

// Reads and validates a Model file. Throws when a dataset is missing or has the wrong shape,
// or when the stored model_id does not match the content (the file was changed after saving).
Model load_model(const std::filesystem::path& path);

// Like load_model, but accepts a file whose stored model_id no longer matches its content (a model
// edited in Python, say); `stored_id` receives the id written in the file ("" when none). The
// returned model's id is the content hash. For `eitstream model rehash`.
Model load_model_edited(const std::filesystem::path& path, std::string* stored_id);

}  // namespace eit::recon
