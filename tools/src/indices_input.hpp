#pragma once
// Image sequences for `eitstream indices`: an eitstream image file (docs/formats.md, "Image
// file"), or a recording reconstructed here with a model (CpuReconstructor) and a reference
// taken from the recording itself. Set-up code: allocates, reads files, throws naming the file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/model.hpp"

namespace eit::cli {

struct ImageSequence {
  size_t n_frames = 0, n_out = 0;
  std::vector<float> images;  // n_frames × n_out, as eitstream publishes them
  std::vector<uint64_t> seq;
  std::vector<int64_t> t_ns;
  std::vector<uint32_t> flags;
  double rate_hz = 0;  // 0: unknown
  std::variant<recon::MeshGeometry, recon::GridGeometry> geometry;
  std::string description;
};

// True when `path` is an HDF5 file of images (format attribute 'eitstream-images', or none),
// false for anything else (a recording of raw frames, another format): those are reconstructed.
bool is_image_file(const std::filesystem::path& path);

// Reads /images, /seq, /t_acquired_ns, /flags, /geometry and the root attributes.
ImageSequence read_image_file(const std::filesystem::path& path);

// reference: "all" (mean of every frame), "first:N" (mean of the first N) or "model". `options`:
// how to read the recording (format, layout, polarity…), as for reconstruct.
ImageSequence reconstruct_recording(const std::filesystem::path& path, const recon::Model& model,
                                    const std::string& reference,
                                    const acquisition::RecordingOptions& options);

}  // namespace eit::cli
