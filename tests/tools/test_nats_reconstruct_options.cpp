// `reconstruct nats://…` takes the options of any reconstruct: --backend (checked and used),
// --reference model | first:N | file:PATH (recorded in the image file), --compress and --chunk;
// references that name frames of a recording file are refused by name. The image file's frame rate
// is the raw frames' Eit-Rate (it was 0), or --fps, as for run --source.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../nats/nats_server.hpp"
#include "../sinks/h5_read_support.hpp"
#include "subprocess.hpp"

using eit::test::Subprocess;
using namespace std::chrono_literals;
namespace h5r = eit::test::h5read;
namespace fs = std::filesystem;

namespace {

struct Replay {
  int rc = -1;
  std::string out, err;
  uint64_t frames = 0, images = 0;
};

Replay reconstruct(const std::string& bed, std::vector<std::string> options) {
  std::vector<std::string> args{EITSTREAM_BIN, "reconstruct", bed + "&since=all"};
  args.insert(args.end(), options.begin(), options.end());
  Subprocess p(args);
  Replay r;
  r.rc = p.wait(120s);
  r.out = p.out();
  r.err = p.err();
  std::smatch m;
  if (std::regex_search(r.out, m, std::regex(R"((\d+) frames → (\d+) images in)"))) {
    r.frames = std::stoull(m[1]);
    r.images = std::stoull(m[2]);
  }
  return r;
}

struct ImageFile {
  std::vector<float> images;
  std::string reference;
  int filters = 0;  // on /images: shuffle + deflate when compressed
  double frame_rate_hz = -1;
};

ImageFile read_images(const fs::path& path) {
  ImageFile f;
  const hid_t h = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(h >= 0);
  f.images = h5r::dataset<float>(h, "images");
  f.reference = h5r::attr_string(h, "reference");
  f.frame_rate_hz = h5r::attr_double(h, "frame_rate_hz");
  const hid_t d = H5Dopen2(h, "images", H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(d);
  f.filters = H5Pget_nfilters(dcpl);
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(h);
  return f;
}

}  // namespace

TEST_CASE("reconstruct nats://… takes --backend, --reference first:N|model|file: and --compress") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=3";
  Subprocess d({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count", "30",
                "--unpaced"});
  REQUIRE(d.wait(120s) == 0);
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit-nats-options-{}", getpid());
  fs::create_directories(dir);

  Replay r = reconstruct(bed, {"--backend", "cpu", "--reference", "first:5", "--compress", "2",
                               "--chunk", "8", "-o", (dir / "first.h5").string()});
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.rc == 0);
  CHECK(r.frames == 30);
  CHECK(r.images > 0);
  const ImageFile first = read_images(dir / "first.h5");
  CHECK(first.reference.starts_with("first:5"));
  CHECK(first.filters >= 1);

  r = reconstruct(bed, {"--reference", "model", "-o", (dir / "model.h5").string()});
  REQUIRE(r.rc == 0);
  const ImageFile model = read_images(dir / "model.h5");
  CHECK(model.reference.starts_with("model"));
  CHECK(model.filters == 0);
  REQUIRE(model.images.size() >= first.images.size());
  // The last image against two references: the same frame, different images.
  const size_t n_out = model.images.size() / r.images;
  CHECK(!std::equal(first.images.end() - static_cast<ptrdiff_t>(n_out), first.images.end(),
                    model.images.end() - static_cast<ptrdiff_t>(n_out)));

  // file:PATH: a reference from a recording file (the synthetic frames replayed to a raw file).
  Subprocess rec({EITSTREAM_BIN, "run", "--frames", "5", "--fps", "500", "--quiet", "--endpoint",
                  "tcp://127.0.0.1:*", "--record-raw", (dir / "ref.h5").string()});
  REQUIRE(rec.wait(60s) == 0);
  r = reconstruct(bed, {"--reference", "file:" + (dir / "ref.h5").string(), "-o",
                        (dir / "file.h5").string()});
  INFO("stderr: " << r.err);
  REQUIRE(r.rc == 0);
  CHECK(read_images(dir / "file.h5").reference.starts_with("file:"));

  r = reconstruct(bed, {"--reference", "frame:3", "-o", (dir / "x.h5").string()});
  CHECK(r.rc != 0);
  CHECK(r.err.find("--reference frame:3") != std::string::npos);
  CHECK(r.err.find("first:N") != std::string::npos);

  r = reconstruct(bed, {"--backend", "gpu", "-o", (dir / "y.h5").string()});
  CHECK(r.rc != 0);
  CHECK(r.err.find("--backend 'gpu'") != std::string::npos);

  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("reconstruct nats:// stores the raw frames' Eit-Rate as the image file's frame rate") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=4";
  Subprocess d({EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count", "20",
                "--fps", "12.5", "--unpaced"});
  REQUIRE(d.wait(120s) == 0);
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit-nats-rate-{}", getpid());
  fs::create_directories(dir);

  Replay r = reconstruct(bed, {"--backend", "cpu", "-o", (dir / "stated.h5").string()});
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.rc == 0);
  CHECK(r.frames == 20);
  CHECK(read_images(dir / "stated.h5").frame_rate_hz == 12.5);
  CHECK(r.err.find("warning") == std::string::npos);

  // --fps wins, with a warning, as for run --source.
  r = reconstruct(bed, {"--backend", "cpu", "--fps", "25", "-o", (dir / "fps.h5").string()});
  REQUIRE(r.rc == 0);
  CHECK(read_images(dir / "fps.h5").frame_rate_hz == 25);
  CHECK(r.err.find("warning: --fps 25 wins over the 12.5 frames/s") != std::string::npos);

  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("reconstruct nats:// takes the raw-frame readers' scale= in its URI") {
  eit::test::NatsServer server;
  if (eit::test::skipped_without_nats(server)) return;
  const std::string bed = server.url() + "?site=icu&bed=5";
  Subprocess d(
      {EITSTREAM_BIN, "emulate", "--from", "synthetic", "--to", bed, "--count", "10", "--unpaced"});
  REQUIRE(d.wait(120s) == 0);
  const fs::path out = fs::temp_directory_path() / fmt::format("eit-nats-scale-{}.h5", getpid());
  // Refused before as an unknown option, although run --source takes it.
  const Replay r =
      reconstruct(bed + "&scale=2", {"--backend", "cpu", "--force", "-o", out.string()});
  INFO("stderr: " << r.err);
  CHECK(r.rc == 0);
  CHECK(r.frames == 10);
  std::error_code ec;
  fs::remove(out, ec);
}
