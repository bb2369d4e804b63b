#pragma once
// Checks one MATLAB v7.3 cell (an HDF5 dataset of object references, its elements kept in
// /#refs#) for what libmatio 1.5.23 follows without checking while it lists a file's variables:
// it allocates one pointer per element before reading any, dereferences each reference and
// reads what it points at (a referenced group as a struct: its members), cells within cells
// recursively. So a cell must hold object references, be at least 2-D (MATLAB writes every
// array so; a scalar cell left its element's dataset open in libmatio), hold no more elements
// than its file could (1032 × the file's bytes, as hdf5_io), every reference must lead to a
// dataset or group, and nothing reached through it may lead back to itself or to an object on
// the way there (libmatio would follow the loop without end). Used by check_mat73_attributes;
// private to eit_recon.
#include <hdf5.h>

#include <string>

namespace eit::recon {

// True for a dataset libmatio reads as a cell: object references, or MATLAB_class "cell" (it
// then reads whatever the dataset holds as references, one pointer allocated per value).
bool is_mat73_cell(hid_t dataset);

// "" when the cell dataset `cell` (named `path` in messages) is safe to hand to libmatio,
// else what is wrong with it.
std::string check_mat73_cell(hid_t cell, const std::string& path);

}  // namespace eit::recon
