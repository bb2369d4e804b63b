#include "cmd_model_import.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "eit/recon/matrix_import.hpp"
#include "eit/recon/model_file.hpp"
#include "existing_output.hpp"
#include "mesh_source.hpp"
#include "model_summary.hpp"
#include "option_checks.hpp"
#include "protocol_args.hpp"

namespace eit::cli {
namespace {

struct ImportArgs {
  std::string file, variable, output, mesh_spec, output_on = "elements";
  ProtocolArgs protocol;
  bool unpack = false, no_unpack = false, normalize = false, force = false;
  int grid = 32;
  double h0 = 0.1, scale = 1.0;
};

void run_import(ImportArgs& a) {
  if (a.unpack && a.no_unpack)
    throw std::invalid_argument("--unpack-eidors-symmetry and --no-unpack exclude each other");
  recon::MatrixImportOptions o;
  o.file = a.file;
  o.variable = a.variable;
  o.unpack = a.unpack      ? recon::MatrixImportOptions::Unpack::kYes
             : a.no_unpack ? recon::MatrixImportOptions::Unpack::kNo
                           : recon::MatrixImportOptions::Unpack::kAuto;
  o.normalize = a.normalize;
  o.scale = a.scale;
  recon::check_output_folder(a.output);
  refuse_existing_output(a.output, a.force, a.output);
  int n_el = a.protocol.options.n_electrodes;
  if (!a.mesh_spec.empty()) {
    MeshSourceOptions source;
    source.spec = a.mesh_spec;
    source.n_electrodes = n_el;
    source.h0 = a.h0;
    const recon::Mesh mesh = load_mesh_source(source);
    n_el = a.protocol.electrodes_for(mesh);
    recon::MeshGeometry g;
    g.nodes = mesh.nodes;
    g.elements = mesh.elements;
    g.electrode_nodes = mesh.electrode_nodes;
    g.output_on = a.output_on == "nodes" ? recon::MeshGeometry::OutputOn::kNodes
                                         : recon::MeshGeometry::OutputOn::kElements;
    o.geometry = g;
  } else {
    o.geometry = recon::centred_disc_grid(a.grid);
  }
  a.protocol.make(n_el);
  o.protocol = a.protocol.options;
  const auto t = std::chrono::steady_clock::now();
  recon::Model model = recon::import_matrix(o);
  // The matrix was stored measurements × outputs: say so, the parameters alone hide it.
  if (nlohmann::json::parse(model.parameters_json, nullptr, false).value("transposed", false))
    fmt::print("transposed  {}'s matrix is {} × {} (measurements × outputs): used as {} × {}\n",
               a.file, model.n_meas(), model.n_out(), model.n_out(), model.n_meas());
  recon::save_model(a.output, model);
  fmt::print(
      "import      {:9.2f} ms  {} → {}\n\n",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count(),
      a.file, a.output);
  print_model_summary(stdout, model, a.output);
}

}  // namespace

void attach_model_import(CLI::App* model) {
  auto im = std::make_shared<ImportArgs>();
  auto* imp = model->add_subcommand(
      "import", "Turn a matrix from .npy or MATLAB .mat (e.g. EIDORS GREIT) into a Model file");
  imp->add_option("FILE", im->file, "Matrix file (.npy or .mat)")->required();
  imp->add_option("--variable", im->variable, ".mat variable (default: the only numeric one)");
  imp->add_flag("--unpack-eidors-symmetry", im->unpack,
                "Expand EIDORS' 16-fold symmetry packing (automatic for a 104 × 120 matrix)");
  imp->add_flag("--no-unpack", im->no_unpack, "Never unpack, even a 104 × 120 matrix");
  // The mask is built before the matrix's rows are compared with it: 40,000 took 1.6 GB first.
  imp->add_option("--grid", im->grid,
                  "Rows are an n × n grid of pixel centres over [-1,1]² (n from 2 to 1024)")
      ->capture_default_str()
      ->check(within(2, 1024, false, false));
  imp->add_option("--mesh", im->mesh_spec, "Rows are this mesh's elements or nodes (see build)");
  imp->add_option("--h0", im->h0, "Edge length when --mesh generates")->capture_default_str();
  imp->add_option("--output-on", im->output_on, "elements | nodes (with --mesh)")
      ->check(CLI::IsMember({"elements", "nodes"}))
      ->capture_default_str();
  im->protocol.add(imp);
  imp->add_flag("--normalize", im->normalize, "Images from (v − v_ref) / |v_ref|");
  imp->add_option("--scale", im->scale, "Multiply the matrix (−1 for pyEIT's ds = −H·dv)")
      ->capture_default_str();
  imp->add_option("-o,--output", im->output, "Model file to write (.h5)")->required();
  imp->add_flag("--force", im->force, "Replace the output file when it exists");
  imp->callback([im] { run_import(*im); });
}

}  // namespace eit::cli
