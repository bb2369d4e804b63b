#pragma once
// Tokenising parser for ASCII Gmsh .msh 2.2 and 4.1 (private to eit_recon): the raw nodes,
// elements and physical groups, before they become a Mesh (msh_reader.cpp).
#include <cctype>
#include <cstddef>
#include <optional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace eit::recon::msh {

struct RawElement {
  int type = 0;                    // Gmsh element type (1 line, 2 triangle, 15 point, …)
  std::vector<int> physical;       // physical group tags of the element
  std::vector<std::size_t> nodes;  // node tags
  int line = 0;                    // where it was read, for messages
};

struct RawMsh {
  double version = 0;
  std::map<std::size_t, std::pair<double, double>> nodes;  // tag → (x, y)
  std::vector<RawElement> elements;
  std::map<std::pair<int, int>, std::string> physical_names;  // (dim, tag) → name
};

// Throws std::runtime_error "<file>:<line>: <section>: <field> '<token>': expected …".
RawMsh parse_msh(const std::string& file);

// Nodes per element for the Gmsh element types we may meet; 0 when unknown.
int nodes_per_element(int type);

// Physical group names "electrode1", "elec_2", "el-3", "E4" (case-insensitive) → 1, 2, 3, 4;
// anything else → nullopt. Inline: the Gmsh module's tetrahedral reader uses it too.
inline std::optional<int> electrode_number(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t i = 0;
  for (const char* prefix : {"electrode", "elec", "el", "e"})
    if (lower.starts_with(prefix)) {
      i = std::string(prefix).size();
      break;
    }
  if (i == 0) return std::nullopt;
  if (i < lower.size() && (lower[i] == '_' || lower[i] == '-' || lower[i] == ' ')) ++i;
  if (i == lower.size()) return std::nullopt;
  int n = 0;
  for (; i < lower.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(lower[i]))) return std::nullopt;
    n = n * 10 + (lower[i] - '0');
  }
  return n;
}

}  // namespace eit::recon::msh
