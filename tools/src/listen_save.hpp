#pragma once
// ImageSaver: `eitstream listen --save DIR` writes every image it is given into DIR as
// img_<series_id>_<seq>.npy (or .f32 with format raw): series_id as 16 hex digits, seq in decimal,
// at least 8 digits. The series in the name keeps apart images of a publisher restart, of a second
// stream on the same endpoint and of an earlier listen into the same folder. An existing file is
// never overwritten: that image is not saved and counted in refused(); a failed write (disk full)
// removes its partial file and is counted in failed(). The first such problem is said on stderr.
// Set-up (the folder, the format) throws CommandError. One thread; never throws per image.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "eit/sinks/image_header.hpp"

namespace eit::cli {

class ImageSaver {
 public:
  ImageSaver(const std::string& dir, const std::string& format);  // format: npy | raw

  void save(const sinks::ImageHeader& h, std::span<const std::byte> payload);
  std::filesystem::path path_of(const sinks::ImageHeader& h) const;

  uint64_t saved() const noexcept { return saved_; }
  uint64_t refused() const noexcept { return refused_; }
  uint64_t failed() const noexcept { return failed_; }

 private:
  void report_once(const std::string& problem);

  std::filesystem::path dir_;
  bool raw_ = false;
  uint64_t saved_ = 0, refused_ = 0, failed_ = 0;
  bool reported_ = false;
};

}  // namespace eit::cli
