#include <doctest/doctest.h>

#include <chrono>

#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"

using namespace eit::recon;

TEST_CASE("built-in model is GREIT 1024 x 208 on a 32 x 32 grid, deterministic, with its id") {
  const auto t0 = std::chrono::steady_clock::now();
  const Model a = default_model();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("default_model built in ", ms, " ms; id ", a.id, "; parameters ", a.parameters_json);
  CHECK(a.algorithm == "greit");
  CHECK(a.H.rows() == 1024);
  CHECK(a.H.cols() == 208);
  CHECK_FALSE(a.normalize);
  CHECK(a.v_ref.size() == 208);
  CHECK(a.protocol.n_electrodes == 16);
  const auto& g = std::get<GridGeometry>(a.geometry);
  CHECK(g.nx == 32);
  CHECK(g.ny == 32);
  CHECK(a.id == model_content_hash(a));
  CHECK_NOTHROW(validate_model(a));
  const Model b = default_model();
  CHECK(b.id == a.id);
}
