#pragma once
// Shared by the libFuzzer targets: the fuzz input as a file (an in-memory memfd, reached through
// /proc/self/fd), readers opened on it with every exception caught, and checks that must hold
// whatever the input (a frame reads the same twice; the count never exceeds what the bytes hold).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::fuzz {

// One memfd reused for every input; `name` gives it the extension the format expects.
class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(::memfd_create(name, 0)) {
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::filesystem::path& write(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::filesystem::path path_;
};

inline const recon::Protocol& protocol(int electrodes = 16, int drive_distance = 1) {
  static const recon::Protocol p16 = recon::make_protocol({});
  static const recon::Protocol p8 = [] {
    recon::ProtocolOptions o;
    o.n_electrodes = 8;
    o.drive_distance = 4;
    return recon::make_protocol(o);
  }();
  return electrodes == 8 ? p8 : p16;
}

// Opens the input as `format`, reads every frame twice and checks they agree bit for bit.
// Set-up errors (exceptions) are the expected answer to most inputs.
inline void open_and_read_all(const std::filesystem::path& path, const char* format,
                              const recon::Protocol& model, size_t input_size,
                              acquisition::RecordingOptions o = {}) {
  o.format = format;
  std::unique_ptr<acquisition::RecordingReader> r;
  try {
    r = acquisition::open_recording_reader(path, o, model);
  } catch (const std::exception&) {
    return;
  }
  const size_t n = r->info().n_frames;
  if (r->info().bytes_total != input_size) std::abort();
  std::vector<float> a(r->n_values()), b(r->n_values());
  for (size_t i = 0; i < n && i < 4096; ++i) {
    const bool ok_a = r->read(i, a);
    const bool ok_b = r->read(i, b);
    if (ok_a != ok_b) std::abort();
    if (ok_a && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0) std::abort();
  }
  if (r->read(n, a)) std::abort();  // past the end never yields a frame
}

}  // namespace eit::fuzz
