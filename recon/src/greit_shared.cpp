// The GREIT pieces shared by the pixel (2-D) and voxel (3-D) builders (greit_shared.hpp).
#include "greit_shared.hpp"

#include <algorithm>
#include <stdexcept>

#include <Eigen/Cholesky>

namespace eit::recon::detail {

Eigen::MatrixXd greit_training_solve(const Eigen::MatrixXd& yt, double lambda, double p) {
  const Eigen::Index n_meas = yt.cols();
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n_meas, n_meas);
  m.selfadjointView<Eigen::Lower>().rankUpdate(yt.transpose());  // Y Yᵀ
  m.triangularView<Eigen::StrictlyUpper>() = m.transpose();
  m.diagonal() += lambda * m.diagonal().array().pow(p).matrix();
  const Eigen::LLT<Eigen::MatrixXd> llt(m);
  if (llt.info() != Eigen::Success)
    throw std::runtime_error("greit: Y Yᵀ + λ diag(Y Yᵀ)^p is not positive definite");
  Eigen::MatrixXd out(yt.rows(), n_meas);
  out.noalias() = yt * llt.solve(Eigen::MatrixXd::Identity(n_meas, n_meas));
  return out;
}

double greit_d_max(const Eigen::ArrayXXd& centres, const Eigen::ArrayXXd& points) {
  const Eigen::Index dim = points.cols();
  const Eigen::ArrayXd lo = points.colwise().minCoeff(), hi = points.colwise().maxCoeff();
  double d_max = 0;
  for (int corner = 0; corner < (1 << dim); ++corner) {
    Eigen::ArrayXd d2 = Eigen::ArrayXd::Zero(centres.rows());
    for (Eigen::Index k = 0; k < dim; ++k)
      d2 += (centres.col(k) - ((corner >> k) & 1 ? hi(k) : lo(k))).square();
    d_max = std::max(d_max, d2.sqrt().maxCoeff());
  }
  return d_max;
}

Eigen::ArrayXXd element_centroids(const Mesh& mesh) {
  const int dim = mesh.dim(), per = mesh.nodes_per_element();
  Eigen::ArrayXXd c(mesh.n_elems(), dim);
  for (int e = 0; e < mesh.n_elems(); ++e)
    for (int k = 0; k < dim; ++k) {
      double sum = mesh.nodes(mesh.elements(e, 0), k);
      for (int j = 1; j < per; ++j) sum += mesh.nodes(mesh.elements(e, j), k);
      c(e, k) = sum / per;
    }
  return c;
}

void greit_weight_block(const Eigen::ArrayXXd& centroids, const Eigen::ArrayXXd& points,
                        double d_max, Eigen::Index e0, double ratio, double s,
                        Eigen::Ref<Eigen::MatrixXd> block) {
  const auto c = centroids.middleRows(e0, block.rows());
  Eigen::ArrayXd d2(block.rows());
  for (Eigen::Index g = 0; g < block.cols(); ++g) {
    d2 = (c.col(0) - points(g, 0)).square();
    for (Eigen::Index k = 1; k < points.cols(); ++k) d2 += (c.col(k) - points(g, k)).square();
    block.col(g).array() = greit_sigmoid(d2.sqrt(), d_max, ratio, s);
  }
}

Eigen::MatrixXd greit_weighted_images(const Eigen::ArrayXXd& centroids,
                                      const Eigen::ArrayXXd& points, const Eigen::MatrixXd& X,
                                      double ratio, double s) {
  const double d_max = greit_d_max(centroids, points);
  const Eigen::Index n_points = points.rows(), n_e = centroids.rows();
  Eigen::MatrixXd h = Eigen::MatrixXd::Zero(n_points, X.cols());
  Eigen::VectorXd sums = Eigen::VectorXd::Zero(n_points);
  constexpr Eigen::Index kBlock = 1024;
  Eigen::MatrixXd block(std::min(kBlock, n_e), n_points);
  for (Eigen::Index e0 = 0; e0 < n_e; e0 += kBlock) {
    const Eigen::Index count = std::min(kBlock, n_e - e0);
    auto w = block.topRows(count);
    greit_weight_block(centroids, points, d_max, e0, ratio, s, w);
    sums += w.colwise().sum().transpose();
    h.noalias() += w.transpose() * X.middleRows(e0, count);
  }
  return sums.cwiseInverse().asDiagonal() * h;
}

}  // namespace eit::recon::detail
