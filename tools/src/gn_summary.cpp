#include "gn_summary.hpp"

#include <fmt/format.h>

#include "eit/pipeline/gn_reconstructor.hpp"

namespace eit::cli {

void print_gn_summary(std::FILE* out, const pipeline::Reconstructor& reconstructor) {
  const auto* gn = dynamic_cast<const pipeline::GnReconstructor*>(&reconstructor);
  if (!gn) return;
  const pipeline::GnFrameCounts& c = gn->counts();
  const recon::HomogeneousFit& f = c.first_fit;
  fmt::print(out,
             "gn: {} frames, {} diverged, {} iterations; first frame vs the model's homogeneous "
             "voltages F(1): correlation {:.4f}, σ₀ {:.6g}, residual {:.3g}\n",
             c.frames, c.diverged, c.iterations, f.correlation, f.sigma, f.residual);
  if (c.mismatched == 0) return;
  const char* why = f.correlation < -pipeline::kGnMatchCorrelation
                        ? "opposite polarity to the model's (EIDORS-convention data such as IIRC): "
                          "read it with --invert"
                        : "another measurement order or pattern than the model's protocol (check "
                          "--layout and the model's --order, --drive-distance, --measure-step)";
  fmt::print(stderr,
             "eitstream: warning: {} of {} cold-started frames do not match the gn model "
             "(correlation with F(1) below {}; the first: {:.4f}, scale s = {:.6g} in v ≈ s·F(1)): "
             "{}\n",
             c.mismatched, c.fitted, pipeline::kGnMatchCorrelation, f.correlation, f.scale, why);
}

}  // namespace eit::cli
