// `eitstream model build`: mesh → forward model → Jacobian → reconstruction matrix → Model file,
// each step timed on its own line.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend_factory.hpp"
#include "cmd_model_build.hpp"
#include "eit/recon/back_projection.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/greit.hpp"
#include "eit/recon/greit_3d.hpp"
#include "eit/recon/jac.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/recon/model_header.hpp"
#include "eit/recon/protocol_rings.hpp"
#include "eit/recon/voxel_grid.hpp"
#include "existing_output.hpp"
#include "gn_build.hpp"
#include "jac_solve_setup.hpp"
#include "memory_budget.hpp"
#include "mesh_source.hpp"
#include "model_build_checks.hpp"
#include "model_summary.hpp"
#include "option_checks.hpp"
#include "protocol_args.hpp"

namespace eit::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct BuildArgs {
  MeshSourceOptions mesh;
  ProtocolArgs protocol;
  std::string electrode_model = "point";
  double contact_impedance = 0.01;
  double electrode_width = 0.1;
  std::string algorithm = "greit";
  std::string backend = "auto";  // where JAC's dense solve runs
  std::string prior = "kotre", weight = "none";
  double p = 0.2, lambda = 0.01, s = 20.0, ratio = 0.1;
  int grid = 32;
  std::string voxels;
  int voxel_samples = 3;
  std::string train = "spheres";  // 3-D GREIT
  int targets = 1000;
  double target_size = 0.05;
  bool jac_normalized = false, normalize = false, force = false;
  CLI::Option *p_opt = nullptr, *lambda_opt = nullptr, *grid_opt = nullptr;
  std::vector<CLI::Option*> greit_3d_opts;  // --train, --targets, --target-size
  const CLI::App* app = nullptr;            // the subcommand: which options were given
  std::string output;
  int threads = 0;  // Jacobian threads (ForwardOptions::threads)
  GnBuildArgs gn;
};

// The options the 2-D and the 3-D GREIT share (p and λ only where given: their defaults differ).
template <class GreitOptionsT>
GreitOptionsT greit_shared_options(const BuildArgs& a) {
  GreitOptionsT o;
  o.s = a.s;
  o.ratio = a.ratio;
  if (*a.p_opt) o.p = a.p;
  if (*a.lambda_opt) o.lambda = a.lambda;
  o.jac_normalized = a.jac_normalized;
  o.normalize = a.normalize;
  return o;
}

recon::Greit3dOptions greit_3d_options(const BuildArgs& a,
                                       const std::optional<recon::VoxelGridOptions>& voxels) {
  auto o = greit_shared_options<recon::Greit3dOptions>(a);
  if (voxels) o.grid = *voxels;
  o.train = recon::parse_greit_train(a.train);
  o.n_targets = a.targets;
  o.target_size = a.target_size;
  return o;
}

