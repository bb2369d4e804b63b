#pragma once
// The one hardened MATLAB .mat reader (libmatio underneath, when built with it: EIT_HAVE_MATIO),
// used by recon's read_mat_variable (matrices to import) and acquisition's .mat recordings
// (frame matrices). libmatio trusts the lengths and dimensions in a file and allocates what they
// claim, so before libmatio sees a file it passes src/mat_v5_check.hpp: v5 or v7.3 only (any
// other file, MATLAB v4 among them, is refused); every v5 element, compressed ones inflated,
// fits in what encloses it, with its matrix headers of the spec's types and room for the cells
// and struct fields they claim; v7.3's MATLAB attributes hold what libmatio's fixed buffers take
// (src/mat73_check.hpp). A variable must claim no more bytes than the file can hold
// (uncompressed: the file's size; compressed: zlib's 1032:1 limit; at most 4 GiB); and what
// libmatio read must match what the header claimed. Set-up only: allocates; throws
// std::runtime_error naming the file (`name`), the variable, what was found and what was
// expected.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace eit::recon {

struct MatVariableInfo {
  std::string name;
  size_t rows = 0, cols = 0;  // of a 2-D variable (0 otherwise)
  int rank = 0;
  bool numeric = false;  // a 2-D numeric, non-logical matrix
  bool complex = false;
  bool compressed = false;
  size_t element_bytes = 0;
  size_t index = 0;  // its position among the file's variables: what read_mat_matrix reads
};

// A 2-D numeric variable as doubles in MATLAB's column-major order: element (r, c) at r + c·rows.
struct MatMatrix {
  size_t rows = 0, cols = 0;
  std::vector<double> re, im;  // im empty unless complex
};

// Every variable's header (at most 100,000), after the tag walk.
std::vector<MatVariableInfo> list_mat_variables(const std::filesystem::path& path,
                                                std::string_view name);

// Reads `var` (from list_mat_variables of the same file) after the size checks. It reads the
// variable at var.index, not the first of its name: names repeat in a damaged file, and an earlier
// namesake's unchecked size would become libmatio's allocation.
MatMatrix read_mat_matrix(const std::filesystem::path& path, const MatVariableInfo& var,
                          std::string_view name);

// "v (208×10 complex), h (1×1)" for messages.
std::string describe_mat_variables(const std::vector<MatVariableInfo>& vars);

// True when this build reads .mat files.
bool mat_reader_available() noexcept;

}  // namespace eit::recon
