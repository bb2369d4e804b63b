#pragma once
// Structure-aware HDF5 for the fuzz targets: the input bytes decide what a well-formed file holds
// at each place of a known layout (the valid value, nothing, or another type, shape or value),
// and libhdf5 writes it. The readers then see only files libhdf5 itself wrote, so the fuzzer
// explores our validation of their content instead of libhdf5 1.10.8's parsing of corrupted
// metadata, which hangs and crashes within seconds (docs/fuzzing.md) and is not ours to fix.
// One choice byte per place: 0 (also what an exhausted input gives) keeps the valid value.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"

namespace eit::fuzz {

namespace h5 = recon::h5;

// What a file holds at one place: a type, a shape (empty = scalar) and values.
struct H5Value {
  enum Type {
    kI8,
    kU8,
    kI16,
    kU16,
    kI32,
    kU32,
    kI64,
    kU64,
    kF32,
    kF64,
    kComplex,
    kFixedStr,
    kVarStr,
    kVlenBytes,
    kTypes
  };  // kVlenBytes: MATLAB_fields' char sequences
  Type type = kF64;
  std::vector<hsize_t> dims;
  std::vector<double> numbers;  // numeric types, one per element (complex: re, im pairs)
  std::string text;             // string types: every element holds it

  static H5Value integer(int64_t v, Type t = kI64) { return {t, {}, {double(v)}, {}}; }
  static H5Value real(double v) { return {kF64, {}, {v}, {}}; }
  static H5Value string(std::string s, Type t = kVarStr) { return {t, {}, {}, std::move(s)}; }
  static H5Value array(Type t, std::vector<hsize_t> dims, std::vector<double> v) {
    return {t, std::move(dims), std::move(v), {}};
  }
  bool is_string() const { return type == kFixedStr || type == kVarStr || type == kVlenBytes; }
  size_t count() const {
    size_t n = 1;
    for (hsize_t d : dims) n *= d;
    return n;
  }
};

class FuzzedHdf5 {
 public:
  // `words`: strings the layout gives meaning to (group kinds, orders, MATLAB classes), offered
  // to string places so the fuzzer does not have to guess them byte by byte.
  FuzzedHdf5(FuzzedDataProvider& in, std::vector<std::string> words)
      : in_(in), words_(std::move(words)) {}

