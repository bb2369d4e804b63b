#include "model_build_checks.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace eit::cli {

std::string given_options(const std::vector<CLI::Option*>& options) {
  std::string names;
  for (const CLI::Option* o : options)
    if (o && o->count() > 0) names += (names.empty() ? "" : ", ") + o->get_name();
  return names;
}

void refuse_unused_options(const CLI::App& build, const std::string& algorithm,
                           const std::string& electrode_model) {
  struct Rule {
    const char* option;
    std::vector<std::string> algorithms;
  };
  static const Rule rules[] = {
      {"--prior", {"jac", "gn"}},
      {"--p", {"jac", "greit", "gn"}},
      {"--lambda", {"jac", "greit", "gn"}},
      {"--grid", {"greit"}},
      {"--s", {"greit"}},
      {"--ratio", {"greit"}},
      {"--weight", {"bp"}},
      {"--lambda-decay", {"gn"}},
      {"--lambda-min", {"gn"}},
      {"--iterations", {"gn"}},
      {"--tolerance", {"gn"}},
      {"--start", {"gn"}},
      {"--start-value", {"gn"}},
      {"--start-file", {"gn"}},
      {"--pyeit-compat", {"gn"}},
      {"--complex", {"gn"}},
      {"--frame-iterations", {"gn"}},
  };
  const auto given = [&](const char* name) {
    const CLI::Option* o = build.get_option_no_throw(name);
    return o && o->count() > 0;
  };
  std::string unused;
  for (const Rule& r : rules)
    if (given(r.option) &&
        std::find(r.algorithms.begin(), r.algorithms.end(), algorithm) == r.algorithms.end())
      unused += (unused.empty() ? "" : ", ") + std::string(r.option);
  if (!unused.empty())
    throw std::invalid_argument(
        fmt::format("{}: not used by --algorithm {}; leave them out or choose the algorithm "
                    "they belong to (model build --help)",
                    unused, algorithm));
  if (electrode_model != "complete")
    for (const char* cem : {"--contact-impedance", "--electrode-width"})
      if (given(cem))
        throw std::invalid_argument(fmt::format(
            "{}: used only by the complete electrode model: add --electrode-model complete", cem));
}

}  // namespace eit::cli
