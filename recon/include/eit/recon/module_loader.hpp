#pragma once
// load_module(): the one dlopen() search-and-load for eitstream's optional modules (the Gmsh
// mesher libeit_gmsh.so, the CUDA backend libeit_gpu.so), so that a process maps them only when
// it needs them. Where `file` is looked for, in order:
//   $<env_var> (a file; when set, the only place looked at),
//   next to the executable, <exe dir>/../lib/eitstream/, each of extra_dirs,
//   the dynamic loader's own search path (LD_LIBRARY_PATH, ld.so.cache).
// A module is loaded RTLD_NOW | RTLD_LOCAL and never closed.
//
// Set-up only (any thread; the caller keeps the result, typically in a function-local static).
// Never throws for a missing or broken module: the result says why.
#include <string>
#include <vector>

namespace eit::recon {

struct LoadedModule {
  void* handle = nullptr;  // dlopen() handle, null when not loaded
  std::string path;        // where it was loaded from (or the file that failed to load)
  bool found = false;      // a file was found (it may still have failed to load: error says why)
  // Why handle is null: "<file> not found (looked in …)" or "<path> did not load: <dlerror>".
  std::string error;
};

LoadedModule load_module(const std::string& file, const char* env_var,
                         const std::vector<std::string>& extra_dirs = {});

// dlsym() in a loaded module; null when absent.
void* module_symbol(const LoadedModule& module, const char* name) noexcept;

}  // namespace eit::recon
