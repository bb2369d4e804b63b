// Every reconstruction matrix and every ds file of ../shared/data/pyeit/h0_0.1 (pyEIT 3ed2fca),
// rebuilt from the mesh alone: relative Frobenius error ≤ 1e-9.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "eit/recon/back_projection.hpp"
#include "eit/recon/greit.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/mesh_io.hpp"
#include "pyeit_csv.hpp"
#include "test_data.hpp"

using namespace eit::recon;
using eit::test::read_csv_matrix;
using eit::test::read_csv_vector;
using eit::test::rel_fro_error;

namespace {

constexpr double kTol = 1e-9;

struct Reference {
  std::filesystem::path dir;
  Mesh mesh;
  Eigen::VectorXd v0, v1;  // ours (checked against pyEIT's in test_forward_model)
};

std::optional<Reference> reference() {
  const auto nodes = eit::test::shared_data_file("pyeit/h0_0.1/nodes.csv");
  if (!nodes) return std::nullopt;
  Reference r;
  r.dir = nodes->parent_path();
  r.mesh = load_mesh_csv_folder(r.dir);
  ForwardModel fwd(r.mesh, make_protocol({}));
  r.v0 = fwd.solve();
  r.v1 = fwd.solve(read_csv_vector(r.dir / "perm_anomaly.csv"));
  return r;
}

// pyEIT's solve(): ds = −H · dv, dv = v1 − v0 or (v1 − v0) / |v0|.
Eigen::VectorXd pyeit_ds(const Eigen::MatrixXd& H, const Reference& r, bool normalize) {
  Eigen::VectorXd dv = r.v1 - r.v0;
  if (normalize) dv = dv.cwiseQuotient(r.v0.cwiseAbs());
  return -H * dv;
}

// The streaming form: image = model.H · dv in float.
Eigen::VectorXd model_image(const Model& model, const Reference& r) {
  Eigen::VectorXd dv = r.v1 - r.v0;
  if (model.normalize) dv = dv.cwiseQuotient(model.v_ref.cwiseAbs());
  return (model.H * dv.cast<float>()).cast<double>();
}

void check_close(const Eigen::MatrixXd& ours, const std::filesystem::path& file,
                 double tol = kTol) {
  const double err = rel_fro_error(ours, read_csv_matrix(file));
  MESSAGE(file.filename().string() << ": rel Frobenius error " << err);
  CHECK(err <= tol);
}

// A masked 32×32 ds file (NaN outside): NaNs exactly where the mask is, values elsewhere.
void check_masked(const Eigen::VectorXd& ds, const GridGeometry& grid,
                  const std::filesystem::path& file) {
  const Eigen::MatrixXd ref = read_csv_matrix(file);
  REQUIRE(ref.rows() == grid.ny);
  REQUIRE(ref.cols() == grid.nx);
  Eigen::VectorXd a = Eigen::VectorXd::Zero(ds.size()), b = a;
  int mismatched_nan = 0;
  for (int r = 0; r < grid.ny; ++r)
    for (int c = 0; c < grid.nx; ++c) {
      const size_t g = static_cast<size_t>(r) * grid.nx + c;
      if (std::isnan(ref(r, c)) != (grid.mask[g] != 0)) ++mismatched_nan;
      if (!grid.mask[g]) {
        a(static_cast<Eigen::Index>(g)) = ds(static_cast<Eigen::Index>(g));
        b(static_cast<Eigen::Index>(g)) = ref(r, c);
      }
    }
  CHECK(mismatched_nan == 0);
  const double err = rel_fro_error(a, b);
  MESSAGE(file.filename().string() << ": rel Frobenius error " << err);
  CHECK(err <= kTol);
}

}  // namespace

