#pragma once
// The visible skip of a test that needs a generated mesh in a build without Gmsh.
#include <string_view>

#include "eit/recon/mesh_generator.hpp"
#include "test_data.hpp"

namespace eit::test {

// True (after printing "SKIPPED: <what>: built without Gmsh") when no mesh can be generated.
inline bool skip_without_gmsh(std::string_view what) {
  if (recon::mesh_generator_available()) return false;
  report_skip(what, "built without Gmsh");
  return true;
}

}  // namespace eit::test
