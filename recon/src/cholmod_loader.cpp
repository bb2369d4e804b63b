#include "cholmod_loader.hpp"

#include <vector>

#include <fmt/format.h>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/module_loader.hpp"

namespace eit::recon {
namespace detail {
namespace {

CholmodModule load() {
  std::vector<std::string> extra_dirs;
#ifdef EIT_CHOLMOD_MODULE_DIR
  extra_dirs.push_back(EIT_CHOLMOD_MODULE_DIR);  // the build tree
#endif
  const LoadedModule loaded = load_module(kCholmodModuleFile, "EIT_CHOLMOD_MODULE", extra_dirs);
  CholmodModule m;
  if (!loaded.handle) {
    m.why = loaded.error;
    return m;
  }
  m.factor = reinterpret_cast<CholmodFactorFn>(module_symbol(loaded, kCholmodFactorEntry));
  m.solve = reinterpret_cast<CholmodSolveFn>(module_symbol(loaded, kCholmodSolveEntry));
  m.free = reinterpret_cast<CholmodFreeFn>(module_symbol(loaded, kCholmodFreeEntry));
  if (!m.factor || !m.solve || !m.free) {
    m.why = fmt::format("{} lacks {}, {} or {}", loaded.path, kCholmodFactorEntry,
                        kCholmodSolveEntry, kCholmodFreeEntry);
    m.factor = nullptr;
  }
  return m;
}

}  // namespace

const CholmodModule& cholmod_module() {
  static const CholmodModule m = load();
  return m;
}

}  // namespace detail

bool cholmod_available() noexcept {
  try {
    return detail::cholmod_module().factor != nullptr;
  } catch (...) {
    return false;
  }
}

}  // namespace eit::recon
