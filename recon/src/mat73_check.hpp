#pragma once
// Checks a MATLAB v7.3 (HDF5) file for what libmatio 1.5.23 (Debian 12's) would read into
// fixed-size buffers without checking: the attributes MATLAB_empty, MATLAB_global,
// MATLAB_int_decode and MATLAB_sparse, each read as one integer, must hold one value; and a
// dataset marked MATLAB_empty holds its dimensions vector, read into a buffer of its last
// dimension's length, so it must be one row of at most 32 values. A forged file broke each rule
// into a heap or stack overflow (later libmatio bounds the reads). Private to eit_recon; throws
// std::runtime_error naming the file (`name`), the object and what was found.
#include <filesystem>
#include <string_view>

namespace eit::recon {

void check_mat73_attributes(const std::filesystem::path& path, std::string_view name);

}  // namespace eit::recon
