// The real recordings in ../shared/data/recordings (skipped visibly when absent).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/protocol.hpp"
#include "test_data.hpp"

using namespace eit::acquisition;
using eit::recon::Protocol;

namespace {

const Protocol& adjacent16() {
  static const Protocol p = eit::recon::make_protocol({});
  return p;
}

std::vector<std::vector<float>> read_all(RecordingReader& r) {
  std::vector<std::vector<float>> frames;
  for (size_t i = 0; i < r.info().n_frames; ++i) {
    std::vector<float> v(r.n_values());
    REQUIRE(r.read(i, v));
    frames.push_back(std::move(v));
  }
  return frames;
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

}  // namespace

TEST_CASE("Dräger .eit v51 gives 59 whole frames at 20 Hz and reports the truncated 60th") {
  const auto path = eit::test::shared_data_file("recordings/draeger_ID_SC_10_60.eit");
  if (!path) return;
  auto r = open_recording_reader(*path, {}, adjacent16());
  const RecordingInfo& info = r->info();
  CHECK(info.format == "Dräger .eit v51");
  CHECK(info.n_frames == 59);
  CHECK(info.rate_hz == 20.0);
  CHECK(info.truncated_bytes == 5487);
  REQUIRE_FALSE(info.warnings.empty());
  CHECK(info.warnings.front().find("frame 60 is truncated") != std::string::npos);
  CHECK(r->n_values() == 208);
  const auto frames = read_all(*r);
  // Plausible transfer impedances: finite, positive (pyEIT's polarity for adjacent pairs), below 1.
  for (const auto& f : frames) {
    CHECK(all_finite(f));
    CHECK(*std::min_element(f.begin(), f.end()) > 0.0f);
    CHECK(*std::max_element(f.begin(), f.end()) < 1.0f);
  }
  // Reading past the whole frames fails and is counted, never invents a frame.
  std::vector<float> v(208);
  CHECK_FALSE(r->read(59, v));
  CHECK(r->bad_frames() == 1);
}

TEST_CASE("Goe-MF II .get gives 220 frames at 13 fps and a breathing peak near 0.59 Hz") {
  const auto path = eit::test::shared_data_file("recordings/P04P-1016.get");
  if (!path) return;
  auto r = open_recording_reader(*path, {}, adjacent16());
  CHECK(r->info().n_frames == 220);
  CHECK(r->info().raw_values == 256);
  CHECK(r->info().rate_hz == 13.0);
  CHECK(r->info().rate_source == "P04P-1016.prl");
  const auto frames = read_all(*r);
  // Global impedance signal: sum of the 208 voltages per frame, linear trend removed.
  const size_t n = frames.size();
  std::vector<double> gis(n);
  for (size_t i = 0; i < n; ++i) {
    CHECK(all_finite(frames[i]));
    for (float x : frames[i]) gis[i] += x;
  }
  double st = 0, sy = 0, stt = 0, sty = 0;
  for (size_t i = 0; i < n; ++i) {
    st += double(i), sy += gis[i], stt += double(i) * double(i), sty += double(i) * gis[i];
  }
  const double slope = (n * sty - st * sy) / (n * stt - st * st);
  const double icept = (sy - slope * st) / n;
  for (size_t i = 0; i < n; ++i) gis[i] -= icept + slope * double(i);
  double best_f = 0, best_p = -1;
  for (double f = 0.05; f < 3.0; f += 0.005) {
    std::complex<double> acc = 0;
    for (size_t i = 0; i < n; ++i)
      acc += gis[i] * std::polar(1.0, -2 * std::numbers::pi * f * double(i) / 13.0);
    if (std::abs(acc) > best_p) best_p = std::abs(acc), best_f = f;
  }
  MESSAGE("global impedance peak at " << best_f << " Hz");
  CHECK(std::abs(best_f - 0.59) < 0.05);
}

TEST_CASE("IIRC .mat gives 100 complex frames of 256 values, real part by default") {
  const auto path = eit::test::shared_data_file("recordings/iirc_data_2006.mat");
  if (!path) return;
  auto r = open_recording_reader(*path, {}, adjacent16());
  CHECK(r->info().format == "MATLAB .mat variable 'v_rotate'");
  CHECK(r->info().n_frames == 100);
  CHECK(r->info().raw_values == 256);
  CHECK(r->map().device().complex);
  std::vector<float> re(208), im(208), mag(208), ref(208);
  REQUIRE(r->read(0, re));
  // Model measurement 0 (drive 0→1, u3 − u2) is entry 2 of the 16×16 table: −4662.92 − 101.303i.
  CHECK(re[0] == doctest::Approx(-4662.92).epsilon(1e-5));
  RecordingOptions o;
  o.complex_part = ComplexPart::kImag;
  REQUIRE(open_recording_reader(*path, o, adjacent16())->read(0, im));
  CHECK(im[0] == doctest::Approx(-101.303).epsilon(1e-4));
  o.complex_part = ComplexPart::kMagnitude;
  REQUIRE(open_recording_reader(*path, o, adjacent16())->read(0, mag));
  for (size_t k = 0; k < 208; ++k)
    CHECK(mag[k] == doctest::Approx(std::hypot(re[k], im[k])).epsilon(1e-5));
  o = {};
  o.variable = "v_reference";
  o.invert = true;
  auto ref_reader = open_recording_reader(*path, o, adjacent16());
  CHECK(ref_reader->info().n_frames == 1);
  REQUIRE(ref_reader->read(0, ref));
  // Inverted into pyEIT's polarity the homogeneous adjacent measurements are positive.
  CHECK(*std::min_element(ref.begin(), ref.end()) > 0.0f);
}

TEST_CASE("Montreal .mat sets read by name, the zeros at driven electrodes are dropped") {
  const auto path = eit::test::shared_data_file("recordings/montreal_data_1995.mat");
  if (!path) return;
  auto r = open_recording_reader(*path, {}, adjacent16());
  CHECK(r->info().format == "MATLAB .mat variable 'zc_demo3'");
  CHECK(r->info().n_frames == 99);
  const struct {
    const char* name;
    size_t frames;
  } sets[] = {{"zc_h_demo3", 1},
              {"zc_demo4", 33},
              {"zc_resp", 34},
              {"zc_respsc2", 19},
              {"zc_breathhold", 34}};
  for (const auto& s : sets) {
    RecordingOptions o;
    o.variable = s.name;
    auto set = open_recording_reader(*path, o, adjacent16());
    CHECK(set->info().n_frames == s.frames);
    for (size_t i = 0; i < set->info().n_frames; ++i) {
      std::vector<float> v(208);
      REQUIRE(set->read(i, v));
      CHECK(std::count(v.begin(), v.end(), 0.0f) == 0);
    }
  }
  RecordingOptions o;
  o.variable = "ecg_breathhold";
  CHECK_THROWS_WITH(open_recording_reader(*path, o, adjacent16()),
                    doctest::Contains("544 values per frame"));
  o.variable = "no_such_set";
  CHECK_THROWS_WITH(open_recording_reader(*path, o, adjacent16()),
                    doctest::Contains("zc_resp (256×34)"));
}

TEST_CASE("OpenEIT simulated text gives 11 frames of 896 values for a 32-electrode model") {
  const auto path = eit::test::shared_data_file("recordings/openeit_simdata.txt");
  if (!path) return;
  eit::recon::ProtocolOptions po;
  po.n_electrodes = 32;
  po.drive_distance = 16;
  const Protocol model = eit::recon::make_protocol(po);
  auto r = open_recording_reader(*path, {}, model);
  CHECK(r->info().format == "OpenEIT text");
  CHECK(r->info().n_frames == 11);
  CHECK(r->info().raw_values == 896);
  CHECK(r->map().is_identity());
  const auto frames = read_all(*r);
  CHECK(frames[0][0] == doctest::Approx(-0.2092248323495285));
  CHECK(frames[10][895] == doctest::Approx(0.21872624564760357));
  for (const auto& f : frames) CHECK(all_finite(f));
  // A 16-electrode model cannot take a 32-electrode recording.
  CHECK_THROWS_WITH(open_recording_reader(*path, {}, adjacent16()),
                    doctest::Contains("32 electrodes, model has 16"));
}
