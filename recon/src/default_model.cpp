#include "eit/recon/default_model.hpp"

#include <fmt/format.h>

#include "eit/recon/default_circle_mesh.hpp"
#include "eit/recon/forward_model.hpp"
#include "eit/recon/greit.hpp"
#include "eit/recon/model_file.hpp"

namespace eit::recon {

Model default_model() {
  // The stored Gmsh mesh of the default options: no Gmsh load, the same model in every build.
  const Mesh mesh = default_circle_mesh();
  ForwardModel forward(mesh, make_protocol({}));
  ReconstructionMatrix rm = build_greit(forward, GreitOptions{});
  Model model = std::move(rm.model);
  model.algorithm = "greit";
  if (model.parameters_json.size() >= 2 && model.parameters_json.back() == '}')
    model.parameters_json.insert(
        model.parameters_json.size() - 1,
        fmt::format("{}\"mesh\":\"{}\"", model.parameters_json.size() > 2 ? "," : "",
                    "gmsh circle h0=0.1"));
  model.id = model_content_hash(model);
  return model;
}

}  // namespace eit::recon
