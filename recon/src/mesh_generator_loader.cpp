// generate_mesh() and mesh_generator_available() in a build with Gmsh: Gmsh lives in the module
// libeit_gmsh.so, loaded with load_module() (module_loader.hpp) on the first call, so a process
// that never meshes never maps Gmsh, OpenCASCADE or FLTK (eitstream --version starts in
// milliseconds). Where the module is looked for: $EIT_GMSH_MODULE (a file; only there when set),
// next to the executable, <exe dir>/../lib/eitstream/, the build tree (EIT_GMSH_MODULE_DIR), the
// loader's search path.
// Thread-safe: the module is loaded once (function-local static), calls are serialised inside.
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_generator_3d.hpp"
#include "eit/recon/mesh_quality.hpp"
#include "eit/recon/module_loader.hpp"
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

GmshModule load() {
  std::vector<std::string> extra_dirs;
#ifdef EIT_GMSH_MODULE_DIR
  extra_dirs.push_back(EIT_GMSH_MODULE_DIR);  // the build tree
#endif
  const LoadedModule loaded = load_module(kGmshModuleFile, "EIT_GMSH_MODULE", extra_dirs);
  GmshModule m;
  if (!loaded.handle) {
    m.why = loaded.error;
    return m;
  }
  m.generate = reinterpret_cast<GmshGenerateFn>(module_symbol(loaded, kGmshModuleEntry));
  m.generate_3d = reinterpret_cast<GmshGenerate3dFn>(module_symbol(loaded, kGmshModuleEntry3d));
  m.read_3d = reinterpret_cast<GmshRead3dFn>(module_symbol(loaded, kGmshModuleEntryRead3d));
  if (!m.generate || !m.generate_3d || !m.read_3d)
    m.why = fmt::format("{} lacks {}, {} or {}", loaded.path, kGmshModuleEntry,
                        kGmshModuleEntry3d, kGmshModuleEntryRead3d);
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
  Mesh mesh = call_module(module().generate, options, module().why);
  require_mesh_quality(mesh, options.h0, "generated mesh");
  return mesh;
}

Mesh generate_mesh_3d(const Mesh3dOptions& options) {
  Mesh mesh = call_module(module().generate_3d, options, module().why);
  require_mesh_quality(mesh, options.h0, "generated 3-D mesh");
  return mesh;
}

Mesh read_msh_tetrahedra(const std::filesystem::path& path) {
  return call_module(module().read_3d, path, module().why);
}

}  // namespace eit::recon
