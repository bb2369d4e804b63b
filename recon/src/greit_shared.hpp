#pragma once
// What the 2-D (pixel) and 3-D (voxel) GREIT builders share (greit.cpp, greit_3d.cpp). Both are
//   RM = D Yᵀ (Y Yᵀ + λ Σ)⁻¹,  Σ = diag(Y Yᵀ)^p,
// with Y (n_meas × n_train) the linearised measurements of the training targets (Y = J X, X the
// targets' conductivity changes per element) and D (n_out × n_train) their desired images:
//   - pyEIT's "dist" GREIT (2-D, and 3-D with train = elements): one unit target per element
//     (X = I, Y = J), D = Wᵀ, the sigmoid weights of centroid–pixel distances, each pixel's
//     weights normalised to sum 1 over the elements;
//   - EIDORS-style training (3-D, train = spheres): small spheres through the volume
//     (greit_targets.cpp), D their sigmoid-blurred images.
// The distance profile is pyEIT's sigmoid 1 / (1 + exp(s (5 d / d_max − 5 ratio))).
#include <Eigen/Core>

#include "eit/recon/mesh.hpp"

namespace eit::recon::detail {

// Yᵀ (Y Yᵀ + λ diag(Y Yᵀ)^p)⁻¹ (n_train × n_meas) from yt = Yᵀ (n_train × n_meas). Throws
// std::runtime_error when the regularised Gram matrix is not positive definite.
Eigen::MatrixXd greit_training_solve(const Eigen::MatrixXd& yt, double lambda, double p);

template <class Array>
auto greit_sigmoid(const Array& d, double d_max, double ratio, double s) {
  return 1.0 / (1.0 + (s * (d * (5.0 / d_max) - 5.0 * ratio)).exp());
}

// The largest distance between a centre (rows of `centres`, n × dim) and an output point (rows
// of `points`): attained at a corner of the points' bounding box.
double greit_d_max(const Eigen::ArrayXXd& centres, const Eigen::ArrayXXd& points);

// Element centroids (n_elems × dim), 2-D or 3-D.
Eigen::ArrayXXd element_centroids(const Mesh& mesh);

// Wᵀ X (n_points × X.cols()) with W (n_elems × n_points) the sigmoid weights of the centroid–point
// distances, each point's weights normalised to sum 1: accumulated over blocks of elements, so W
// is never held whole and X is read once.
Eigen::MatrixXd greit_weighted_images(const Eigen::ArrayXXd& centroids,
                                      const Eigen::ArrayXXd& points, const Eigen::MatrixXd& X,
                                      double ratio, double s);

// The unnormalised weights of elements [e0, e0 + block.rows()) for every point, in place.
void greit_weight_block(const Eigen::ArrayXXd& centroids, const Eigen::ArrayXXd& points,
                        double d_max, Eigen::Index e0, double ratio, double s,
                        Eigen::Ref<Eigen::MatrixXd> block);

}  // namespace eit::recon::detail
