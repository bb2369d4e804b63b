// generate_mesh() and mesh_generator_available() in a build with Gmsh: Gmsh lives in the module
// libeit_gmsh.so, loaded with dlopen() on the first call, so a process that never meshes never
// maps Gmsh, OpenCASCADE or FLTK (eitstream --version starts in milliseconds). Where the module is
// looked for: $EIT_GMSH_MODULE (a file; only there when set), next to the executable,
// <exe dir>/../lib/eitstream/, the build tree (EIT_GMSH_MODULE_DIR), the loader's search path.
// Thread-safe: the module is loaded once (function-local static), calls are serialised inside.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/msh_reader.hpp"
#include "mesh_generator_module.hpp"

namespace eit::recon {
namespace {

struct GmshModule {
  GmshGenerateFn generate = nullptr;
  GmshGenerate3dFn generate_3d = nullptr;
  GmshRead3dFn read_3d = nullptr;
  std::string why;  // why generate is null
};

std::vector<std::string> candidates() {
  if (const char* env = std::getenv("EIT_GMSH_MODULE"); env && *env) return {env};
  std::vector<std::string> paths;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path() / kGmshModuleFile).string());
    paths.push_back((exe.parent_path() / ".." / "lib" / "eitstream" / kGmshModuleFile).string());
  }
#ifdef EIT_GMSH_MODULE_DIR
  paths.push_back((std::filesystem::path(EIT_GMSH_MODULE_DIR) / kGmshModuleFile).string());
#endif
  paths.push_back(kGmshModuleFile);
  return paths;
}

GmshModule load() {
  GmshModule m;
  std::string tried;
  for (const std::string& path : candidates()) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && !std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed
    if (!handle) {
      const std::string err = dlerror();
      if (bare) {
        tried += (tried.empty() ? "" : ", ") + std::string("the loader's search path");
        continue;
      }
      m.why = fmt::format("{} did not load: {}", path, err);
      return m;
    }
    m.generate = reinterpret_cast<GmshGenerateFn>(dlsym(handle, kGmshModuleEntry));
    m.generate_3d = reinterpret_cast<GmshGenerate3dFn>(dlsym(handle, kGmshModuleEntry3d));
    m.read_3d = reinterpret_cast<GmshRead3dFn>(dlsym(handle, kGmshModuleEntryRead3d));
    if (!m.generate || !m.generate_3d || !m.read_3d)
      m.why = fmt::format("{} lacks {}, {} or {}", path, kGmshModuleEntry, kGmshModuleEntry3d,
                          kGmshModuleEntryRead3d);
    return m;
  }
  m.why = fmt::format("{} not found (looked in {})", kGmshModuleFile, tried);
  return m;
}

const GmshModule& module() {
  static const GmshModule m = load();
  return m;
}

}  // namespace

bool mesh_generator_available() noexcept {
  try {
    return module().generate != nullptr;
  } catch (...) {
    return false;
  }
}

namespace {

// Calls one of the module's generators, turning its status back into the exception it caught.
template <typename Fn, typename Options>
Mesh call_module(Fn generate, const Options& options, const std::string& why) {
  if (!generate)
    throw std::runtime_error(fmt::format(
        "mesh: the Gmsh module could not be loaded: {}; import a mesh instead (csv:DIR or "
        "msh:FILE)",
        why));
  Mesh mesh;
  std::string error;
  switch (generate(&options, &mesh, &error)) {
    case kGmshOk:
      return mesh;
    case kGmshInvalidArgument:
      throw std::invalid_argument(error);
    default:
      throw std::runtime_error(error);
  }
}

}  // namespace

Mesh generate_mesh(const MeshOptions& options) {
  return call_module(module().generate, options, module().why);
}

Mesh generate_mesh_3d(const Mesh3dOptions& options) {
  return call_module(module().generate_3d, options, module().why);
}

Mesh read_msh_tetrahedra(const std::filesystem::path& path) {
  return call_module(module().read_3d, path, module().why);
}

}  // namespace eit::recon
