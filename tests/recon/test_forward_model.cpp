#include <doctest/doctest.h>

#include <optional>

#include "eit/recon/forward_model.hpp"
#include "eit/recon/mesh_io.hpp"
#include "pyeit_csv.hpp"
#include "test_data.hpp"

using namespace eit::recon;
using eit::test::read_csv_matrix;
using eit::test::read_csv_vector;
using eit::test::rel_fro_error;

namespace {

std::optional<std::filesystem::path> pyeit_dir() {
  const auto readme = eit::test::shared_data_file("pyeit/h0_0.1/nodes.csv");
  if (!readme) return std::nullopt;
  return readme->parent_path();
}

}  // namespace

TEST_CASE("point-electrode forward solve reproduces pyEIT's v0 and v1 (h0=0.1)") {
  const auto dir = pyeit_dir();
  if (!dir) return;
  const Mesh mesh = load_mesh_csv_folder(*dir);
  CHECK(mesh.ref_node == 16);
  ForwardModel fwd(mesh, make_protocol({}));
  const Eigen::VectorXd v0 = fwd.solve();
  const Eigen::VectorXd v1 = fwd.solve(read_csv_vector(*dir / "perm_anomaly.csv"));
  const double e0 = rel_fro_error(v0, read_csv_vector(*dir / "v0.csv"));
  const double e1 = rel_fro_error(v1, read_csv_vector(*dir / "v1.csv"));
  MESSAGE("v0 rel err " << e0 << ", v1 rel err " << e1);
  CHECK(e0 <= 1e-9);
  CHECK(e1 <= 1e-9);
}

TEST_CASE("Jacobian and normalised Jacobian reproduce pyEIT's jac.csv (h0=0.1)") {
  const auto dir = pyeit_dir();
  if (!dir) return;
  ForwardModel fwd(load_mesh_csv_folder(*dir), make_protocol({}));
  const double ej = rel_fro_error(fwd.jacobian(), read_csv_matrix(*dir / "jac.csv"));
  const double en =
      rel_fro_error(fwd.jacobian({}, true), read_csv_matrix(*dir / "jac_normalized.csv"));
  MESSAGE("J rel err " << ej << ", J normalised rel err " << en);
  CHECK(ej <= 1e-9);
  CHECK(en <= 1e-9);
}
