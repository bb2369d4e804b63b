#pragma once
// What `eitstream run` reads from: the model (a file or the built-in one), the frame source (the
// synthetic phantom, a recording or a live device) and the reference frame the images are
// computed against. Set-up only: reads files, allocates, throws CommandError naming the option.
#include <memory>
#include <string>
#include <vector>

#include "eit/pipeline/source.hpp"
#include "eit/recon/mesh.hpp"
#include "eit/recon/model.hpp"
#include "reference_choice.hpp"
#include "run_config.hpp"

namespace eit::cli {

// True when --source names a recording file (not the phantom, not a device URI).
bool is_recording(const RunConfig& c);

// Built in place: the source refers to the model, so neither may move.
struct RunInputs {
  explicit RunInputs(const RunConfig& c);
  RunInputs(const RunInputs&) = delete;
  RunInputs& operator=(const RunInputs&) = delete;

  recon::Model model;
  std::unique_ptr<recon::Mesh> builtin_mesh;  // the built-in model's mesh; null for a model file
  std::unique_ptr<pipeline::Source> source;
  std::vector<std::string> warnings;  // the replay's (printed at the start and in the summary)
  ReferenceChoice reference;
  bool device_source = false;  // a live device (the source watchdog applies)
  bool interleaved = false;    // complex frames as (re, im) pairs (--complex interleaved)
};

}  // namespace eit::cli
