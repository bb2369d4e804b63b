// The v7.3 pre-check (contract in mat73_check.hpp).
#include "mat73_check.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"
#include "mat73_cells.hpp"

namespace eit::recon {
namespace {

// MATLAB never writes more than a few dimensions; 32 is MATLAB's own limit.
constexpr hsize_t kMaxEmptyRank = 32;
constexpr const char* kOneValueAttributes[] = {"MATLAB_empty", "MATLAB_global", "MATLAB_int_decode",
                                               "MATLAB_sparse"};

struct Visit {
  std::string error;  // the first problem found; the walk stops there
};

std::string dims_text(const std::vector<hsize_t>& dims) {
  std::string s;
  for (hsize_t d : dims) s += fmt::format("{}{}", s.empty() ? "" : "×", d);
  return s.empty() ? "a scalar" : s;
}

// "" when `attribute` is absent or holds one value, else why not (libmatio reads it into one).
std::string check_one_value(hid_t object, const char* attribute, const std::string& path) {
  if (H5Aexists(object, attribute) <= 0) return {};
  const h5::Handle a(H5Aopen(object, attribute, H5P_DEFAULT), H5Aclose);
  const h5::Handle space(a.valid() ? H5Aget_space(a.get()) : H5I_INVALID_HID, H5Sclose);
  const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (n != 1)
    return fmt::format("attribute {} of '{}' holds {} values, expected 1", attribute, path, n);
  return {};
}

// libmatio reads MATLAB_class into a buffer of one string's length, and MATLAB_fields (a
// struct's field names) with its extent written into one integer (left unset for a scalar) and
// each value read as a variable-length sequence of bytes (hvl_t) whatever its own type is.
std::string check_names(hid_t object, const std::string& path) {
  if (std::string one = check_one_value(object, "MATLAB_class", path); !one.empty()) return one;
  if (H5Aexists(object, "MATLAB_fields") <= 0) return {};
  const h5::Handle a(H5Aopen(object, "MATLAB_fields", H5P_DEFAULT), H5Aclose);
  const h5::Handle space(a.valid() ? H5Aget_space(a.get()) : H5I_INVALID_HID, H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank != 1)  // a scalar left libmatio's count at 0 and it read one value into no room
    return fmt::format("attribute MATLAB_fields of '{}' has {} dimensions, expected 1", path, rank);
  const h5::Handle type(H5Aget_type(a.get()), H5Tclose);
  const h5::Handle base(type.valid() ? H5Tget_super(type.get()) : H5I_INVALID_HID, H5Tclose);
  if (H5Tget_class(type.get()) != H5T_VLEN || !base.valid() || H5Tget_size(base.get()) != 1)
    return fmt::format(
        "attribute MATLAB_fields of '{}' is not a list of variable-length character sequences",
        path);
  return {};
}

std::string check_object(hid_t object, const std::string& path, bool is_dataset) {
  if (std::string names = check_names(object, path); !names.empty()) return names;
  for (const char* attribute : kOneValueAttributes)
    if (std::string one = check_one_value(object, attribute, path); !one.empty()) return one;
  // A cell: libmatio follows its references while it lists the variables.
  if (is_dataset && is_mat73_cell(object))
    if (std::string cell = check_mat73_cell(object, path); !cell.empty()) return cell;
  if (!is_dataset || H5Aexists(object, "MATLAB_empty") <= 0) return {};
  const h5::Handle space(H5Dget_space(object), H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 0 || rank > static_cast<int>(kMaxEmptyRank))
    return fmt::format("dataset '{}' is marked MATLAB_empty but its rank is {}", path, rank);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  const hsize_t last = rank > 0 ? dims.back() : 1;
  if (n < 0 || static_cast<hsize_t>(n) != last || last > kMaxEmptyRank)
    return fmt::format(
        "dataset '{}' is marked MATLAB_empty, so it must hold the empty array's dimensions (one "
        "row of at most {} values), but it is {}",
        path, kMaxEmptyRank, dims_text(dims));
  return {};
}

template <typename Info>
herr_t visit_object(hid_t root, const char* name, const Info* info, void* data) {
  auto& visit = *static_cast<Visit*>(data);
  if (info->type != H5O_TYPE_DATASET && info->type != H5O_TYPE_GROUP) return 0;
  const h5::Handle object(H5Oopen(root, name, H5P_DEFAULT), H5Oclose);
  std::string path = "/";
  if (std::string_view(name) != ".") path += name;
  if (!object.valid()) {
    visit.error = fmt::format("cannot open '{}'", path);
    return 1;
  }
  visit.error = check_object(object.get(), path, info->type == H5O_TYPE_DATASET);
  return visit.error.empty() ? 0 : 1;
}

}  // namespace

void check_mat73_attributes(const std::filesystem::path& path, std::string_view name) {
  const h5::QuietErrors quiet;
  const h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid())
    throw std::runtime_error(
        fmt::format("{}: its header says MATLAB v7.3, but it is not an HDF5 file", name));
  Visit visit;
  // Named explicitly: what H5Ovisit means depends on the API level the library was built with.
#if H5_VERSION_GE(1, 12, 0)
  const herr_t walked =
      H5Ovisit3(file.get(), H5_INDEX_NAME, H5_ITER_NATIVE, &visit_object, &visit, H5O_INFO_BASIC);
#else
  const herr_t walked =
      H5Ovisit2(file.get(), H5_INDEX_NAME, H5_ITER_NATIVE, &visit_object, &visit, H5O_INFO_BASIC);
#endif
  if (!visit.error.empty()) throw std::runtime_error(fmt::format("{}: {}", name, visit.error));
  if (walked < 0)
    throw std::runtime_error(fmt::format("{}: cannot walk its HDF5 objects (damaged file)", name));
}

}  // namespace eit::recon
