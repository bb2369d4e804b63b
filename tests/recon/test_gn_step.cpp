// One Gauss–Newton step, real and complex (recon/src/gn_step*.cpp): an element no measurement
// sees makes the normal matrix singular at λ = 0, and each path refuses naming its matrix; a step
// that succeeds adds to both halves of the time split (forming the system, solving it).
#include <doctest/doctest.h>

#include <complex>
#include <stdexcept>

#include <Eigen/Dense>

#include "../../recon/src/gn_step.hpp"

using namespace eit::recon;
using detail::GnStepTimes;

namespace {

// Jᵀ (n_elems × n_meas) with element `blind` seen by no measurement (a zero row).
Eigen::MatrixXd blind_jt(Eigen::Index n_elems, Eigen::Index n_meas, Eigen::Index blind) {
  Eigen::MatrixXd jt = Eigen::MatrixXd::Random(n_elems, n_meas);
  jt.row(blind).setZero();
  return jt;
}

GnOptions options(GnOptions::Prior prior) {
  GnOptions o;
  o.prior = prior;
  o.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("gn step: a singular normal matrix is refused, naming the matrix of the path taken") {
  const Mesh mesh;  // read only by the laplacian prior
  GnStepTimes times;
  // More measurements than elements: the n_elems-sized JᵀJ + λR (kotre: R is 0 where J is).
  const Eigen::MatrixXd wide = blind_jt(4, 9, 2);
  const Eigen::VectorXd r9 = Eigen::VectorXd::Random(9);
  CHECK_THROWS_WITH_AS(
      detail::gn_step(wide, r9, 0.0, options(GnOptions::Prior::kKotre), mesh, times),
      "gn: JᵀJ + λR is not positive definite", std::runtime_error);
  const Eigen::MatrixXcd wide_c = wide.cast<std::complex<double>>();
  CHECK_THROWS_WITH_AS(detail::gn_step_complex(wide_c, r9.cast<std::complex<double>>(), 0.0,
                                               options(GnOptions::Prior::kKotre), mesh, times),
                       "gn: JᴴJ + λR is not positive definite", std::runtime_error);
  // Fewer measurements than elements, one of them all zero: the n_meas-sized J R⁻¹ Jᵀ + λI.
  Eigen::MatrixXd tall = Eigen::MatrixXd::Random(9, 4);
  tall.col(1).setZero();
  const Eigen::VectorXd r4 = Eigen::VectorXd::Random(4);
  CHECK_THROWS_WITH_AS(
      detail::gn_step(tall, r4, 0.0, options(GnOptions::Prior::kTikhonov), mesh, times),
      "gn: J R⁻¹ Jᵀ + λI is not positive definite", std::runtime_error);
  CHECK_THROWS_WITH_AS(
      detail::gn_step_complex(tall.cast<std::complex<double>>(), r4.cast<std::complex<double>>(),
                              0.0, options(GnOptions::Prior::kTikhonov), mesh, times),
      "gn: J R⁻¹ Jᴴ + λI is not positive definite", std::runtime_error);
}

TEST_CASE("gn step: each step adds to the time of forming the system and of solving it") {
  const Mesh mesh;
  const GnOptions o = options(GnOptions::Prior::kKotre);
  for (auto [n_elems, n_meas] : {std::pair{120, 60}, std::pair{60, 120}}) {
    CAPTURE(n_elems);
    const Eigen::MatrixXd jt = Eigen::MatrixXd::Random(n_elems, n_meas);
    const Eigen::VectorXd r = Eigen::VectorXd::Random(n_meas);
    GnStepTimes real, complex;
    detail::gn_step(jt, r, 0.1, o, mesh, real);
    detail::gn_step_complex(jt.cast<std::complex<double>>(), r.cast<std::complex<double>>(), 0.1, o,
                            mesh, complex);
    for (const GnStepTimes* t : {&real, &complex}) {
      CHECK(t->system > 0);
      CHECK(t->solve > 0);
    }
    const GnStepTimes first = real;
    detail::gn_step(jt, r, 0.1, o, mesh, real);
    CHECK(real.system > first.system);
    CHECK(real.solve > first.solve);
  }
}
