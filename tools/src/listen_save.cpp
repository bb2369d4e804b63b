#include "listen_save.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/recon/npy_header.hpp"

namespace eit::cli {

ImageSaver::ImageSaver(const std::string& dir, const std::string& format)
    : dir_(dir), raw_(format == "raw") {
  if (format != "npy" && format != "raw")
    throw CommandError(fmt::format("--format '{}': expected npy or raw", format));
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_))
    throw CommandError(fmt::format("--save '{}': cannot create the folder: {}", dir,
                                   ec ? ec.message() : "a file of that name exists"));
}

std::filesystem::path ImageSaver::path_of(const sinks::ImageHeader& h) const {
  return dir_ / fmt::format("img_{:016x}_{:08d}.{}", h.series_id, h.seq, raw_ ? "f32" : "npy");
}

void ImageSaver::save(const sinks::ImageHeader& h, std::span<const std::byte> payload) {
  const auto path = path_of(h);
  // "x": created here or not at all, so an image already on disk is never overwritten.
  FILE* f = std::fopen(path.c_str(), "wbx");
  if (!f) {
    const int err = errno;
    ++(err == EEXIST ? refused_ : failed_);
    report_once(fmt::format("{}: {}", path.string(),
                            err == EEXIST ? "exists, not overwritten" : std::strerror(err)));
    return;
  }
  const uint64_t npy_shape[2] = {h.shape[0], h.shape[1]};
  const std::string header =
      raw_ ? std::string() : recon::npy_float32_header(std::span(npy_shape, h.ndim == 2 ? 2 : 1));
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(payload.data(), 1, payload.size(), f) == payload.size();
  int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;  // a full disk often shows only here
  if (!ok) {
    std::remove(path.c_str());  // a partial image must not look like a saved one
    ++failed_;
    report_once(fmt::format("{}: write failed: {}", path.string(), std::strerror(err)));
    return;
  }
  ++saved_;
}

void ImageSaver::report_once(const std::string& problem) {
  if (reported_) return;
  reported_ = true;
  fmt::print(stderr, "eitstream listen: image not saved: {} (further ones are counted)\n", problem);
}

}  // namespace eit::cli
