#pragma once
// Internal: Gmsh's process-wide state, shared by the 2-D and 3-D generators. Initialised once on
// first use (silent: General.Terminal = 0), finalised at exit; every use holds mutex().
#include <gmsh.h>

#include <mutex>

namespace eit::recon::detail {

class GmshSession {
 public:
  static GmshSession& instance() {
    static GmshSession session;
    return session;
  }
  std::mutex& mutex() { return mutex_; }

 private:
  GmshSession() {
    gmsh::initialize(0, nullptr, /*readConfigFiles=*/false);
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::option::setNumber("General.Verbosity", 0);
  }
  ~GmshSession() { gmsh::finalize(); }
  std::mutex mutex_;
};

}  // namespace eit::recon::detail
