#include "eit/recon/module_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

namespace eit::recon {
namespace {

std::vector<std::string> candidates(const std::string& file, const char* env_var,
                                    const std::vector<std::string>& extra_dirs) {
  if (const char* env = env_var ? std::getenv(env_var) : nullptr; env && *env) return {env};
  std::vector<std::string> paths;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path() / file).string());
    paths.push_back((exe.parent_path() / ".." / "lib" / "eitstream" / file).string());
  }
  for (const auto& dir : extra_dirs) paths.push_back((std::filesystem::path(dir) / file).string());
  paths.push_back(file);  // bare name: the loader's search path
  return paths;
}

}  // namespace

LoadedModule load_module(const std::string& file, const char* env_var,
                         const std::vector<std::string>& extra_dirs) {
  LoadedModule m;
  std::string tried;
  const auto note = [&tried](const std::string& where) {
    tried += (tried.empty() ? "" : ", ") + where;
  };
  for (const std::string& path : candidates(file, env_var, extra_dirs)) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && !std::filesystem::exists(path)) {
      note(path);
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed
    if (!handle) {
      const std::string err = dlerror();
      // A bare name the loader cannot find is "not found"; anything else (the file is there but
      // one of its own libraries is missing, a wrong architecture) is a load failure to report.
      if (bare && err.find("cannot open shared object file") != std::string::npos &&
          err.find(file) != std::string::npos) {
        note("the loader's search path");
        continue;
      }
      m.path = path;
      m.found = true;
      m.error = fmt::format("{} did not load: {}", path, err);
      return m;
    }
    m.handle = handle;
    m.path = path;
    m.found = true;
    return m;
  }
  m.error = fmt::format("{} not found (looked in {})", file, tried);
  return m;
}

void* module_symbol(const LoadedModule& module, const char* name) noexcept {
  return module.handle ? dlsym(module.handle, name) : nullptr;
}

}  // namespace eit::recon
