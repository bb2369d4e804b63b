#pragma once
// Which reference frame (v_ref) the images are computed against, from the --reference text:
//
//   model          the model's v_ref (simulated for built models)
//   phantom        the synthetic source's homogeneous frame
//   first:N        the mean of the first N frames (captured from the stream by `run`)
//   mean:A-B       the mean of frames A..B of the recording (inclusive, 0-based)
//   frame:K        frame K of the recording
//   variable:NAME  a variable of the recording file (IIRC's v_reference, Montreal's zc_h_demo3,
//                  an eitstream raw file's v_ref), averaged when it holds several frames
//   file:PATH      the mean of every frame of another recording (any format run reads)
//
// The default is never the model's simulated v_ref for real data: the phantom's frame for the
// synthetic source, the file's stored reference when it has one (eitstream raw files), else
// first:10. The description (e.g. "first:10 (mean of frames 0–9)") is printed and recorded.
// Set-up only: reads files, allocates, throws CommandError naming the option.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/pipeline/reference_capture.hpp"
#include "eit/recon/model.hpp"

namespace eit::cli {

struct ReferenceContext {
  std::string recording;  // the recording being read ("" for live and synthetic sources)
  acquisition::RecordingOptions recording_options;
  const std::vector<double>* phantom = nullptr;  // the synthetic source's homogeneous frame
  bool capture_first = true;  // first:N as a stream capture (run) or computed here (reconstruct)
  bool loops = false;         // the recording is replayed again and again (run --loop)
  // run: the frames of the recording it has open (0: not known ahead, a stream decoder's file).
  uint64_t recording_frames = 0;
};

struct ReferenceChoice {
  pipeline::ReferenceOptions options;
  std::string spec;         // the resolved --reference text (the default filled in)
  std::string description;  // what it is, for the console and the file's `reference` attribute
};

ReferenceChoice choose_reference(const std::string& spec, const recon::Model& model,
                                 const ReferenceContext& context);

// For a gn model (absolute imaging, which uses no reference): a reference of `n_values` zeros,
// given, not captured, so no frame is spent on a capture (a capture would publish the first
// frames as empty images); described as "none". `given`: the user's --reference ("" when none),
// which the model ignores: a warning on stderr says so.
ReferenceChoice absolute_imaging_reference(size_t n_values, const std::string& given = "");

// The mean of frames [first, last] of a recording read for `model`; skips frames that fail to
// decode or hold non-finite values; throws when none is left.
struct FrameMean {
  std::vector<double> values;
  size_t used = 0;     // frames averaged
  size_t skipped = 0;  // frames in the range left out (unreadable or non-finite)
  size_t last = 0;     // the last frame of the range the recording has
  // What it is, as the file's `reference` attribute says: "mean of frames 0–219 (2 non-finite
  // left out)", never a range the recording does not have.
  std::string describe(size_t first) const;
};
FrameMean mean_of_frames(acquisition::RecordingReader& reader, size_t first, size_t last);

}  // namespace eit::cli
