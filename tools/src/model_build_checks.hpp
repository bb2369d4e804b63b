#pragma once
// `model build`'s checks of which options were given: set-up code, before the slow steps.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace eit::cli {

// The names of the options the user gave, e.g. "--train, --targets"; empty if none.
std::string given_options(const std::vector<CLI::Option*>& options);

// Throws std::invalid_argument naming the options given to `build` that `algorithm` (or, for the
// contact impedance and electrode width, a point electrode model) does not read: given to another
// they changed nothing, not even the model's id (jac with --grid 64 --s 5 --weight simple
// --iterations 3 gave the plain jac model, silently).
void refuse_unused_options(const CLI::App& build, const std::string& algorithm,
                           const std::string& electrode_model);

}  // namespace eit::cli