TEST_CASE("JAC matrices (kotre p=0.5 λ=0.01, plain and jac_normalized) and their ds match pyEIT") {
  const auto r = reference();
  if (!r) return;
  ForwardModel fwd(r->mesh, make_protocol({}));
  JacOptions o;
  o.p = 0.5;
  o.lambda = 0.01;
  const ReconstructionMatrix jac = build_jac(fwd, o);
  check_close(jac.H, r->dir / "H_jac.csv");
  check_close(pyeit_ds(jac.H, *r, false), r->dir / "ds_jac_normalize_false.csv");
  check_close(pyeit_ds(jac.H, *r, true), r->dir / "ds_jac_normalize_true.csv");
  CHECK(rel_fro_error(model_image(jac.model, *r), pyeit_ds(jac.H, *r, false)) < 1e-5);
  CHECK(jac.model.algorithm == "jac");
  CHECK(jac.model.id.empty());
  CHECK(rel_fro_error(jac.model.v_ref, r->v0) == 0.0);

  o.jac_normalized = true;
  o.normalize = true;
  const ReconstructionMatrix jacn = build_jac(fwd, o);
  check_close(jacn.H, r->dir / "H_jac_jacnorm.csv");
  check_close(pyeit_ds(jacn.H, *r, true), r->dir / "ds_jac_jacnorm_normalize_true.csv");
  CHECK(jacn.model.normalize);
  CHECK(rel_fro_error(model_image(jacn.model, *r), pyeit_ds(jacn.H, *r, true)) < 1e-5);
}

TEST_CASE("back-projection matrix (per node) and its ds match pyEIT, sign(v0) folded in") {
  const auto r = reference();
  if (!r) return;
  ForwardModel fwd(r->mesh, make_protocol({}));
  const ReconstructionMatrix bp = build_bp(fwd);
  check_close(bp.H, r->dir / "H_bp.csv", 0.0);
  check_close(pyeit_ds(bp.H, *r, false), r->dir / "ds_bp_normalize_false.csv");
  // pyEIT's BP normalisation divides by sign(v0).
  const Eigen::VectorXd dv_sign =
      (r->v1 - r->v0).cwiseQuotient(r->v0.unaryExpr([](double v) { return v > 0 ? 1.0 : -1.0; }));
  check_close(-bp.H * dv_sign, r->dir / "ds_bp_normalize_true.csv");
  BpOptions o;
  o.normalize = true;
  const ReconstructionMatrix bpn = build_bp(fwd, o);
  CHECK_FALSE(bpn.model.normalize);
  CHECK(rel_fro_error(model_image(bpn.model, *r), -bp.H * dv_sign) < 1e-5);
  CHECK(std::get<MeshGeometry>(bp.model.geometry).output_on == MeshGeometry::OutputOn::kNodes);
}

TEST_CASE("GREIT grid, mask, matrices and masked images match pyEIT (n=32, p=0.5, λ=0.01)") {
  const auto r = reference();
  if (!r) return;
  ForwardModel fwd(r->mesh, make_protocol({}));
  GreitOptions o;
  o.p = 0.5;
  o.lambda = 0.01;
  const ReconstructionMatrix greit = build_greit(fwd, o);
  const auto& grid = std::get<GridGeometry>(greit.model.geometry);
  REQUIRE(grid.nx == 32);
  REQUIRE(grid.ny == 32);

  const Eigen::MatrixXd xg = read_csv_matrix(r->dir / "greit_xg.csv");
  const Eigen::MatrixXd yg = read_csv_matrix(r->dir / "greit_yg.csv");
  const Eigen::MatrixXd mask = read_csv_matrix(r->dir / "greit_mask.csv");
  int mask_diff = 0, inside = 0;
  double grid_err = 0;
  for (int row = 0; row < 32; ++row)
    for (int c = 0; c < 32; ++c) {
      grid_err = std::max(grid_err, std::abs(grid.x0 + c * grid.dx - xg(row, c)));
      grid_err = std::max(grid_err, std::abs(grid.y0 + row * grid.dy - yg(row, c)));
      const bool outside = grid.mask[static_cast<size_t>(row) * 32 + c] != 0;
      mask_diff += outside != (mask(row, c) != 0);
      inside += !outside;
    }
  CHECK(grid_err <= 1e-15);
  CHECK(mask_diff == 0);
  CHECK(inside == 795);

  check_close(greit.H, r->dir / "H_greit.csv");
  const Eigen::VectorXd ds = pyeit_ds(greit.H, *r, false);
  check_close(ds, r->dir / "ds_greit_unmasked_vec.csv");
  check_masked(ds, grid, r->dir / "ds_greit.csv");
  check_masked(pyeit_ds(greit.H, *r, true), grid, r->dir / "ds_greit_normalize_true.csv");
  CHECK(rel_fro_error(model_image(greit.model, *r), ds) < 1e-5);

  o.jac_normalized = true;
  const ReconstructionMatrix greitn = build_greit(fwd, o);
  check_close(greitn.H, r->dir / "H_greit_jacnorm.csv");
  check_masked(pyeit_ds(greitn.H, *r, true), grid, r->dir / "ds_greit_jacnorm_normalize_true.csv");
}
