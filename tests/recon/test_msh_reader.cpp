#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "eit/recon/mesh_generator.hpp"
#include "eit/recon/mesh_boundary.hpp"
#include "eit/recon/msh_reader.hpp"
#include "test_data.hpp"

using namespace eit::recon;
namespace fs = std::filesystem;

namespace {

fs::path temp_file(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / fmt::format("eit_msh_{}_{}", ::getpid(), name);
  std::ofstream(p) << text;
  return p;
}

// A small hand-made mesh (unit square split into 4 triangles around its centre) when Gmsh is
// absent; the generated unit circle otherwise.
Mesh sample_mesh(double width = 0) {
  if (mesh_generator_available()) {
    MeshOptions o;
    o.h0 = 0.2;
    o.electrode_width = width;
    return generate_mesh(o);
  }
  Mesh m;
  m.nodes.resize(5, 2);
  m.nodes << -1, -1, 1, -1, 1, 1, -1, 1, 0, 0;
  m.elements.resize(4, 3);
  m.elements << 0, 1, 4, 1, 2, 4, 2, 3, 4, 3, 0, 4;
  m.electrode_nodes = {0, 1, 2, 3};
  m.ref_node = pyeit_ref_node(m.electrode_nodes);  // what every mesh reader sets
  return m;
}

// Node tags are 2i+1 (non-contiguous, ascending) so the reader must map them.
std::string write_v2(const Mesh& m, bool point_groups, bool line_groups) {
  std::string s = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n";
  const int n_el = point_groups || line_groups ? m.n_electrodes() : 0;
  s += fmt::format("{}\n", n_el + 1);
  for (int k = 0; k < n_el; ++k)
    s += fmt::format("{} {} \"electrode{}\"\n", line_groups ? 1 : 0, k + 1, k + 1);
  s += "2 100 \"body\"\n$EndPhysicalNames\n$Nodes\n";
  s += fmt::format("{}\n", m.n_nodes());
  for (int i = 0; i < m.n_nodes(); ++i)
    s += fmt::format("{} {:.17g} {:.17g} 0\n", 2 * i + 1, m.nodes(i, 0), m.nodes(i, 1));
  s += "$EndNodes\n$Elements\n";
  std::string body;
  int count = 0;
  for (int k = 0; point_groups && k < n_el; ++k)
    body += fmt::format("{} 15 2 {} {} {}\n", ++count, k + 1, k + 1, 2 * m.electrode_nodes[k] + 1);
  for (int k = 0; line_groups && k < n_el; ++k) {
    const auto& p = m.electrode_patches[k];
    for (size_t i = 0; i + 1 < p.size(); ++i)
      body += fmt::format("{} 1 2 {} {} {} {}\n", ++count, k + 1, k + 1, 2 * p[i] + 1,
                          2 * p[i + 1] + 1);
  }
  for (int e = 0; e < m.n_elems(); ++e)
    body += fmt::format("{} 2 2 100 1 {} {} {}\n", ++count, 2 * m.elements(e, 0) + 1,
                        2 * m.elements(e, 1) + 1, 2 * m.elements(e, 2) + 1);
  return s + fmt::format("{}\n", count) + body + "$EndElements\n";
}

std::string write_v41(const Mesh& m) {
  const int n_el = m.n_electrodes();
  std::string s = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n";
  s += fmt::format("{}\n", n_el + 1);
  for (int k = 0; k < n_el; ++k) s += fmt::format("0 {} \"E{}\"\n", k + 1, k + 1);
  s += "2 100 \"body\"\n$EndPhysicalNames\n$Entities\n";
  s += fmt::format("{} 0 1 0\n", n_el);
  for (int k = 0; k < n_el; ++k) {
    const int node = m.electrode_nodes[k];
    s += fmt::format("{} {:.17g} {:.17g} 0 1 {}\n", k + 1, m.nodes(node, 0), m.nodes(node, 1),
                     k + 1);
  }
  s += "1 -1 -1 0 1 1 0 1 100 0\n$EndEntities\n$Nodes\n";
  s += fmt::format("1 {} 1 {}\n2 1 0 {}\n", m.n_nodes(), 2 * m.n_nodes() - 1, m.n_nodes());
  for (int i = 0; i < m.n_nodes(); ++i) s += fmt::format("{}\n", 2 * i + 1);
  for (int i = 0; i < m.n_nodes(); ++i)
    s += fmt::format("{:.17g} {:.17g} 0\n", m.nodes(i, 0), m.nodes(i, 1));
  s += "$EndNodes\n$Elements\n";
  s += fmt::format("{} {} 1 {}\n", n_el + 1, n_el + m.n_elems(), n_el + m.n_elems());
  for (int k = 0; k < n_el; ++k)
    s += fmt::format("0 {} 15 1\n{} {}\n", k + 1, k + 1, 2 * m.electrode_nodes[k] + 1);
  s += fmt::format("2 1 2 {}\n", m.n_elems());
  for (int e = 0; e < m.n_elems(); ++e)
    s += fmt::format("{} {} {} {}\n", n_el + e + 1, 2 * m.elements(e, 0) + 1,
                     2 * m.elements(e, 1) + 1, 2 * m.elements(e, 2) + 1);
  return s + "$EndElements\n";
}

void check_same(const Mesh& a, const Mesh& b) {
  CHECK(a.nodes == b.nodes);
  CHECK(a.elements == b.elements);
  CHECK(a.electrode_nodes == b.electrode_nodes);
  CHECK(a.ref_node == b.ref_node);
}

}  // namespace

