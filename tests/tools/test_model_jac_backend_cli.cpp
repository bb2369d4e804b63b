// `model build --algorithm jac --backend auto|cuda` where there is no CUDA plugin (forced with
// EIT_GPU_PLUGIN, so the result is the same on a GPU machine): the background CUDA warm-up must
// neither hang the build nor change what it says. auto builds on the CPU and says why (small
// models never start the warm-up; large ones start it after the mesh and it finds no plugin);
// cuda fails with the no-plugin reason and writes no model.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "eit/recon/model_file.hpp"
#include "gmsh_skip.hpp"

namespace fs = std::filesystem;
using namespace eit::test;

namespace {

// `eitstream model build --algorithm jac <args>` with EIT_GPU_PLUGIN pointing nowhere (set for
// the child only: this process's environment is restored).
CliResult build(const std::string& args, const fs::path& out) {
  fs::remove(out);
  const char* old = std::getenv("EIT_GPU_PLUGIN");
  const std::string saved = old ? old : "";
  ::setenv("EIT_GPU_PLUGIN", "/nonexistent/libeit_gpu.so", 1);
  CliResult r =
      run_eitstream(fmt::format("model build --algorithm jac {} -o {}", args, out.string()));
  if (old)
    ::setenv("EIT_GPU_PLUGIN", saved.c_str(), 1);
  else
    ::unsetenv("EIT_GPU_PLUGIN");
  return r;
}

}  // namespace

TEST_CASE("model build jac --backend cuda without the CUDA plugin fails naming the reason") {
  const fs::path out = cli_temp_path("eit_jacbk", "cuda.h5");
  const CliResult r = build("--backend cuda", out);
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(contains(r.output, "--backend cuda: no CUDA plugin"));
  CHECK(contains(r.output, "libeit_gpu.so"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("model build jac --backend auto without the CUDA plugin: small model, CPU, says why") {
  const fs::path out = cli_temp_path("eit_jacbk", "auto_small.h5");
  const CliResult r = build("--backend auto", out);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "solve on cpu (Eigen; n_elems·n_meas²"));
  CHECK(contains(r.output, "too small to pay for CUDA"));
  CHECK_FALSE(contains(r.output, "cuda:"));  // no device timing line
  CHECK(eit::recon::load_model(out).H.cols() == 208);
  fs::remove(out);
}

TEST_CASE("model build jac --backend auto without the CUDA plugin: large model, CPU, says why") {
  if (skip_without_gmsh("model build jac auto, 12.6k triangles")) return;
  // 32 electrodes (928 measurements) on ~12,600 triangles: n_elems·n_meas² ≥ 1e10, so the
  // warm-up starts after the mesh, finds no plugin, and the solve runs on the CPU.
  const fs::path out = cli_temp_path("eit_jacbk", "auto_large.h5");
  const CliResult r = build("--backend auto --mesh circle --h0 0.0265 --electrodes 32", out);
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "solve on cpu (Eigen; no CUDA plugin"));
  const eit::recon::Model m = eit::recon::load_model(out);
  CHECK(m.H.cols() == 928);
  CHECK(static_cast<double>(m.H.rows()) * 928.0 * 928.0 >= 1e10);
  fs::remove(out);
}
