#pragma once
// The contract between eit_recon's mesh_generator_loader.cpp and the Gmsh module libeit_gmsh.so
// (mesh_generator_gmsh.cpp), which are built from the same tree with the same compiler: one C
// symbol taking C++ types. It returns kGmshOk and fills *out, or another code with *error set
// (kGmshInvalidArgument: bad options, rethrown as std::invalid_argument; kGmshFailed: Gmsh or
// the mesh check failed, rethrown as std::runtime_error). Never throws.
#include <string>

#include "eit/recon/mesh.hpp"
#include "eit/recon/mesh_generator.hpp"

namespace eit::recon {

inline constexpr const char* kGmshModuleFile = "libeit_gmsh.so";
inline constexpr const char* kGmshModuleEntry = "eit_gmsh_generate_v1";
enum GmshStatus : int { kGmshOk = 0, kGmshInvalidArgument = 1, kGmshFailed = 2 };
using GmshGenerateFn = int (*)(const MeshOptions*, Mesh*, std::string*);

}  // namespace eit::recon
