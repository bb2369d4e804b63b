#include "listen_save.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {
namespace {

// NumPy .npy v1.0 header: magic, header length, a dict padded so the data starts 64-byte aligned.
std::string npy_header(const sinks::ImageHeader& h) {
  const std::string shape = h.ndim == 2 ? fmt::format("({}, {})", h.shape[0], h.shape[1])
                                        : fmt::format("({},)", h.shape[0]);
  std::string dict =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape);
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  const auto len = static_cast<uint16_t>(dict.size());
  std::string out("\x93NUMPY\x01\x00", 8);
  out.append(reinterpret_cast<const char*>(&len), 2);
  return out + dict;
}

}  // namespace

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
  const std::string header = raw_ ? std::string() : npy_header(h);
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
