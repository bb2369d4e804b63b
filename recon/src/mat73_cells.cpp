// The v7.3 cell check (contract in mat73_cells.hpp).
#include "mat73_cells.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"

namespace eit::recon {
namespace {

constexpr hsize_t kMaxInflation = 1032;  // as hdf5_io: deflate's largest ratio
constexpr int kMaxDepth = 64;            // cells and structs within each other
// Objects reached from one cell, counting each time it is reached: shared elements are
// reached again through every path, as libmatio reads them.
constexpr size_t kMaxVisits = 1000000;

struct Walk {
  hsize_t file_bytes = 0;
  std::vector<std::string> on_path;  // keys of the objects being walked through, outermost first
  std::vector<std::string> names;    // and their names, for messages
  size_t visits = 0;
};

// What identifies an object in its file (two names or references to one object give one key).
std::string object_key(hid_t object) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  if (H5Oget_info3(object, &info, H5O_INFO_BASIC) < 0) return {};
  return std::string(reinterpret_cast<const char*>(&info.token), sizeof(info.token));
#else
  H5O_info_t info;
  if (H5Oget_info2(object, &info, H5O_INFO_BASIC) < 0) return {};
  return std::string(reinterpret_cast<const char*>(&info.addr), sizeof(info.addr));
#endif
}

std::string object_name(hid_t object) {
  char name[256] = "";
  H5Iget_name(object, name, sizeof(name));
  return *name ? std::string(name) : std::string("(an object with no name)");
}

std::string walk(hid_t object, const std::string& path, Walk& w, int depth);

// The objects a cell's references point at, each walked in turn.
std::string walk_cell(hid_t cell, const std::string& path, Walk& w, int depth) {
  const h5::Handle space(H5Dget_space(cell), H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 2)
    return fmt::format("cell '{}' has {} dimensions, expected 2 or more (as MATLAB writes it)",
                       path, rank);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0 || static_cast<hsize_t>(n) > w.file_bytes * kMaxInflation / sizeof(hobj_ref_t))
    return fmt::format("cell '{}' claims {} elements, more than the {}-byte file can hold", path, n,
                       w.file_bytes);
  const h5::Handle type(H5Dget_type(cell), H5Tclose);
  if (H5Tequal(type.get(), H5T_STD_REF_OBJ) <= 0)  // libmatio reads them as such all the same
    return fmt::format("cell '{}' does not hold object references", path);
  std::vector<hobj_ref_t> refs(static_cast<size_t>(n));
  if (n > 0 && H5Dread(cell, H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, refs.data()) < 0)
    return fmt::format("cannot read the references of cell '{}'", path);
  for (size_t k = 0; k < refs.size(); ++k) {
    // Address 0 is the superblock: a reference never written (HDF5's fill value) or a forged one.
    if (refs[k] == 0 || refs[k] == HADDR_UNDEF)
      return fmt::format("element {} of cell '{}' is a null reference", k + 1, path);
    const h5::Handle target(H5Rdereference2(cell, H5P_DEFAULT, H5R_OBJECT, &refs[k]), H5Oclose);
    if (!target.valid())
      return fmt::format("element {} of cell '{}' points at no object", k + 1, path);
    const H5I_type_t kind = H5Iget_type(target.get());
    if (kind != H5I_DATASET && kind != H5I_GROUP)
      return fmt::format("element {} of cell '{}' points at neither a dataset nor a group", k + 1,
                         path);
    if (std::string e = walk(target.get(), object_name(target.get()), w, depth + 1); !e.empty())
      return e;
  }
  return {};
}

// A group's members, as libmatio reads a referenced group (a struct): each walked in turn.
std::string walk_group(hid_t group, Walk& w, int depth) {
  H5G_info_t info{};
  if (H5Gget_info(group, &info) < 0) return {};
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char name[256] = "";
    if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof(name),
                           H5P_DEFAULT) < 0)
      continue;
    const h5::Handle member(H5Oopen(group, name, H5P_DEFAULT), H5Oclose);
    if (!member.valid()) continue;  // a dangling soft link: not an object libmatio can follow
    if (std::string e = walk(member.get(), object_name(member.get()), w, depth + 1); !e.empty())
      return e;
  }
  return {};
}

std::string walk(hid_t object, const std::string& path, Walk& w, int depth) {
  const std::string key = object_key(object);
  if (key.empty()) return fmt::format("cannot identify '{}'", path);
  const auto seen = std::find(w.on_path.begin(), w.on_path.end(), key);
  if (seen != w.on_path.end())
    return fmt::format("cell '{}' leads back to '{}' (through '{}'), which holds it",
                       w.names.front(), w.names[size_t(seen - w.on_path.begin())], path);
  if (depth > kMaxDepth)
    return fmt::format("cell '{}' nests cells and structs more than {} deep", w.names.front(),
                       kMaxDepth);
  if (++w.visits > kMaxVisits)
    return fmt::format("cell '{}' reaches more than {} objects", w.names.front(), kMaxVisits);
  w.on_path.push_back(key);
  w.names.push_back(path);
  std::string error;
  const H5I_type_t kind = H5Iget_type(object);
  if (kind == H5I_GROUP) {
    error = walk_group(object, w, depth);
  } else if (kind == H5I_DATASET && is_mat73_cell(object)) {
    error = walk_cell(object, path, w, depth);
  }
  w.on_path.pop_back();
  w.names.pop_back();
  return error;
}

}  // namespace

bool is_mat73_cell(hid_t dataset) {
  const h5::Handle type(H5Dget_type(dataset), H5Tclose);
  if (H5Tget_class(type.get()) == H5T_REFERENCE) return true;
  if (H5Aexists(dataset, "MATLAB_class") <= 0) return false;
  try {
    return h5::read_attr_string(dataset, "MATLAB_class", "") == "cell";
  } catch (const std::runtime_error&) {
    return false;  // not a string: libmatio knows no such class
  }
}

std::string check_mat73_cell(hid_t cell, const std::string& path) {
  Walk w;
  const h5::Handle file(H5Iget_file_id(cell), H5Fclose);
  if (!file.valid() || H5Fget_filesize(file.get(), &w.file_bytes) < 0)
    return fmt::format("cannot read the size of the file holding '{}'", path);
  return walk(cell, path, w, 0);
}

}  // namespace eit::recon
