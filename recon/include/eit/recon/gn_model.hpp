#pragma once
// Building a "gn" Model (absolute imaging by Gauss–Newton): mesh, protocol, electrode model and
// the Gauss–Newton settings, no H. Stored by save_model under /gn (docs/formats.md). Set-up only.
#include <string>

#include "eit/recon/model.hpp"

namespace eit::recon {

// Validates the options against the mesh (throws std::invalid_argument naming the field) and
// fills geometry (σ on elements), parameters_json and gn.
Model make_gn_model(const Mesh& mesh, const Protocol& protocol, const ForwardOptions& forward,
                    const GnOptions& options);

// The settings as JSON (hashed into the model id, shown by `model info`).
std::string gn_parameters_json(const GnSetup& setup);

}  // namespace eit::recon
