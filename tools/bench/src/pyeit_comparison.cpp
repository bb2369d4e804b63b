#include "eit/bench/pyeit_comparison.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace eit::bench {
namespace fs = std::filesystem;

void write_frames_npy(const acquisition::PhantomTable& table, size_t n_frames,
                      const std::string& path) {
  acquisition::PhantomOptions options;
  options.snr_db = std::numeric_limits<double>::infinity();
  options.rate_hz = 0;
  const acquisition::SyntheticPhantomSource source(table, options);
  const size_t n = source.n_values();
  std::string header =
      fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", n_frames, n);
  // .npy v1.0: magic, version, uint16 header length; the header is padded so data is 64-aligned.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", path));
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  std::vector<double> row(n);
  for (size_t seq = 0; seq < n_frames; ++seq) {
    source.noiseless(seq, row.data());
    out.write(reinterpret_cast<const char*>(row.data()),
              static_cast<std::streamsize>(n * sizeof(double)));
  }
  if (!out) throw std::runtime_error(fmt::format("{}: write failed", path));
}

PyeitRun run_pyeit(const std::string& script, const acquisition::PhantomTable& table,
                   size_t n_frames, double rate_hz, const std::string& algorithms) {
  PyeitRun run;
  if (!fs::exists(script)) {
    run.skipped = fmt::format("{} not found (pass --pyeit-script)", script);
    return run;
  }
  if (table.frames.cols() != 208) {
    run.skipped = fmt::format(
        "pyEIT runs the 16-electrode protocol (208 measurements); these "
        "frames have {}",
        table.frames.cols());
    return run;
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit-bench-pyeit-{}", ::getpid());
  fs::create_directories(dir);
  const fs::path frames = dir / "frames.npy", result = dir / "result.json", log = dir / "log.txt";
  write_frames_npy(table, n_frames, frames.string());
  // The same offered rate as eitstream's paced comparison run: the ratios compare like with like
  // (the script's own default, 1000, was used whatever --compare-rate said).
  const std::string cmd =
      fmt::format("python3 '{}' --frames '{}' --out '{}' --algorithms '{}' --rate {} 2>'{}'",
                  script, frames.string(), result.string(), algorithms, rate_hz, log.string());
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream err;
  err << std::ifstream(log).rdbuf();
  std::string message = err.str();
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  if (code != 0) {
    run.skipped =
        code == 3 || code == 127
            ? (message.empty() ? std::string("python3 not available") : message)
            : fmt::format("bench_vs_pyeit.py failed (exit {}): {}", code,
                          message.substr(message.size() > 400 ? message.size() - 400 : 0));
    fs::remove_all(dir);
    return run;
  }
  std::ifstream in(result);
  const auto j = nlohmann::json::parse(in);
  const auto& v = j.at("versions");
  const std::string versions =
      fmt::format("pyeit {}, pyzmq {}, numpy {}, python {}", v.value("pyeit", "?"),
                  v.value("pyzmq", "?"), v.value("numpy", "?"), v.value("python", "?"));
  for (const auto& r : j.at("results")) {
    ExternalTiming t;
    t.name = r.at("name").get<std::string>();
    t.what = r.at("what").get<std::string>();
    t.n_out = r.at("n_out").get<size_t>();
    t.n_meas = r.at("n_meas").get<size_t>();
    std::vector<int64_t> per = r.at("per_frame_ns").get<std::vector<int64_t>>();
    t.summary = summarize(per);
    const double total_s = r.at("total_ns").get<double>() * 1e-9;
    t.frames_per_s = total_s > 0 ? static_cast<double>(per.size()) / total_s : 0;
    t.versions = versions;
    run.timings.push_back(std::move(t));
  }
  fs::remove_all(dir);
  return run;
}

}  // namespace eit::bench