void run_build(BuildArgs& a) {
  const auto start = Clock::now();
  refuse_unused_options(*a.app, a.algorithm, a.electrode_model);
  // The 3-D GREIT's training options given to another algorithm would be silently ignored.
  const std::string greit_3d_given = given_options(a.greit_3d_opts);
  if (!greit_3d_given.empty() && a.algorithm != "greit")
    throw std::invalid_argument(fmt::format(
        "{}: training options of the 3-D GREIT (--dim 3 --algorithm greit), not of --algorithm {}",
        greit_3d_given, a.algorithm));
  recon::check_output_folder(a.output);  // these checks come before the slow steps
  refuse_existing_output(a.output, a.force, a.output);
  if (*a.lambda_opt && a.algorithm != "gn" && !(a.lambda > 0))
    throw std::invalid_argument(fmt::format(
        "--lambda {}: expected a regularisation > 0 for --algorithm {}", a.lambda, a.algorithm));
  if (!(a.target_size > 0 && a.target_size < 0.5))  // checked before the slow steps
    throw std::invalid_argument(fmt::format(
        "--target-size {}: expected a fraction of the body's largest extent in (0, 0.5)",
        a.target_size));
  std::optional<recon::VoxelGridOptions> voxels;  // checked before the slow steps
  if (!a.voxels.empty()) {
    voxels = recon::parse_voxel_spec(a.voxels);
    voxels->samples = a.voxel_samples;
  }
  const bool complete = a.electrode_model == "complete";
  a.mesh.electrode_width = complete ? a.electrode_width : 0.0;
  a.mesh.n_electrodes = a.protocol.options.n_electrodes;
  // Generated 3-D meshes name their mesher (in the log line and, when not the default, the
  // model's parameters, so Delaunay models keep their ids); csv/msh meshes have none.
  const bool generated_3d =
      a.mesh.dim == 3 && a.mesh.spec.rfind("csv:", 0) != 0 && a.mesh.spec.rfind("msh:", 0) != 0;
  // JAC with a diagonal prior on the GPU: the CUDA start-up (plugin, context, handles) runs on a
  // thread of its own from here (cuda) or once the model is known to be large enough (auto).
  JacSolveSetup jac_solve(a.backend);
  const bool diagonal_jac = a.algorithm == "jac" &&
                            recon::parse_jac_prior(a.prior) != recon::JacOptions::Prior::kLaplacian;
  if (diagonal_jac && a.backend == "cuda") jac_solve.warm_up_in_background();
  auto t = Clock::now();
  const recon::Mesh mesh = load_mesh_source(a.mesh);
  fmt::print("mesh        {:9.2f} ms  {} nodes, {} {}, {} electrodes ({}{})\n", ms_since(t),
             mesh.n_nodes(), mesh.n_elems(), mesh.dim() == 3 ? "tetrahedra" : "triangles",
             mesh.n_electrodes(), a.mesh.spec,
             a.mesh.dim == 3 ? fmt::format(", height {}, {} ring(s){}", a.mesh.height, a.mesh.rings,
                                           generated_3d ? ", " + a.mesh.mesher + " mesher" : "")
                             : "");
  const recon::Protocol protocol =
      a.protocol.make(a.protocol.electrodes_for(mesh), electrode_ring_count(mesh));
  // The Jacobian (n_meas × n_elems doubles) is the first matrix every algorithm builds.
  check_fits_in_memory(
      8.0 * static_cast<double>(protocol.n_meas()) * static_cast<double>(mesh.n_elems()),
      "the Jacobian",
      fmt::format("{} measurements × {} elements × 8 bytes", protocol.n_meas(), mesh.n_elems()),
      "use fewer electrodes, a coarser mesh (--h0), or a machine with more memory");
  const double jac_work = static_cast<double>(mesh.n_elems()) *
                          static_cast<double>(protocol.n_meas()) *
                          static_cast<double>(protocol.n_meas());  // n_elems · n_meas²
  if (diagonal_jac && a.backend == "auto" && jac_work >= kJacGpuMinWork)
    jac_solve.warm_up_in_background();

  recon::ForwardOptions fo;
  fo.electrodes = complete ? recon::ForwardOptions::Electrodes::kComplete
                           : recon::ForwardOptions::Electrodes::kPoint;
  fo.contact_impedance = a.contact_impedance;
  fo.electrode_width = a.electrode_width;
  fo.threads = a.threads;
  t = Clock::now();
  const bool greit_3d = a.algorithm == "greit" && mesh.dim() == 3;
  if (!a.voxels.empty() && (mesh.dim() != 3 || a.algorithm == "gn"))
    throw std::invalid_argument(fmt::format(
        "--voxels {}: voxel output needs a 3-D mesh and --algorithm jac, bp or greit (got a {}-D "
        "mesh and {})",
        a.voxels, mesh.dim(), a.algorithm));
  if (!greit_3d && !greit_3d_given.empty())
    throw std::invalid_argument(fmt::format(
        "{}: training options of the 3-D GREIT; the 2-D GREIT (a {}-D mesh) has --grid, --ratio, "
        "--s, --p and --lambda",
        greit_3d_given, mesh.dim()));
  if (greit_3d && *a.grid_opt)
    throw std::invalid_argument(
        "--grid is the 2-D GREIT's n × n pixel grid; a 3-D GREIT's grid is --voxels NXxNYxNZ");
  if (a.algorithm == "gn")
    return build_gn_model(
        mesh, protocol, fo,
        a.gn.options(a.prior, *a.p_opt ? &a.p : nullptr, *a.lambda_opt ? &a.lambda : nullptr),
        a.output);
  recon::ForwardModel forward(mesh, protocol, fo);
  const Eigen::VectorXd v0 = forward.solve();
  fmt::print("forward     {:9.2f} ms  {} measurements, {} electrode model\n", ms_since(t),
             v0.size(), a.electrode_model);
  t = Clock::now();
  Eigen::MatrixXd jt;  // JAC: Jᵀ computed once, here, and handed to the matrix step
  if (a.algorithm == "jac" || greit_3d)
    jt = forward.jacobian_transposed({}, a.jac_normalized);
  else
    forward.jacobian();
  fmt::print("jacobian    {:9.2f} ms\n", ms_since(t));

  t = Clock::now();
  recon::ReconstructionMatrix rm;
  if (a.algorithm == "jac") {
    recon::JacOptions o;
    o.prior = recon::parse_jac_prior(a.prior);
    if (*a.p_opt) o.p = a.p;
    if (*a.lambda_opt) o.lambda = a.lambda;
    o.jac_normalized = a.jac_normalized;
    o.normalize = a.normalize;
    o.threads = a.threads;  // the solve's tiles are fixed: the model does not depend on it
    // Voxel output maps the double H; otherwise the solve may hand back the model's float H.
    if (o.prior != recon::JacOptions::Prior::kLaplacian)
      jac_solve.configure(o, jac_work, /*model_form=*/!voxels);
    rm = recon::build_jac(forward, jt, o);
    jt = Eigen::MatrixXd();  // 1.5 GB at 200,000 × 928
  } else if (a.algorithm == "bp") {
    recon::BpOptions o;
    o.weight = recon::parse_bp_weight(a.weight);
    o.normalize = a.normalize;
    rm = recon::build_bp(forward, o);
  } else if (greit_3d) {
    rm = recon::build_greit_3d(forward, jt, greit_3d_options(a, voxels));
    jt = Eigen::MatrixXd();
    voxels.reset();  // the voxel grid is GREIT's own output, not a map applied afterwards
  } else {
    auto o = greit_shared_options<recon::GreitOptions>(a);
    o.n = a.grid;
    rm = recon::build_greit(forward, o);
  }
  const double matrix_ms = ms_since(t);
  fmt::print("matrix      {:9.2f} ms  {} H {} × {}{}\n", matrix_ms, a.algorithm, rm.model.H.rows(),
             rm.model.H.cols(), jac_solve.where().empty() ? "" : ", solve on " + jac_solve.where());
  if (!jac_solve.note().empty()) fmt::print("            {}\n", jac_solve.note());
  if (const std::string parts = jac_solve.timing(matrix_ms); !parts.empty())
    fmt::print("            {}\n", parts);
  // Appended to the JSON object: the protocol, and the mesher (see above).
  for (const std::string& p :
       {a.protocol.json(), generated_3d && a.mesh.mesher != "delaunay"
                               ? fmt::format(R"("mesher": "{}")", a.mesh.mesher)
                               : std::string()}) {
    if (p.empty()) continue;
    std::string& params = rm.model.parameters_json;
    const auto close = params.rfind('}');
    if (close == std::string::npos)
      params = "{" + p + "}";
    else
      params.insert(close, (params.find(':') == std::string::npos ? "" : ", ") + p);
  }
  if (voxels) {
    t = Clock::now();
    const recon::VoxelGridOptions& vo = *voxels;
    recon::map_to_voxels(rm, vo);
    fmt::print("voxels      {:9.2f} ms  {} × {} × {} (nx × ny × nz), {}³ samples per voxel\n",
               ms_since(t), vo.nx, vo.ny, vo.nz, vo.samples);
  }
  t = Clock::now();
  recon::save_model(a.output, rm.model);
  fmt::print("save        {:9.2f} ms  {}\n", ms_since(t), a.output);
  fmt::print("total       {:9.2f} ms\n\n", ms_since(start));
  print_model_summary(stdout, rm.model, a.output);
}

}  // namespace

