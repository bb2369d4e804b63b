#pragma once
// The CHOLMOD module (cholmod_module.hpp), loaded once on first use with load_module()
// (module_loader.hpp): $EIT_CHOLMOD_MODULE (a file; only there when set), next to the
// executable, <exe dir>/../lib/eitstream/, the build tree, the loader's search path.
// Thread-safe (function-local static).
#include <string>

#include "cholmod_module.hpp"

namespace eit::recon::detail {

struct CholmodModule {
  CholmodFactorFn factor = nullptr;
  CholmodSolveFn solve = nullptr;
  CholmodFreeFn free = nullptr;
  std::string why;  // why the functions are null
};

const CholmodModule& cholmod_module();

}  // namespace eit::recon::detail
