// 3-D models on the outbound side: the image recorder's /geometry and the series message carry
// tetrahedral meshes (x, y, z; 4 nodes per element) and voxel grids (nz planes, 3-D mask); the
// image header gives a voxel image as its planes stacked along the rows.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eit/pipeline/frame.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"
#include "eit/sinks/series_message.hpp"
#include "h5_read_support.hpp"

using namespace eit;
namespace fs = std::filesystem;

namespace {

// Two tetrahedra sharing a face, output per element, 4 electrodes on their nodes.
recon::Model tet_model() {
  recon::Model m;
  m.algorithm = "jac";
  m.protocol = recon::make_protocol({4, 1, 1});
  recon::MeshGeometry g;
  g.nodes.resize(5, 3);
  g.nodes << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1;
  g.elements.resize(2, 4);
  g.elements << 0, 1, 2, 3, 1, 2, 4, 3;
  g.electrode_nodes = {0, 1, 2, 4};
  m.geometry = g;
  m.H = recon::MatrixRowMajorF::Ones(2, static_cast<Eigen::Index>(m.protocol.n_meas()));
  m.id = "tet-test-model";
  return m;
}

// A 3 × 2 × 4 voxel grid (nx × ny × nz) with its corners masked.
recon::Model voxel_model() {
  recon::Model m = tet_model();
  recon::GridGeometry g;
  g.nx = 3;
  g.ny = 2;
  g.nz = 4;
  g.dx = g.dy = 0.5;
  g.dz = 0.25;
  g.x0 = -0.5;
  g.y0 = -0.25;
  g.z0 = 0.125;
  g.mask.assign(g.n_pixels(), 0);
  g.mask.front() = g.mask.back() = 1;
  m.geometry = g;
  m.H = recon::MatrixRowMajorF::Ones(24, static_cast<Eigen::Index>(m.protocol.n_meas()));
  m.id = "voxel-test-model";
  return m;
}

fs::path temp_file(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_rec3d_{}", ::getpid());
  fs::create_directories(dir);
  return dir / name;
}

// Records 3 frames of the model (image value i·100 + pixel index) and closes the file.
void record(const fs::path& path, const recon::Model& model) {
  sinks::Hdf5ImageRecorder rec(path, model, {});
  std::vector<float> values(model.n_meas()), image(model.n_out());
  pipeline::FrameSlot slot;
  slot.values = values.data();
  slot.image = image.data();
  for (uint64_t i = 0; i < 3; ++i) {
    slot.seq = i;
    for (size_t k = 0; k < image.size(); ++k) image[k] = static_cast<float>(i * 100 + k);
    rec.publish(slot);
  }
  rec.end();
}

// Runs a Python snippet (h5py), true when it exits 0.
bool python_ok(const std::string& script, const std::string& name) {
  const fs::path py = temp_file(name);
  std::FILE* out = std::fopen(py.c_str(), "w");
  std::fputs(script.c_str(), out);
  std::fclose(out);
  const bool ok = std::system(fmt::format("python3 {}", py.string()).c_str()) == 0;
  fs::remove(py);
  return ok;
}

}  // namespace

TEST_CASE("series message: a tetrahedral mesh has 3 coordinates and 4 nodes per element") {
  const recon::Model m = tet_model();
  const auto j = nlohmann::json::parse(sinks::series_json(m, {}));
  CHECK(j["geometry"]["kind"] == "mesh");
  CHECK(j["geometry"]["dim"] == 3);
  CHECK(j["geometry"]["nodes"].size() == 5);
  CHECK(j["geometry"]["nodes"][4] == nlohmann::json::array({1.0, 1.0, 1.0}));
  CHECK(j["geometry"]["elements"][1] == nlohmann::json::array({1, 2, 4, 3}));
  CHECK(j["image"]["shape"] == nlohmann::json::array({2}));
}

TEST_CASE("series message and header: a voxel grid is nz planes of ny x nx") {
  const recon::Model m = voxel_model();
  const auto j = nlohmann::json::parse(sinks::series_json(m, {}));
  CHECK(j["image"]["shape"] == nlohmann::json::array({4, 2, 3}));
  CHECK(j["geometry"]["kind"] == "grid");
  CHECK(j["geometry"]["nz"] == 4);
  CHECK(j["geometry"]["dz"] == 0.25);
  CHECK(j["geometry"]["z0"] == 0.125);
  CHECK(j["geometry"]["mask"].size() == 24);
  CHECK(j["geometry"]["mask"][23] == 1);
  const sinks::ImageShape s = sinks::image_shape(m);
  CHECK(s.ndim == 2);
  CHECK(s.dims[0] == 8);  // nz · ny rows: the planes stacked
  CHECK(s.dims[1] == 3);
  CHECK(s.planes == 4);
  // A 2-D grid keeps its {ny, nx} shape and no nz field.
  recon::Model flat = m;
  auto& g = std::get<recon::GridGeometry>(flat.geometry);
  g.nz = 1;
  g.ny = 8;
  const auto jf = nlohmann::json::parse(sinks::series_json(flat, {}));
  CHECK(jf["image"]["shape"] == nlohmann::json::array({8, 3}));
  CHECK_FALSE(jf["geometry"].contains("nz"));
}

TEST_CASE("image recorder writes 3-D geometry, h5py reads a tetrahedral and a voxel recording") {
  const fs::path tets = temp_file("tets.h5"), voxels = temp_file("voxels.h5");
  record(tets, tet_model());
  record(voxels, voxel_model());
  {  // C API: shapes as written.
    const hid_t f = H5Fopen(tets.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    std::vector<hsize_t> shape;
    const auto nodes = test::h5read::dataset<double>(f, "geometry/nodes", &shape);
    CHECK(shape == std::vector<hsize_t>{5, 3});
    CHECK(nodes[3 * 3 + 2] == 1.0);  // node 3 is (0, 0, 1)
    H5Fclose(f);
  }
  if (std::system("python3 -c 'import h5py' 2>/dev/null") != 0) {
    MESSAGE("skipped the h5py part: python3 with h5py not found");
  } else {
    CHECK(python_ok(fmt::format("import h5py,sys\n"
                                "f=h5py.File('{}','r')\n"
                                "g=f['geometry']\n"
                                "ok=g['nodes'].shape==(5,3) and g['elements'].shape==(2,4)\n"
                                "ok=ok and list(g['elements'][1])==[1,2,4,3]\n"
                                "ok=ok and f['images'].shape==(3,2) and f['images'][2,1]==201\n"
                                "sys.exit(0 if ok else 1)\n",
                                tets.string()),
                    "read_tets.py"));
    CHECK(python_ok(fmt::format("import h5py,sys\n"
                                "f=h5py.File('{}','r')\n"
                                "g=f['geometry']\n"
                                "ok=g.attrs['kind']=='grid' and g.attrs['nz']==4\n"
                                "ok=ok and g.attrs['dz']==0.25 and g.attrs['z0']==0.125\n"
                                "ok=ok and g['mask'].shape==(4,2,3) and g['mask'][3,1,2]==1\n"
                                "im=f['images'][1].reshape(4,2,3)\n"
                                "ok=ok and im[2,1,0]==100+(2*2+1)*3+0\n"
                                "sys.exit(0 if ok else 1)\n",
                                voxels.string()),
                    "read_voxels.py"));
  }
  fs::remove(tets);
  fs::remove(voxels);
}
