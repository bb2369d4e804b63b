#pragma once
// Checks a MATLAB v7.3 (HDF5) file for what libmatio 1.5.23 (Debian 12's) would read into
// fixed-size buffers without checking: the attributes MATLAB_empty, MATLAB_global,
// MATLAB_int_decode and MATLAB_sparse, each read as one integer, must hold one value; and a
// dataset marked MATLAB_empty holds its dimensions vector, read into a buffer of its last
// dimension's length, so it must be one row of at most 32 values. MATLAB_class must hold one
// string (it is read into one string's buffer); MATLAB_fields, when present, must be a 1-D (not
// scalar) list of variable-length byte sequences (libmatio writes its extent into one integer and
// reads it as such whatever its type). A forged file broke each rule into a heap or stack overflow
// (later libmatio bounds the reads). Cells (datasets of object references) must pass
// check_mat73_cell (mat73_cells.hpp). Private to eit_recon; throws std::runtime_error naming the
// file (`name`), the object and what was found.
#include <filesystem>
#include <string_view>

namespace eit::recon {

void check_mat73_attributes(const std::filesystem::path& path, std::string_view name);

}  // namespace eit::recon
