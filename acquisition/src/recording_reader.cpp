// open_recording_reader: picks the codec by --format, else the extension, else the content.
#include "eit/acquisition/recording_reader.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "file_handle.hpp"
#include "recording_formats.hpp"

namespace eit::acquisition {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string by_content(const detail::FileHandle& f) {
  char head[4096] = {};
  const long got = f.read_some(0, head, sizeof(head));
  if (got <= 0) return {};
  const std::string_view s(head, static_cast<size_t>(got));
  if (s.starts_with("\x93NUMPY")) return "npy";
  if (s.starts_with("\x89HDF\r\n\x1a\n")) return "h5";
  if (s.starts_with("MATLAB 5.0") || s.starts_with("MATLAB 7.3")) return "mat";
  if (s.starts_with("---Draeger EIT-Software---")) return "get";
  if (s.size() >= 8 && (s[0] == 31 || s[0] == 32 || s[0] == 51) && s[1] == 0 && s[2] == 0 &&
      s[3] == 0 && s.substr(0, 128).find("Draeger") != std::string_view::npos)
    return "draeger";
  if (s.find("magnitudes") != std::string_view::npos) return "openeit";
  return {};
}

}  // namespace

std::string detect_recording_format(const std::filesystem::path& path) {
  const detail::FileHandle f(path);
  const std::string ext = lower(path.extension().string());
  const std::string content = by_content(f);
  if (ext == ".eit") return "draeger";
  if (ext == ".get") return "get";
  if (ext == ".mat") return "mat";
  if (ext == ".npy") return "npy";
  if (ext == ".csv") return "csv";
  if (ext == ".f32") return "f32";
  if (ext == ".f64") return "f64";
  if (ext == ".h5" || ext == ".hdf5") return "h5";
  if (!content.empty()) return content;
  if (ext == ".txt") return "csv";
  throw std::invalid_argument(fmt::format(
      "{}: cannot tell the format from the extension '{}' or the content; give --recording-format "
      "(draeger, get, mat, openeit, csv, npy, f32, f64, h5)",
      path.filename().string(), ext));
}

void RecordingReader::set_map(const DeviceLayout& layout, const recon::Protocol& model) {
  try {
    map_ = MeasurementMap(layout, model);
  } catch (const std::invalid_argument& e) {
    // The usual cause: a recording from another protocol (opposite drive, 32 electrodes) played
    // through the built-in adjacent 16-electrode model.
    throw std::invalid_argument(fmt::format(
        "{}: {}; give a model built for the recording (eitstream model build --electrodes {} "
        "--drive-distance {} --measure-step {} -o model.h5, then --model model.h5), or the "
        "recording's order with --layout",
        info_.path.filename().string(), e.what(), layout.n_electrodes, layout.drive_distance,
        layout.measure_step));
  }
  raw_.assign(map_.raw_scalars(), 0.0);
}

namespace detail {
void check_values_per_frame(const fs::path& path, const RecordingOptions& o) {
  if (o.values_per_frame > kMaxValuesPerFrame)
    throw std::invalid_argument(fmt::format("{}: {} values per frame, expected at most {}",
                                            path.filename().string(), o.values_per_frame,
                                            kMaxValuesPerFrame));
}
}  // namespace detail

std::unique_ptr<RecordingReader> open_recording_reader(const std::filesystem::path& path,
                                                       const RecordingOptions& options,
                                                       const recon::Protocol& model) {
  detail::check_values_per_frame(path, options);
  std::string format =
      options.format.empty() ? detect_recording_format(path) : lower(options.format);
  // The stream decoders (replay through run and emulate) read the same files as these formats;
  // read whole (reconstruct, indices, a reference taken from the file) they are those formats.
  if (format == "f32-stream" || format == "f64-stream" || format == "openeit-stream")
    format = format.substr(0, format.size() - 7);
  if (format == "draeger" || format == "eit") return detail::open_draeger_eit(path, options, model);
  if (format == "get") return detail::open_goe_get(path, options, model);
  if (format == "mat") return detail::open_mat(path, options, model);
  if (format == "openeit") return detail::open_openeit_text(path, options, model);
  if (format == "csv") return detail::open_csv(path, options, model);
  if (format == "npy") return detail::open_npy(path, options, model);
  if (format == "h5") return detail::open_hdf5_frames(path, options, model);
  if (format == "f32") return detail::open_raw_frames(path, options, model, false);
  if (format == "f64") return detail::open_raw_frames(path, options, model, true);
  throw std::invalid_argument(fmt::format(
      "{}: format '{}' unknown; expected draeger, get, mat, openeit, csv, npy, f32, f64 or h5",
      path.filename().string(), options.format));
}

}  // namespace eit::acquisition
