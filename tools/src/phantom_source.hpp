#pragma once
// The breathing phantom as a source of `eitstream run --source` and `eitstream emulate --from`:
//   phantom:breathing[?rate=BPM&tidal=DROP&delay=S&lung=R&positions=K]
// rate: breaths per minute (default 20); tidal: the lungs' conductivity drop at end inspiration,
// 0 < tidal < 1 (default 0.3; the tidal impedance variation scales with it); delay: how many
// seconds the patient's right lung lags the left (default 0); lung: lung disc radius, fraction of
// the body radius (default 0.28); positions: precomputed phases per breath (default 64).
// The plain `synthetic` source (an anomaly orbiting in the body) is unchanged.
#include <optional>
#include <string>
#include <string_view>

#include <memory>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/mesh.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::cli {

// True when a --source (run) or --from (emulate) names a built-in phantom: `synthetic` or a
// "phantom:" spec, whose kind and options parse_breathing_source checks.
bool is_phantom_source(std::string_view source) noexcept;

// The spec's breathing options; nullopt when `source` is not a "phantom:" spec. Throws
// CommandError naming the key and value for an unknown key, a value that is not a number, or a
// phantom kind other than "breathing".
std::optional<acquisition::BreathingOptions> parse_breathing_source(const std::string& source);

// The breathing phantom measured with `protocol` on `mesh` at rate_hz frames/s (one breath every
// rate_hz · 60 / rate frames), paced by the source when `paced` (else as fast as it is read, for a
// caller that paces), noise at snr_db. Solves the forward model for every phase (allocates;
// set-up only). Throws CommandError for options the phantom refuses.
std::unique_ptr<pipeline::Source> open_breathing_phantom(const acquisition::BreathingOptions& b,
                                                         double rate_hz, double snr_db,
                                                         const recon::Protocol& protocol,
                                                         const recon::Mesh& mesh,
                                                         bool paced = true);

// One line for --help.
inline constexpr const char* kBreathingSourceHelp =
    "phantom:breathing?rate=BPM&tidal=DROP&delay=S&lung=R (two breathing lungs: rate breaths/min "
    "(20), lung conductivity drop at end inspiration 0..1 (0.3), right-lung delay in s (0), lung "
    "radius as a fraction of the body (0.28))";

}  // namespace eit::cli
