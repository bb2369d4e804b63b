#pragma once
// Shared by the libFuzzer targets: the fuzz input as a file (in /dev/shm), readers opened on it
// with every exception caught, and checks that must hold whatever the input (a frame reads the
// same twice; the count never exceeds what the bytes hold).
#include <fcntl.h>
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

// The fuzz input as a real file, rewritten for every input, named `name` (the extension the
// format expects) in a directory of its own under $TMPDIR (scripts/fuzz.sh points it at a folder
// in /dev/shm that it removes afterwards, also when a target crashed), else /dev/shm (memory, no
// disk), else /tmp. Not a memfd behind /proc/self/fd: libhdf5 resolves a file's real path before
// opening it, and a memfd has none ("/memfd:… (deleted)"), so every HDF5 input (Model files,
// MATLAB v7.3) failed to open and the fuzzer never got past H5Fopen.
class InputFile {
 public:
  explicit InputFile(const char* name) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir_template = tmp != nullptr && *tmp != '\0'              ? tmp
                               : std::filesystem::is_directory("/dev/shm") ? "/dev/shm"
                                                                           : "/tmp";
    dir_template += "/eit-fuzz-XXXXXX";
    if (::mkdtemp(dir_template.data()) == nullptr) std::abort();
    dir_ = dir_template;
    path_ = dir_ / name;
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) std::abort();
  }
  ~InputFile() {
    ::close(fd_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

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
  // For targets that write the file themselves (through libhdf5).
  const std::filesystem::path& path() const { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path dir_;
  std::filesystem::path path_;
};

// True when a .mat input's header says MATLAB v7.3 (version 0x0200 in bytes 124–125, in the
// byte order of the endian indicator), which the readers hand to libhdf5. The raw-byte .mat
// targets skip such inputs: mutated HDF5 fuzzes libhdf5 1.10.8's parsing of corrupted metadata,
// which hangs and crashes within seconds and is not ours (docs/fuzzing.md). fuzz_mat73 covers
// the v7.3 path on well-formed files instead.
inline bool says_mat73(const uint8_t* data, size_t size) {
  if (size < 128) return false;
  if (data[126] == 'I' && data[127] == 'M') return data[124] == 0x00 && data[125] == 0x02;
  if (data[126] == 'M' && data[127] == 'I') return data[124] == 0x02 && data[125] == 0x00;
  return false;
}

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
