#pragma once
// The contract between eit_recon's mesh_generator_loader.cpp and the Gmsh module libeit_gmsh.so
// (mesh_generator_gmsh.cpp, mesh_generator_3d_gmsh.cpp), which are built from the same tree with
// the same compiler: one C symbol per generator, taking C++ types. It returns kGmshOk and fills *out, or another code with *error set
// (kGmshInvalidArgument: bad options, rethrown as std::invalid_argument; kGmshFailed: Gmsh or
// the mesh check failed, rethrown as std::runtime_error). Never throws.
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "eit/recon/mesh.hpp"
#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"

namespace eit::recon {

inline constexpr const char* kGmshModuleFile = "libeit_gmsh.so";
inline constexpr const char* kGmshModuleEntry = "eit_gmsh_generate_v1";
enum GmshStatus : int { kGmshOk = 0, kGmshInvalidArgument = 1, kGmshFailed = 2 };
// v2: Mesh3dOptions gained `mesher` (a stale module of v1 is refused, not misread).
inline constexpr const char* kGmshModuleEntry3d = "eit_gmsh_generate_3d_v2";
using GmshGenerateFn = int (*)(const MeshOptions*, Mesh*, std::string*);
using GmshGenerate3dFn = int (*)(const Mesh3dOptions*, Mesh*, std::string*);
// Reading a tetrahedral .msh with Gmsh's own reader (msh_reader.hpp, read_msh_tetrahedra).
inline constexpr const char* kGmshModuleEntryRead3d = "eit_gmsh_read_tetrahedra_v1";
using GmshRead3dFn = int (*)(const std::filesystem::path*, Mesh*, std::string*);

// Inside the module: runs `generate`, turning its exceptions into the status codes above.
template <typename F>
int run_in_module(F&& generate, std::string* error) noexcept {
  try {
    generate();
    return kGmshOk;
  } catch (const std::invalid_argument& e) {
    *error = e.what();
    return kGmshInvalidArgument;
  } catch (const std::exception& e) {
    *error = e.what();
    return kGmshFailed;
  } catch (...) {
    *error = "mesh: Gmsh failed with an unknown exception";
    return kGmshFailed;
  }
}

}  // namespace eit::recon