TEST_CASE(".msh 2.2 and 4.1 round trip: nodes, triangles and point-group electrodes") {
  const Mesh m = sample_mesh();
  const fs::path v2 = temp_file("v2.msh", write_v2(m, true, false));
  const fs::path v4 = temp_file("v4.msh", write_v41(m));
  check_same(read_msh(v2), m);
  check_same(read_msh(v4), m);
  fs::remove(v2);
  fs::remove(v4);
}

TEST_CASE(".msh without electrode groups places N electrodes at pyEIT's angles") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("msh electrodes by count", "built without Gmsh");
    return;
  }
  const Mesh m = sample_mesh();
  const fs::path v2 = temp_file("count.msh", write_v2(m, false, false));
  const Mesh r = read_msh(v2, {.n_electrodes = 16});
  CHECK(r.electrode_nodes == m.electrode_nodes);  // the generator put them exactly there
  CHECK_THROWS_WITH_AS(read_msh(v2), doctest::Contains("no electrodes"), std::runtime_error);
  fs::remove(v2);
}

TEST_CASE(".msh line groups become electrode patches with their middle node as the electrode") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("msh electrode patches", "built without Gmsh");
    return;
  }
  const Mesh m = sample_mesh(0.2);
  const fs::path v2 = temp_file("patch.msh", write_v2(m, false, true));
  const Mesh r = read_msh(v2);
  CHECK(r.electrode_nodes == m.electrode_nodes);
  CHECK(r.electrode_patches == m.electrode_patches);
  fs::remove(v2);
}

TEST_CASE(".msh errors name the file, line and field") {
  const std::string head = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
  auto error_of = [](const std::string& name, const std::string& text) {
    const fs::path p = temp_file(name, text);
    std::string what;
    try {
      read_msh(p, {.n_electrodes = 3});
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    fs::remove(p);
    return what;
  };
  CHECK(error_of("bad_x.msh", head + "$Nodes\n1\n1 abc 0 0\n$EndNodes\n")
            .find("bad_x.msh:6: $Nodes: x 'abc': expected a number") != std::string::npos);
  CHECK(error_of("v3.msh", "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n")
            .find("v3.msh:2: $MeshFormat: version 3: expected 2.2 or 4.1") != std::string::npos);
  CHECK(error_of("bin.msh", "$MeshFormat\n4.1 1 8\n$EndMeshFormat\n").find("binary") !=
        std::string::npos);
  CHECK(error_of("notmsh.msh", "hello\n").find("expected $MeshFormat") != std::string::npos);
  const std::string nodes = "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n";
  CHECK(error_of("undef.msh", head + nodes + "$Elements\n1\n1 2 2 0 1 1 2 9\n$EndElements\n")
            .find("undef.msh:12: $Elements: node tag 9 is not defined") != std::string::npos);
  CHECK(error_of("quad.msh", head + nodes + "$Elements\n1\n1 3 2 0 1 1 2 3 1\n$EndElements\n")
            .find("element type 3") != std::string::npos);
  CHECK(error_of("trunc.msh", head + "$Nodes\n2\n1 0 0 0\n").find("end of file") !=
        std::string::npos);
  // 4.1 node blocks: a forged count meets the end of the file (found by fuzz_recon_msh: 3.9e9
  // nodes claimed in a 600-byte file made the reader allocate 31 GB up front).
  const std::string head41 = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
  CHECK(error_of("forged41.msh", head41 + "$Nodes\n1 2 1 2\n2 1 0 3879532511\n1\n2\n")
            .find("forged41.msh:9: $Nodes: node tag end of file: expected more data") !=
        std::string::npos);
  CHECK(error_of("negative41.msh", head41 + "$Nodes\n1 2 1 2\n2 1 0 -5\n$EndNodes\n")
            .find("negative41.msh:6: $Nodes: numNodesInBlock '-5': expected a count ≥ 0") !=
        std::string::npos);
}

TEST_CASE("files Gmsh itself writes (2.2 and 4.1) read back as the generated mesh") {
  if (!mesh_generator_available()) {
    eit::test::report_skip("Gmsh-written .msh", "built without Gmsh");
    return;
  }
  for (double version : {2.2, 4.1}) {
    MeshOptions o;
    o.outline = EllipseOutline{1.2, 0.9};
    o.h0 = 0.15;
    o.save_msh =
        fs::temp_directory_path() / fmt::format("eit_msh_{}_gmsh{}.msh", ::getpid(), version);
    o.save_msh_version = version;
    const Mesh m = generate_mesh(o);
    const Mesh r = read_msh(o.save_msh);
    CAPTURE(version);
    CHECK(r.n_nodes() == m.n_nodes());
    CHECK(r.n_elems() == m.n_elems());
    REQUIRE(r.n_electrodes() == 16);
    for (int k = 0; k < 16; ++k) {  // same electrode coordinates (node numbering may differ)
      CHECK(r.nodes(r.electrode_nodes[k], 0) == doctest::Approx(m.nodes(k, 0)).epsilon(1e-14));
      CHECK(r.nodes(r.electrode_nodes[k], 1) == doctest::Approx(m.nodes(k, 1)).epsilon(1e-14));
    }
    double area_m = 0, area_r = 0;
    for (const Mesh* x : {&m, &r})
      for (int e = 0; e < x->n_elems(); ++e) {
        const Eigen::Vector2d a = x->nodes.row(x->elements(e, 0)),
                              b = x->nodes.row(x->elements(e, 1)),
                              c = x->nodes.row(x->elements(e, 2));
        (x == &m ? area_m : area_r) +=
            0.5 * ((b - a).x() * (c - a).y() - (b - a).y() * (c - a).x());
      }
    CHECK(area_r == doctest::Approx(area_m).epsilon(1e-12));
    fs::remove(o.save_msh);
  }
}
