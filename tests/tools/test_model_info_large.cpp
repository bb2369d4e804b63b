// `eitstream model info` on large Model files: above 64 MiB of H (or with --quick) it describes
// the file from its header (stored statistics, unverified id, H's layout) without reading H;
// --verify reads and checks everything; a file written before chunking (contiguous H, no stored
// statistics; rewritten by h5py here) still loads with the same id.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "eit/recon/model_file.hpp"
#include "eit/recon/model_header.hpp"
#include "test_data.hpp"

namespace fs = std::filesystem;
using namespace eit::recon;

namespace {

struct Out {
  int code = -1;
  std::string text;  // stdout and stderr together
};

Out run_cli(const std::string& args, const std::string& env = "") {
  Out r;
  FILE* pipe = ::popen(fmt::format("{} {} {} 2>&1", env, EITSTREAM_BIN, args).c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) r.text.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

fs::path temp_model(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("eit_info_{}_{}.h5", ::getpid(), name);
}

bool have_h5py() { return std::system("python3 -c 'import h5py' >/dev/null 2>&1") == 0; }

// rows × 208 random H on a rows × 1 grid (the geometry only has to match H's rows).
Model saved_model(const fs::path& path, int rows) {
  Model m;
  m.algorithm = "imported";
  m.protocol = make_protocol({});
  GridGeometry g;
  g.nx = 1;
  g.ny = rows;
  g.dx = g.dy = 1;
  g.mask.assign(static_cast<size_t>(rows), 0);
  m.geometry = g;
  m.H = MatrixRowMajorF::Random(rows, 208);
  save_model(path, m);
  return m;
}

}  // namespace

TEST_CASE("model info --quick describes a model from its header without reading H") {
  const fs::path path = temp_model("quick");
  const Model m = saved_model(path, 16384);  // 13 MiB: chunked
  const Out q = run_cli(fmt::format("model info --quick {}", path.string()));
  INFO(q.text);
  REQUIRE(q.code == 0);
  CHECK(has(q.text, fmt::format("{} (stored; not checked", m.id)));
  CHECK(has(q.text, "16384 × 208 float32 (13.0 MiB), chunked 5041 × 208"));
  CHECK(has(q.text, fmt::format("‖H‖F {:.6g}", matrix_stats(m.H).frobenius)));
  CHECK(has(q.text, "16 electrodes"));
  const Out full = run_cli(fmt::format("model info {}", path.string()));  // ≤ 64 MiB: reads H
  CHECK(full.code == 0);
  CHECK(has(full.text, "id         " + m.id + "\n"));
  CHECK(has(full.text, fmt::format("‖H‖F {:.6g}", matrix_stats(m.H).frobenius)));
  CHECK(run_cli(fmt::format("model info --quick --verify {}", path.string())).code != 0);
  fs::remove(path);
}

TEST_CASE("model info reads only the header above 64 MiB of H, --verify reads and checks H") {
  const fs::path path = temp_model("big");
  const Model m = saved_model(path, 90000);  // 71.4 MiB
  const Out i = run_cli(fmt::format("model info {}", path.string()));
  INFO(i.text);
  REQUIRE(i.code == 0);
  CHECK(has(i.text, "stored; not checked"));
  CHECK(has(i.text, "90000 × 208"));
  if (!have_h5py()) {
    eit::test::report_skip("model info --verify after an edit", "python3 with h5py not found");
    fs::remove(path);
    return;
  }
  REQUIRE(std::system(fmt::format("python3 -c \"import h5py; f=h5py.File('{}','r+'); "
                                  "f['H'][7,3]+=1.0\"",
                                  path.string())
                          .c_str()) == 0);
  CHECK(run_cli(fmt::format("model info {}", path.string())).code == 0);  // header only
  const Out v = run_cli(fmt::format("model info --verify {}", path.string()));
  CHECK(v.code != 0);
  CHECK(has(v.text, "does not match its content"));
  fs::remove(path);
}

TEST_CASE("a Model file from before chunking (contiguous H, no stored statistics) still loads") {
  if (!have_h5py()) {
    eit::test::report_skip("old-layout model file", "python3 with h5py not found");
    return;
  }
  const fs::path path = temp_model("old");
  const Model m = saved_model(path, 8192);  // 6.5 MiB: chunked as written now
  // Rewrite H as the old writer did: contiguous, no attributes.
  REQUIRE(std::system(fmt::format("python3 -c \"import h5py; f=h5py.File('{}','r+'); "
                                  "h=f['H'][...]; del f['H']; f.create_dataset('H', data=h)\"",
                                  path.string())
                          .c_str()) == 0);
  const ModelHeader h = read_model_header(path);
  CHECK(h.h_layout == "contiguous");
  CHECK_FALSE(h.h_stats.has_value());
  CHECK(load_model(path).id == m.id);
  const Out q = run_cli(fmt::format("model info --quick {}", path.string()));
  CHECK(q.code == 0);
  CHECK(has(q.text, "not stored in this file"));
  fs::remove(path);
}

TEST_CASE(
    "model build --backend says where JAC's solve ran: cpu, cuda with a device, a refusal "
    "without") {
  const fs::path path = temp_model("backend");
  // The stored default mesh (no Gmsh): 16 electrodes, far below the size where auto uses CUDA.
  const Out a = run_cli(fmt::format("model build --algorithm jac -o {}", path.string()));
  INFO(a.text);
  REQUIRE(a.code == 0);
  CHECK(has(a.text, "solve on cpu (Eigen; n_elems·n_meas²"));
  const Out c = run_cli(
      fmt::format("model build --algorithm jac --backend cpu --force -o {}", path.string()));
  CHECK(c.code == 0);
  CHECK(has(c.text, "solve on cpu (Eigen, --backend cpu)"));
  // Without the plugin (forced: the GPU machine's build has one), cuda fails naming why.
  const Out g = run_cli(
      fmt::format("model build --algorithm jac --backend cuda --force -o {}", path.string()),
      "EIT_GPU_PLUGIN=/nonexistent/libeit_gpu.so");
  CHECK(g.code != 0);
  CHECK(has(g.text, "--backend cuda: no CUDA plugin"));
  // As built: with the plugin and a device the solve runs there, otherwise it fails the same way.
  const Out h = run_cli(
      fmt::format("model build --algorithm jac --backend cuda --force -o {}", path.string()));
  INFO(h.text);
  if (h.code == 0) {
    CHECK(has(h.text, "solve on cuda ("));
  } else {
    CHECK(has(h.text, "--backend cuda: no CUDA"));
    MESSAGE(
        "model build --backend cuda: no CUDA plugin or device here, so only its refusal was "
        "checked");
  }
  fs::remove(path);
}
