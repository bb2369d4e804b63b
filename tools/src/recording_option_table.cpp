#include "recording_option_table.hpp"

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {

void add_recording_options(CLI::App* cmd, RecordingArgs& a, bool replay) {
  cmd->add_option("--recording-format", a.format,
                  "Recording format: draeger get mat openeit csv npy f32 f64 h5, or the stream "
                  "decoders openeit-stream f32-stream f64-stream (default: detect by extension "
                  "and content)");
  cmd->add_option("--variable", a.variable,
                  ".mat: the variable holding the frames (default: the largest fitting); .h5: "
                  "the dataset (default frames)");
  cmd->add_option("--values-per-frame", a.values_per_frame,
                  "Raw f32/f64 files: values per frame (required there)");
  cmd->add_option("--layout", a.layout,
                  "The device's order when the format does not fix it: model | std | "
                  "rotate_meas | full | full_rotate");
  cmd->add_option("--complex", a.complex_part,
                  "Complex data: real | imag | magnitude | interleaved ((re, im) per measurement, "
                  "for a gn model built with --complex)")
      ->capture_default_str();
  cmd->add_flag("--invert", a.invert,
                "Flip the recording's polarity (EIDORS-convention data such as IIRC)");
  if (replay)
    cmd->add_option("--speed", a.speed, "Replay at k× the recorded rate")->capture_default_str();
}

acquisition::RecordingOptions to_recording_options(const RecordingArgs& a) {
  acquisition::RecordingOptions r;
  r.format = a.format;
  r.variable = a.variable;
  if (a.values_per_frame > acquisition::kMaxValuesPerFrame)
    throw CommandError(fmt::format("--values-per-frame {}: expected at most {}", a.values_per_frame,
                                   acquisition::kMaxValuesPerFrame));
  r.values_per_frame = a.values_per_frame;
  r.layout = a.layout;
  try {
    r.complex_part = acquisition::parse_complex_part(a.complex_part);
  } catch (const std::exception&) {
    throw CommandError(
        fmt::format("--complex '{}': expected real, imag, magnitude or interleaved",
                    a.complex_part));
  }
  r.invert = a.invert;
  if (!(a.speed > 0)) throw CommandError(fmt::format("--speed {}: expected > 0", a.speed));
  return r;
}

}  // namespace eit::cli