  // Attribute `name` of loc: `valid`, absent, or changed as the input says. True when it wrote
  // `valid` unchanged.
  bool attribute(hid_t loc, const char* name, const H5Value& valid) {
    bool unwritten = false;
    H5Value v;
    if (!choose(valid, false, v, unwritten)) return false;
    const h5::Handle type = file_type(v);
    const h5::Handle space = dataspace(v, unwritten);
    const h5::Handle a(H5Acreate2(loc, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                       H5Aclose);
    if (a.valid() && !unwritten)
      write(v, [&](hid_t mem, const void* p) { return H5Awrite(a.get(), mem, p); });
    return last_valid_;
  }
  // As attribute(), absent unless the input asks for it. True when it is absent.
  bool optional_attribute(hid_t loc, const char* name, const H5Value& valid) {
    return !in_.ConsumeBool() || (attribute(loc, name, valid), false);
  }

  // Dataset `name` of loc: as attribute(), or also a group in its place, a chunked, deflated or
  // compact layout, or a shape of any extent with no values written (fill values: a few bytes
  // of file claiming gigabytes).
  bool dataset(hid_t loc, const char* name, const H5Value& valid) {
    bool unwritten = false;
    H5Value v;
    if (!choose(valid, true, v, unwritten)) return false;
    if (v.type == H5Value::kTypes) {  // a group where a dataset belongs
      h5::Handle(H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
      return false;
    }
    const h5::Handle type = file_type(v);
    const h5::Handle space = dataspace(v, unwritten);
    const h5::Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (!unwritten && v.count() > 0 && !v.dims.empty() && v.count() <= 64) {
      const int layout = in_.ConsumeIntegralInRange(0, 3);
      std::vector<hsize_t> chunk(v.dims.size(), 1);
      if (layout == 1 || layout == 2) H5Pset_chunk(plist.get(), int(chunk.size()), chunk.data());
      if (layout == 2) H5Pset_deflate(plist.get(), 1);
      if (layout == 3) H5Pset_layout(plist.get(), H5D_COMPACT);
    }
    const h5::Handle d(
        H5Dcreate2(loc, name, type.get(), space.get(), H5P_DEFAULT, plist.get(), H5P_DEFAULT),
        H5Dclose);
    if (d.valid() && !unwritten && v.count() > 0)
      write(v, [&](hid_t mem, const void* p) {
        return H5Dwrite(d.get(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, p);
      });
    return last_valid_;
  }

  // Group `name` to fill (an invalid handle when the input leaves it out or puts a scalar
  // dataset there instead).
  h5::Handle group(hid_t loc, const char* name) {
    const int choice = in_.ConsumeIntegral<uint8_t>() % 8;
    if (choice == 1) return {};
    if (choice == 2) {
      dataset(loc, name, H5Value::integer(0));
      return {};
    }
    return h5::Handle(H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  }

  FuzzedDataProvider& input() { return in_; }

 private:
  // The value to write, or false for "absent". unwritten: create it but write no values.
  bool choose(const H5Value& valid, bool is_dataset, H5Value& v, bool& unwritten) {
    v = valid;
    const int choice = in_.ConsumeIntegral<uint8_t>() % 9;
    last_valid_ = choice == 0;
    switch (choice) {
      case 0:
        return true;
      case 1:
        return false;
      case 2:  // same type and shape, other values
        fill_values(v);
        return true;
      case 3:  // same values, another type
        retype(v, pick_type());
        return true;
      case 4:  // same type, another shape
        v.dims = small_dims();
        fill_values(v);
        return true;
      case 5:  // type, shape and values from the input
        retype(v, pick_type());
        v.dims = small_dims();
        fill_values(v);
        return true;
      case 6:  // any extent (often the valid shape with one side huge), nothing written
               // (datasets); a null dataspace (attributes)
        v.dims = !is_dataset ? std::vector<hsize_t>{} : large_dims(valid.dims);
        unwritten = true;
        return true;
      case 7:  // one value at a boundary, or a meaningful word
        if (v.is_string()) {
          v.text = words_.empty()
                       ? ""
                       : words_[in_.ConsumeIntegralInRange<size_t>(0, words_.size() - 1)];
        } else if (!v.numbers.empty()) {
          const size_t at = in_.ConsumeIntegralInRange<size_t>(0, v.numbers.size() - 1);
          v.numbers[at] = boundary();
        }
        return true;
      default:  // a group in a dataset's place; for attributes, as case 5
        if (is_dataset) return v.type = H5Value::kTypes, true;
        retype(v, pick_type());
        v.dims = small_dims();
        fill_values(v);
        return true;
    }
  }

  H5Value::Type pick_type() {
    return H5Value::Type(in_.ConsumeIntegralInRange<int>(0, H5Value::kTypes - 1));
  }

  void retype(H5Value& v, H5Value::Type t) {
    const bool to_string =
        t == H5Value::kFixedStr || t == H5Value::kVarStr || t == H5Value::kVlenBytes;
    if (v.is_string() && !to_string)
      v.numbers.assign(v.count() * (t == H5Value::kComplex ? 2 : 1), std::atof(v.text.c_str()));
    else if (!v.is_string() && to_string)
      v.text = v.numbers.empty() ? "" : fmt::format("{}", v.numbers[0]);
    else if (t == H5Value::kComplex && v.type != H5Value::kComplex)
      v.numbers.resize(2 * v.count(), 0.0);
    else if (v.type == H5Value::kComplex && t != H5Value::kComplex)
      v.numbers.resize(v.count());
    v.type = t;
  }

  std::vector<hsize_t> small_dims() {
    std::vector<hsize_t> d(in_.ConsumeIntegralInRange(0, 3));
    for (auto& x : d) x = in_.ConsumeIntegralInRange(0, 9);
    return d;
  }
  std::vector<hsize_t> large_dims(std::vector<hsize_t> d) {
    const auto huge = [&] { return hsize_t{1} << in_.ConsumeIntegralInRange(10, 40); };
    if (!d.empty() && in_.ConsumeBool()) {
      d[in_.ConsumeIntegralInRange<size_t>(0, d.size() - 1)] = huge();
      return d;
    }
    d.resize(in_.ConsumeIntegralInRange(1, 3));
    for (auto& x : d) x = in_.ConsumeBool() ? in_.ConsumeIntegralInRange<hsize_t>(0, 1024) : huge();
    return d;
  }
  double boundary() {
    constexpr double kValues[] = {0.0,
                                  -1.0,
                                  1.0,
                                  2.0,
                                  3.0,
                                  1024.0,
                                  1025.0,
                                  2147483647.0,
                                  -2147483648.0,
                                  4294967296.0,
                                  4294967312.0,
                                  9.3e18,
                                  -9.3e18,
                                  1e308,
                                  -1e308,
                                  std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN()};
    return in_.PickValueInArray(kValues);
  }
  void fill_values(H5Value& v) {
    if (v.is_string()) {
      v.text = in_.ConsumeRandomLengthString(24);
      return;
    }
    v.numbers.resize(v.count() * (v.type == H5Value::kComplex ? 2 : 1));
    const bool floats =
        v.type == H5Value::kF32 || v.type == H5Value::kF64 || v.type == H5Value::kComplex;
    for (double& x : v.numbers)
      x = floats ? in_.ConsumeFloatingPointInRange(-1e6, 1e6)
                 : double(in_.ConsumeIntegralInRange<int64_t>(-70000, 70000));
  }

  static h5::Handle copy(hid_t t) { return h5::Handle(H5Tcopy(t), H5Tclose); }
  static h5::Handle file_type(const H5Value& v) {
    const hid_t kNumeric[] = {H5T_STD_I8LE,   H5T_STD_U8LE,  H5T_STD_I16LE, H5T_STD_U16LE,
                              H5T_STD_I32LE,  H5T_STD_U32LE, H5T_STD_I64LE, H5T_STD_U64LE,
                              H5T_IEEE_F32LE, H5T_IEEE_F64LE};
    if (v.type < H5Value::kComplex) return copy(kNumeric[v.type]);
    if (v.type == H5Value::kComplex) {  // MATLAB's complex: {real, imag}
      h5::Handle t(H5Tcreate(H5T_COMPOUND, 16), H5Tclose);
      H5Tinsert(t.get(), "real", 0, H5T_IEEE_F64LE);
      H5Tinsert(t.get(), "imag", 8, H5T_IEEE_F64LE);
      return t;
    }
    if (v.type == H5Value::kVlenBytes) return h5::Handle(H5Tvlen_create(H5T_NATIVE_CHAR), H5Tclose);
    h5::Handle t = copy(H5T_C_S1);
    H5Tset_size(t.get(),
                v.type == H5Value::kVarStr ? H5T_VARIABLE : std::max<size_t>(1, v.text.size()));
    return t;
  }
  static h5::Handle dataspace(const H5Value& v, bool unwritten) {
    if (unwritten && v.dims.empty()) return h5::Handle(H5Screate(H5S_NULL), H5Sclose);
    if (v.dims.empty()) return h5::Handle(H5Screate(H5S_SCALAR), H5Sclose);
    return h5::Handle(H5Screate_simple(int(v.dims.size()), v.dims.data(), nullptr), H5Sclose);
  }
  // Writes v's values through `put(memory type, buffer)`.
  template <typename Put>
  static void write(const H5Value& v, Put put) {
    const size_t n = v.count();
    if (v.type == H5Value::kVarStr) {
      std::vector<const char*> p(n, v.text.c_str());
      const h5::Handle t = file_type(v);
      put(t.get(), p.data());
    } else if (v.type == H5Value::kVlenBytes) {
      std::vector<hvl_t> p(n, hvl_t{v.text.size(), const_cast<char*>(v.text.data())});
      const h5::Handle t = file_type(v);
      put(t.get(), p.data());
    } else if (v.type == H5Value::kFixedStr) {
      const h5::Handle t = file_type(v);
      const size_t size = H5Tget_size(t.get());
      std::string buf;
      for (size_t i = 0; i < n; ++i) buf += v.text + std::string(size - v.text.size(), '\0');
      put(t.get(), buf.data());
    } else if (v.type == H5Value::kComplex) {
      const h5::Handle t = file_type(v);
      std::vector<double> buf(v.numbers);
      buf.resize(2 * n, 0.0);
      put(t.get(), buf.data());
    } else {
      std::vector<double> buf(v.numbers);
      buf.resize(n, 0.0);
      put(H5T_NATIVE_DOUBLE, buf.data());
    }
  }

  FuzzedDataProvider& in_;
  std::vector<std::string> words_;
  bool last_valid_ = false;  // the last choose() kept the valid value
};

// Aborts unless every HDF5 object is closed, naming those left open (to stderr, before the
// fuzzer's report): a reader that leaves one open keeps its file open, and the next input's
// H5Fcreate fails. `when` says which step left it.
inline void check_nothing_open(const char* when) {
  if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0) return;
  hid_t ids[16];
  const ssize_t n = H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_ALL, 16, ids);
  for (ssize_t i = 0; i < n; ++i) {
    char name[256] = "";
    H5Iget_name(ids[i], name, sizeof(name));
    fmt::print(stderr, "HDF5 object left open {}: '{}' (type {})\n", when, name,
               int(H5Iget_type(ids[i])));
  }
  std::abort();
}

}  // namespace eit::fuzz
