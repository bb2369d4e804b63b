#pragma once
// Tokenising parser for ASCII Gmsh .msh 2.2 and 4.1 (private to eit_recon): the raw nodes,
// elements and physical groups, before they become a Mesh (msh_reader.cpp).
#include <cstddef>
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

}  // namespace eit::recon::msh
