// "gn" models: built from mesh, protocol, electrode model and settings; saved and loaded intact
// through the Model file; a damaged /gn group is refused by name.
#include <doctest/doctest.h>

#include <filesystem>

#include "eit/recon/gn_model.hpp"
#include "eit/recon/layered_circle_mesh.hpp"
#include "eit/recon/model_file.hpp"

using namespace eit::recon;

TEST_CASE("gn model round-trips through the Model file with every setting") {
  Mesh mesh = layered_circle_mesh(16, 3);
  ForwardOptions fo;
  fo.electrodes = ForwardOptions::Electrodes::kComplete;
  fo.contact_impedance = 0.02;
  fo.electrode_width = 0.15;
  GnOptions o;
  o.prior = GnOptions::Prior::kLaplacian;
  o.p = 0.4;
  o.lambda0 = 0.5;
  o.lambda_decay = 0.3;
  o.lambda_min = 1e-4;
  o.max_iterations = 7;
  o.tolerance = 1e-6;
  o.start = GnOptions::Start::kPerElement;
  o.start_perm = Eigen::VectorXd::LinSpaced(mesh.n_elems(), 1.0, 2.0);
  o.pyeit_compat = true;
  o.frame_iterations = 4;
  Model m = make_gn_model(mesh, make_protocol({}), fo, o);
  CHECK(m.n_out() == static_cast<size_t>(mesh.n_elems()));
  CHECK(m.n_meas() == 208);
  const auto path = std::filesystem::temp_directory_path() / "eitstream_test_gn_model.h5";
  save_model(path, m);
  const Model back = load_model(path);
  std::filesystem::remove(path);
  REQUIRE(back.gn);
  CHECK(back.algorithm == "gn");
  CHECK(back.id == m.id);
  CHECK(back.H.size() == 0);
  const GnSetup& s = *back.gn;
  CHECK(s.mesh.ref_node == mesh.ref_node);
  CHECK(s.mesh.nodes == mesh.nodes);
  CHECK(s.mesh.elements == mesh.elements);
  CHECK(s.forward.electrodes == ForwardOptions::Electrodes::kComplete);
  CHECK(s.forward.contact_impedance == 0.02);
  CHECK(s.forward.electrode_width == 0.15);
  CHECK(s.options.prior == GnOptions::Prior::kLaplacian);
  CHECK(s.options.p == 0.4);
  CHECK(s.options.lambda0 == 0.5);
  CHECK(s.options.lambda_decay == 0.3);
  CHECK(s.options.lambda_min == 1e-4);
  CHECK(s.options.max_iterations == 7);
  CHECK(s.options.tolerance == 1e-6);
  CHECK(s.options.start == GnOptions::Start::kPerElement);
  CHECK(s.options.start_perm == o.start_perm);
  CHECK(s.options.pyeit_compat);
  CHECK(s.options.frame_iterations == 4);
  CHECK(back.parameters_json == m.parameters_json);
}

TEST_CASE("gn model refuses bad settings by name") {
  const Mesh mesh = layered_circle_mesh(16, 2);
  GnOptions o;
  o.lambda_decay = 0;
  CHECK_THROWS_WITH_AS(make_gn_model(mesh, make_protocol({}), {}, o),
                       doctest::Contains("lambda_decay = 0"), std::invalid_argument);
  CHECK_THROWS_AS(parse_gn_prior("ridge"), std::invalid_argument);
  CHECK(parse_gn_prior("dgn") == GnOptions::Prior::kTikhonov);
}

TEST_CASE("gn model: complex conductivity round-trips and changes the id, real ids do not move") {
  const Mesh mesh = layered_circle_mesh(16, 2);
  GnOptions o;
  Model real = make_gn_model(mesh, make_protocol({}), {}, o);
  CHECK(real.parameters_json.find("complex") == std::string::npos);  // ids of real models kept
  o.complex_conductivity = true;
  Model m = make_gn_model(mesh, make_protocol({}), {}, o);
  const auto path = std::filesystem::temp_directory_path() / "eitstream_test_gn_complex.h5";
  save_model(path, m);
  const Model back = load_model(path);
  save_model(path, real);
  const Model back_real = load_model(path);
  std::filesystem::remove(path);
  REQUIRE(back.gn);
  CHECK(back.gn->options.complex_conductivity);
  CHECK(back.id == m.id);
  CHECK(m.id != real.id);  // save_model sets the id from the parameters
  REQUIRE(back_real.gn);
  CHECK_FALSE(back_real.gn->options.complex_conductivity);
}
