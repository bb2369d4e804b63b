// open_replay / open_recording: the factory the CLI uses for `--replay FILE`.
#include <stdexcept>

#include <fmt/format.h>

#include "eit/acquisition/openeit_line_decoder.hpp"
#include "eit/acquisition/raw_frame_decoder.hpp"
#include "eit/acquisition/replay_source.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition {

std::unique_ptr<ReplaySource> open_replay(const std::filesystem::path& path,
                                          const ReplayOptions& options,
                                          const recon::Protocol& model) {
  const RecordingOptions& r = options.recording;
  const std::string name = path.filename().string();
  detail::check_values_per_frame(path, r);
  if (r.format == "openeit-stream") {
    DeviceLayout l;
    if (!r.layout.empty()) {
      l = detail::with_overrides(parse_layout(r.layout, model), r, model);
      l.raw_values = r.values_per_frame;
    } else {
      const size_t n = static_cast<size_t>(model.n_electrodes);
      l = detail::with_overrides(
          detail::openeit_layout(r.values_per_frame ? r.values_per_frame : n * (n - 4)), r, model);
    }
    return std::make_unique<ReplaySource>(path, std::make_unique<OpenEitLineDecoder>(l, model), 0.0,
                                          options);
  }
  if (r.format == "f32-stream" || r.format == "f64-stream") {
    if (r.values_per_frame == 0)
      throw std::invalid_argument(
          fmt::format("{}: a raw stream has no header; give --values-per-frame", name));
    const DeviceLayout l = detail::generic_layout(path, r.values_per_frame, false, r, model);
    const SampleType t = r.format == "f32-stream" ? SampleType::kFloat32 : SampleType::kFloat64;
    return std::make_unique<ReplaySource>(path, std::make_unique<RawFrameDecoder>(l, model, t), 0.0,
                                          options);
  }
  return std::make_unique<ReplaySource>(open_recording_reader(path, r, model), options);
}

std::unique_ptr<pipeline::Source> open_recording(const std::filesystem::path& path,
                                       const ReplayOptions& options, const recon::Protocol& model) {
  return open_replay(path, options, model);
}

}  // namespace eit::acquisition
