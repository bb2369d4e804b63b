// `eitstream model build|info|import`: make, inspect and import reconstruction models.
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "cmd_model_build.hpp"
#include "cmd_model_import.hpp"
#include "command_registry.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/recon/model_file.hpp"
#include "eit/recon/model_header.hpp"
#include "existing_output.hpp"
#include "model_summary.hpp"

namespace eit::cli {
namespace {

recon::Model load_model_or_builtin(const std::string& what) {
  return what == "builtin" ? recon::default_model() : recon::load_model(what);
}

struct InfoArgs {
  std::string file;
  bool verify = false, quick = false;
};

// Models whose H is larger than this are described from the file's header unless --verify: a
// 0.7 GB H takes seconds to read and hash.
constexpr size_t kInfoReadLimit = size_t{64} << 20;

void run_info(const InfoArgs& a) {
  if (a.verify && a.quick) throw std::invalid_argument("--verify and --quick exclude each other");
  if (a.file != "builtin" && !a.verify) {
    const recon::ModelHeader h = recon::read_model_header(a.file);
    if (a.quick || (!h.model.gn && h.h_bytes() > kInfoReadLimit)) {
      print_model_header_summary(stdout, h, a.file);
      return;
    }
  }
  const recon::Model m = load_model_or_builtin(a.file);
  print_model_summary(stdout, m, a.file);
}

void attach(CLI::App& app) {
  auto* model = app.add_subcommand("model", "Build, inspect and import reconstruction models");
  model->require_subcommand(1);

  attach_model_build(model);

  auto* info = model->add_subcommand("info", "Describe a Model file (or 'builtin')");
  auto ia = std::make_shared<InfoArgs>();
  info->add_option("FILE", ia->file, "Model file (.h5), or builtin: the model run uses by default")
      ->required();
  info->add_flag("--verify", ia->verify,
                 "Read all of H: statistics from it and its id checked (default up to 64 MiB)");
  info->add_flag("--quick", ia->quick,
                 "Never read H: statistics as stored at save, the id unchecked (default above "
                 "64 MiB)");
  info->callback([ia] { run_info(*ia); });

  struct ExportArgs {
    std::string model, output;
    bool force = false;
  };
  auto ex = std::make_shared<ExportArgs>();
  auto* exp = model->add_subcommand(
      "export", "Write a model (e.g. builtin) to a Model file, to inspect or edit it in Python");
  exp->add_option("MODEL", ex->model, "builtin, or a Model file")->required();
  exp->add_option("-o,--output", ex->output, "Model file to write (.h5)")->required();
  exp->add_flag("--force", ex->force, "Replace the output file when it exists");
  exp->callback([ex] {
    recon::check_output_folder(ex->output);
    refuse_existing_output(ex->output, ex->force, ex->output);
    recon::Model m = load_model_or_builtin(ex->model);
    recon::save_model(ex->output, m);
    fmt::print("export {} → {} (model {})\n", ex->model, ex->output, m.id);
  });

  struct RehashArgs {
    std::string file, output;
    bool force = false;
  };
  auto rh = std::make_shared<RehashArgs>();
  auto* rehash = model->add_subcommand(
      "rehash",
      "Accept a Model file edited outside eitstream (h5py, MATLAB): check it, compute its new "
      "content id and write it (in place, or to -o)");
  rehash->add_option("FILE", rh->file, "Model file (.h5)")->required();
  rehash->add_option("-o,--output", rh->output, "Write here instead of over FILE");
  rehash->add_flag("--force", rh->force, "Replace the -o file when it exists");
  rehash->callback([rh] {
    const std::string out = rh->output.empty() ? rh->file : rh->output;
    if (!rh->output.empty() && rh->output != rh->file) {
      recon::check_output_folder(rh->output);
      refuse_existing_output(rh->output, rh->force, "-o " + rh->output);
    }
    std::string old_id;
    recon::Model m = recon::load_model_edited(rh->file, &old_id);
    recon::save_model(out, m);
    fmt::print("rehash {}: model id {} → {}{}\n", rh->file, old_id.empty() ? "(none)" : old_id,
               m.id, old_id == m.id ? " (unchanged)" : "");
  });

  attach_model_import(model);

  const std::string exit_status =
      std::string(
          "Exit status: 0 success; 1 a wrong file, mesh, matrix or option value (the "
          "message names it), or an output that exists (without --force) or cannot be "
          "written; 2 a command line that does not parse.") +
      kExitBySignal;
  model->footer(exit_status);
  for (CLI::App* sub : model->get_subcommands([](CLI::App*) { return true; }))
    sub->footer(exit_status);
}

const RegisterCommand kModel{20, attach};

}  // namespace
}  // namespace eit::cli
