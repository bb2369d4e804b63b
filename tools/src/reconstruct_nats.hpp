#pragma once
// `eitstream reconstruct nats://HOST:PORT?site=S&bed=B[&since=all|SECONDS]`: one bed's raw frames
// replayed from JetStream (an ordered consumer that ends once caught up) through the streaming
// pipeline (lossless; --backend as for any reconstruct) into an image file. References: model
// (the default, as before), first:N (captured from the replayed stream) or file:PATH; the others
// name frames of a recording file and are refused by name. In a build without libnats it says so.
#include <filesystem>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::cli {

struct NatsReconstructOptions {
  std::string backend = "auto";  // auto | cpu | cuda (backend_factory.hpp)
  std::string reference;         // --reference text; empty: model
  bool normalize = false;        // dv / |v_ref| (else the model's setting)
  int deflate = 0;               // image file compression, 0–9
  size_t chunk_frames = 256;     // rows per HDF5 chunk
  size_t max_batch = 256;        // frames per backend call
  bool quiet = false;
  bool replace_existing = false;  // --force: replace an existing image file
  double fps = 0;  // --fps: wins over the frames' Eit-Rate, as for run --source (0: theirs)
};

struct NatsReconstructResult {
  uint64_t frames_in = 0, images = 0, bad = 0, gaps = 0;
  double wall_s = 0;
};

NatsReconstructResult reconstruct_nats(const std::string& uri, const recon::Model& model,
                                       const std::filesystem::path& output,
                                       const NatsReconstructOptions& options);

}  // namespace eit::cli
