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

// The options both generators fix so the same inputs give the same mesh: silent, one thread,
// Frontal-Delaunay surfaces, a fixed tiny random factor, first-order elements, sizes up to h0 and
// none from curvature. Each generator then sets what it does differently (size sources,
// optimisation, the 3-D algorithm).
inline void set_deterministic_options(double h0) {
  gmsh::option::setNumber("General.Terminal", 0);
  gmsh::option::setNumber("General.NumThreads", 1);
  gmsh::option::setNumber("Mesh.MaxNumThreads1D", 1);
  gmsh::option::setNumber("Mesh.MaxNumThreads2D", 1);
  gmsh::option::setNumber("Mesh.MaxNumThreads3D", 1);
  gmsh::option::setNumber("Mesh.Algorithm", 6);  // Frontal-Delaunay
  gmsh::option::setNumber("Mesh.RandomFactor", 1e-9);
  gmsh::option::setNumber("Mesh.CharacteristicLengthMin", 0);
  gmsh::option::setNumber("Mesh.CharacteristicLengthMax", h0);
  gmsh::option::setNumber("Mesh.CharacteristicLengthFromCurvature", 0);
  gmsh::option::setNumber("Mesh.ElementOrder", 1);
}

}  // namespace eit::recon::detail
