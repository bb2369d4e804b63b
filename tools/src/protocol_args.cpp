// The protocol options of `eitstream model build|import` (protocol_args.hpp).
#include "protocol_args.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/protocol_rings.hpp"

namespace eit::cli {

void ProtocolArgs::add(CLI::App* cmd) {
  electrodes = cmd->add_option("--electrodes", options.n_electrodes, "Number of electrodes")
                   ->capture_default_str();
  cmd->add_option("--drive-distance", options.drive_distance,
                  "Drive pair distance (1 adjacent, N/2 opposite)")
      ->capture_default_str();
  cmd->add_option("--measure-step", options.measure_step, "Distance of the measuring pair")
      ->capture_default_str();
  cmd->add_option("--order", order, "Measurement order")
      ->check(CLI::IsMember({"std", "rotate_meas"}))
      ->capture_default_str();
  cmd->add_flag("--measure-on-driven", options.measure_on_driven,
                "Keep measurements on driven electrodes");
  cmd->add_option("--pattern", pattern,
                  "Several electrode rings (3-D): all (one ring of all N electrodes) | planar "
                  "(EIDORS mk_stim_patterns: drives within each ring, every drive measured on "
                  "every ring within the ring; skip-k drives: --drive-distance k+1) | square "
                  "(2 rings: one path bottom 0, top 0, top 1, bottom 1, …, driven and measured "
                  "as one ring; EIDORS' square is --drive-distance 5 --measure-step 5) | zigzag "
                  "(2 rings: path bottom 0, top 0, bottom 1, top 1, …)")
      ->check(CLI::IsMember({"all", "planar", "square", "zigzag"}))
      ->capture_default_str();
  cmd->add_option("--exclude-next", exclude_next,
                  "Also leave out measurements on the K electrodes next to a driven one "
                  "(EIDORS no_meas_current_nextK), 0..3")
      ->capture_default_str();
}

recon::Protocol ProtocolArgs::make(int n_electrodes, int rings) {
  options.n_electrodes = n_electrodes;
  options.order = recon::parse_measurement_order(order);
  n_rings = rings;
  return recon::make_ring_protocol(
      {options, rings, recon::parse_ring_pattern(pattern), exclude_next});
}

std::string ProtocolArgs::json() const {
  if (pattern == "all" && exclude_next == 0 && n_rings == 1) return "";
  return fmt::format(R"("protocol": {{"pattern": "{}", "n_rings": {}, "exclude_next": {}}})",
                     pattern, n_rings, exclude_next);
}

int ProtocolArgs::electrodes_for(const recon::Mesh& mesh) const {
  if (*electrodes && options.n_electrodes != mesh.n_electrodes())
    throw std::invalid_argument(fmt::format("--electrodes {} but the mesh has {} electrodes",
                                            options.n_electrodes, mesh.n_electrodes()));
  return mesh.n_electrodes();
}

}  // namespace eit::cli
