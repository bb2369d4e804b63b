#pragma once
// `eitstream reconstruct nats://HOST:PORT?site=S&bed=B[&since=all|SECONDS]`: one bed's raw frames
// replayed from JetStream (an ordered consumer that ends once caught up) through the streaming
// pipeline (lossless, the CPU backend, the model's v_ref) into an image file. In a build without
// libnats it says so.
#include <filesystem>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::cli {

struct NatsReconstructResult {
  uint64_t frames_in = 0, images = 0, bad = 0, gaps = 0;
  double wall_s = 0;
};

NatsReconstructResult reconstruct_nats(const std::string& uri, const recon::Model& model,
                                       const std::filesystem::path& output, bool quiet);

}  // namespace eit::cli