void attach_model_build(CLI::App* model) {
  auto b = std::make_shared<BuildArgs>();
  auto* build = model->add_subcommand(
      "build", "Mesh → forward model → Jacobian → reconstruction matrix → Model file (.h5)");
  build
      ->add_option("--mesh", b->mesh.spec,
                   "circle[:R] | ellipse:A,B | polygon:FILE | csv:DIR | msh:FILE")
      ->capture_default_str();
  build->add_option("--h0", b->mesh.h0, "Target edge length of generated meshes")
      ->capture_default_str();
  build
      ->add_option(
          "--dim", b->mesh.dim,
          "2: triangles of the outline; 3: tetrahedra of the outline extruded along +z "
          "from 0 to --height (--mesh circle[:R] gives a cylinder tank, ellipse/polygon "
          "an extruded thorax), electrodes in --rings rings; csv/msh meshes keep their own")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str();
  build->add_option("--height", b->mesh.height, "3-D: extrusion height (model units)")
      ->capture_default_str();
  build
      ->add_option("--rings", b->mesh.rings,
                   "3-D: electrode rings (1..3); --electrodes counts all of them, N / rings per "
                   "ring, numbered ring by ring from the lowest")
      ->capture_default_str();
  build
      ->add_option("--ring-z", b->mesh.ring_z,
                   "3-D: ring heights, ascending in (0, height) (default: equally spaced, "
                   "height·(r + 1)/(rings + 1))")
      ->delimiter(',');
  build
      ->add_option("--h-electrode", b->mesh.h_electrode,
                   "3-D: edge length at the electrodes (refined within 2·h-electrode, growing to "
                   "h0 at 4×); 0 = h0 / 3")
      ->capture_default_str();
  build
      ->add_option(
          "--mesher", b->mesh.mesher,
          "3-D generated meshes: delaunay (Gmsh's 3-D Delaunay + optimiser: isotropic "
          "tetrahedra refined in a ball about each electrode, any patch shape; ~10 s CPU "
          "for 200,000 tetrahedra) | extruded (the cross-section's triangles, refined "
          "about the electrodes' angles, extruded by Gmsh in layers refined about the "
          "rings: several times faster, but anisotropic prisms cut into tetrahedra and more "
          "of them for the same --h-electrode; point and rect electrodes only). Both "
          "deterministic; recorded in the model's parameters")
      ->check(CLI::IsMember({"delaunay", "extruded"}))
      ->capture_default_str();
  b->protocol.add(build);
  build->add_option("--electrode-model", b->electrode_model, "point | complete")
      ->check(CLI::IsMember({"point", "complete"}))
      ->capture_default_str();
  build->add_option("--contact-impedance", b->contact_impedance, "CEM contact impedance z")
      ->capture_default_str();
  build
      ->add_option("--electrode-width", b->electrode_width,
                   "CEM electrode width: arc length (2-D and 3-D rect), diameter (3-D circle)")
      ->capture_default_str();
  build
      ->add_option("--electrode-shape", b->mesh.electrode_shape,
                   "3-D CEM patch: rect (--electrode-width along the outline × "
                   "--electrode-height along z, exact in the mesh) | circle (disc of diameter "
                   "--electrode-width)")
      ->check(CLI::IsMember({"rect", "circle"}))
      ->capture_default_str();
  build
      ->add_option("--electrode-height", b->mesh.electrode_height,
                   "3-D CEM rectangular patch height along z (≤ --height)")
      ->capture_default_str();
  build
      ->add_option("--algorithm", b->algorithm,
                   "jac | bp | greit | gn (absolute imaging by Gauss–Newton; --lambda is λ₀, "
                   "default 1, --p default 0.25)")
      ->check(CLI::IsMember({"jac", "bp", "greit", "gn"}))
      ->capture_default_str();
  build
      ->add_option("--backend", b->backend,
                   "Where JAC's n_meas-sized solve runs (double): auto (CUDA when the plugin, a "
                   "device and a large enough model are there) | cpu | cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  build->add_option("--prior", b->prior, "JAC prior: kotre | tikhonov | lm | noser | laplacian")
      ->capture_default_str();
  b->p_opt = build->add_option(
      "--p", b->p,
      "Prior exponent (JAC kotre, GREIT: Σ = diag(YYᵀ)^p); default 0.2, 3-D GREIT 0.5");
  b->lambda_opt = build->add_option("--lambda", b->lambda,
                                    "Regularisation (default: JAC 0.001, GREIT 0.01, pyEIT's)");
  // GREIT's weights take elements × n² doubles: 400 took 2.2 GB, 4096 would take hundreds; EIT's
  // resolution is far coarser than 256 × 256 pixels anyway.
  b->grid_opt = build->add_option("--grid", b->grid, "2-D GREIT grid size n (n × n, 2 to 256)")
                    ->capture_default_str()
                    ->check(within(2, 256, false, false));
  b->greit_3d_opts.push_back(
      build
          ->add_option("--train", b->train,
                       "3-D GREIT training: spheres (EIDORS-style: --targets small spheres through "
                       "the volume, desired images their blurred copies) | elements (pyEIT's 2-D "
                       "'dist' GREIT on voxels: one target per tetrahedron)")
          ->check(CLI::IsMember({"spheres", "elements"}))
          ->capture_default_str());
  b->greit_3d_opts.push_back(
      build->add_option("--targets", b->targets, "3-D GREIT: number of training spheres")
          ->check(CLI::Range(1, 1'000'000))
          ->capture_default_str());
  b->greit_3d_opts.push_back(
      build
          ->add_option(
              "--target-size", b->target_size,
              "3-D GREIT: training-sphere radius as a fraction of the body's largest extent")
          ->capture_default_str());
  build->add_option("--voxels", b->voxels,
                    "3-D jac/bp: images on an NXxNYxNZ voxel grid over the mesh's bounding box "
                    "(e.g. 32x32x4) instead of per tetrahedron or node; mask = voxel centre "
                    "outside the mesh. 3-D greit: its output grid (default 32x32x4)");
  build
      ->add_option("--voxel-samples", b->voxel_samples,
                   "With --voxels: S³ sample points per voxel, value = mean over those inside "
                   "(volume-weighted average of the tetrahedra); 1 = the tetrahedron holding the "
                   "centre")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  build->add_option("--s", b->s, "GREIT sigmoid slope")->capture_default_str();
  build
      ->add_option("--ratio", b->ratio,
                   "GREIT desired-image (PSF) radius as a fraction of the largest target–pixel "
                   "(voxel) distance")
      ->capture_default_str();
  build->add_option("--weight", b->weight, "BP weight: none | simple")->capture_default_str();
  build->add_flag("--jac-normalized", b->jac_normalized, "Build from J / |v0|");
  build->add_flag("--normalize", b->normalize, "Images from (v − v_ref) / |v_ref|");
  b->gn.add(build);
  build
      ->add_option(
          "--threads", b->threads,
          "CPU threads for the Jacobian and JAC's solve (0 = every core; the model does not "
          "depend on it)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  build->add_option("-o,--output", b->output, "Model file to write (.h5)")->required();
  build->add_flag("--force", b->force, "Replace the output file when it exists");
  b->app = build;
  build->callback([b] { run_build(*b); });
}

}  // namespace eit::cli
