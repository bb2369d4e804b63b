// bench_h5_write: how fast the HDF5 image writer (sinks::Hdf5ImageRecorder, the one `eitstream
// reconstruct` and `run --record` use) puts images on a disk, against a plain fwrite of the same
// bytes to the same place; tools/bench/bench_h5_write.py drives it beside dd and h5py.
//
//   bench_h5_write PATH [--mode image|fwrite] [--frames 400000] [--chunk 256] [--deflate 0]
//                       [--fsync] [--no-chunk-flush]
//
// image: the built-in model's 1024-float images, FrameSlot by FrameSlot through publish() with a
// tick() per 4096 frames (as reconstruct's writer thread does per batch), then end(). fwrite: the
// same image bytes (frames × 1024 float32) in 1 MiB fwrite calls. --no-chunk-flush: whole chunks
// are not flushed for SWMR readers as they are written, only at tick() (reconstruct's setting). --fsync adds an fsync of the
// file to the timed part (the disk itself, not just the page cache). Prints one JSON object:
// seconds, CPU seconds (user + system: the cost with other load on the machine taken out), bytes
// written (the file's size), frames/s and MB/s (10^6 bytes). The file is removed.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eit/pipeline/frame_pool.hpp"
#include "eit/recon/default_model.hpp"
#include "eit/sinks/hdf5_image_recorder.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string path, mode = "image";
  size_t frames = 400000, chunk = 256;
  int deflate = 0;
  bool fsync = false, flush_each_chunk = true;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(s + " needs a value");
      return argv[++i];
    };
    if (s == "--mode") a.mode = next();
    else if (s == "--frames") a.frames = std::stoul(next());
    else if (s == "--chunk") a.chunk = std::stoul(next());
    else if (s == "--deflate") a.deflate = std::stoi(next());
    else if (s == "--fsync") a.fsync = true;
    else if (s == "--no-chunk-flush") a.flush_each_chunk = false;
    else if (a.path.empty() && s[0] != '-') a.path = s;
    else throw std::invalid_argument("unknown argument " + s);
  }
  if (a.path.empty()) throw std::invalid_argument("usage: bench_h5_write PATH [--mode image|fwrite] …");
  if (a.mode != "image" && a.mode != "fwrite")
    throw std::invalid_argument("--mode " + a.mode + ": expected image or fwrite");
  return a;
}

double cpu_seconds() {  // user + system time of this process: its cost, whatever else runs
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) throw std::runtime_error(path + ": fsync failed");
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  const eit::recon::Model model = eit::recon::default_model();
  const size_t n_out = model.n_out();
  // 256 distinct images, cycled (their values do not change an uncompressed write).
  constexpr size_t kSlots = 256;
  eit::pipeline::FramePool pool(kSlots, model.n_meas(), n_out);
  for (size_t s = 0; s < kSlots; ++s)
    for (size_t i = 0; i < n_out; ++i)
      pool.slot(s).image[i] = static_cast<float>(s) * 1e-3f + static_cast<float>(i) * 1e-6f;

  const auto t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  if (a.mode == "fwrite") {
    std::FILE* f = std::fopen(a.path.c_str(), "wb");
    if (!f) throw std::runtime_error(a.path + ": cannot create");
    const size_t frame_bytes = n_out * sizeof(float);
    const size_t per_block = std::max<size_t>(1, (1u << 20) / frame_bytes);
    for (size_t done = 0; done < a.frames;) {
      const size_t m = std::min({per_block, a.frames - done, kSlots - done % kSlots});
      if (std::fwrite(pool.slot(done % kSlots).image, frame_bytes, m, f) != m)
        throw std::runtime_error(a.path + ": write failed");
      done += m;
    }
    if (std::fclose(f) != 0) throw std::runtime_error(a.path + ": close failed");
  } else {
    eit::sinks::Hdf5RecorderOptions o;
    o.chunk_frames = a.chunk;
    o.deflate = a.deflate;
    o.flush_each_chunk = a.flush_each_chunk;
    o.source = "bench_h5_write";
    eit::sinks::Hdf5ImageRecorder recorder(a.path, model, o);
    for (size_t i = 0; i < a.frames; ++i) {
      eit::pipeline::FrameSlot& s = pool.slot(i % kSlots);
      s.seq = i;
      recorder.publish(s);
      if (i % 4096 == 4095)
        recorder.tick(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          Clock::now().time_since_epoch())
                          .count());
    }
    recorder.end();
    if (recorder.stats().errors != 0) throw std::runtime_error(a.path + ": write errors");
  }
  if (a.fsync) sync_file(a.path);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  const auto bytes = std::filesystem::file_size(a.path);
  std::filesystem::remove(a.path);
  fmt::print(
      "{{\"mode\": \"{}\", \"frames\": {}, \"chunk\": {}, \"chunk_flush\": {}, "
      "\"fsync\": {}, \"seconds\": {:.4f}, \"cpu_seconds\": {:.4f}, \"bytes\": {}, "
      "\"frames_per_s\": {:.0f}, \"mb_per_s\": {:.1f}}}\n",
      a.mode, a.frames, a.chunk, a.flush_each_chunk, a.fsync, s, cpu, bytes, a.frames / s,
      bytes / s / 1e6);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_h5_write: %s\n", e.what());
  return 1;
}
