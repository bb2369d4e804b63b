// `eitstream indices` on an image file edited after recording: an attribute holding several values
// (each is read into one value), a mesh element pointing past the node table (it was followed
// into the nodes: a segmentation fault) and a frame rate that is no rate are refused by name.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <filesystem>
#include <limits>
#include <string>

#include "cli_run.hpp"
#include "h5_test_attribute.hpp"

using eit::test::cli_temp_path;
using eit::test::contains;
using eit::test::run_eitstream;

TEST_CASE("indices refuses an image file attribute holding several values, naming it") {
  const auto file = cli_temp_path("eit_indices_input", "images.h5");
  const auto endpoint = "ipc://" + cli_temp_path("eit_indices_input", "pub").string();
  const auto made = run_eitstream(fmt::format(
      "run --frames 60 --fps 0 --quiet --record {} --endpoint {}", file.string(), endpoint));
  INFO(made.output);
  REQUIRE(made.code == 0);
  const auto ok = run_eitstream(fmt::format("indices {} --fps 50 -o -", file.string()));
  INFO(ok.output);
  CHECK(ok.code == 0);

  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  REQUIRE(H5Aexists(f, "frame_rate_hz") > 0);
  REQUIRE(H5Adelete(f, "frame_rate_hz") >= 0);
  const double rates[3] = {50, 50, 50};
  eit::test::write_h5_attribute(f, "frame_rate_hz", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rates, 3);
  H5Fclose(f);

  const auto bad = run_eitstream(fmt::format("indices {} --fps 50 -o -", file.string()));
  INFO(bad.output);
  CHECK(bad.code != 0);
  CHECK(contains(bad.output, "attribute 'frame_rate_hz' holds 3 values, expected 1"));
  std::filesystem::remove(file);
}

TEST_CASE("indices refuses an image file whose mesh elements index past its nodes") {
  const auto file = cli_temp_path("eit_indices_input", "mesh_images.h5");
  const auto model = cli_temp_path("eit_indices_input", "jac.h5");
  const auto endpoint = "ipc://" + cli_temp_path("eit_indices_input", "pub_mesh").string();
  const auto built =
      run_eitstream(fmt::format("model build --algorithm jac -o {}", model.string()));
  INFO(built.output);
  REQUIRE(built.code == 0);
  const auto made = run_eitstream(
      fmt::format("run --model {} --frames 60 --fps 0 --quiet --record {} --endpoint {}",
                  model.string(), file.string(), endpoint));
  INFO(made.output);
  REQUIRE(made.code == 0);

  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const hid_t elements = H5Dopen2(f, "geometry/elements", H5P_DEFAULT);
  REQUIRE(elements >= 0);
  const hid_t space = H5Dget_space(elements);
  const hsize_t at[2] = {5, 1};
  REQUIRE(H5Sselect_elements(space, H5S_SELECT_SET, 1, at) >= 0);
  const hsize_t one = 1;
  const hid_t mem = H5Screate_simple(1, &one, nullptr);
  const int32_t far = 100000000;
  REQUIRE(H5Dwrite(elements, H5T_NATIVE_INT32, mem, space, H5P_DEFAULT, &far) >= 0);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(elements);
  H5Fclose(f);

  const auto bad = run_eitstream(fmt::format("indices {} --fps 50 -o -", file.string()));
  INFO(bad.output);
  CHECK(bad.code == 1);
  CHECK(contains(bad.output, "/geometry: mesh elements index nodes 0..100000000, expected 0..422"));
  std::filesystem::remove(file);
  std::filesystem::remove(model);
}

TEST_CASE("indices refuses an image file whose frame rate is negative, NaN or infinite") {
  // Found by fuzz_image_file: read_image_file took any number. --fps hid it (it overrides the
  // file's rate), and without it an infinite rate went on to the breath detection.
  const auto file = cli_temp_path("eit_indices_input", "rate_images.h5");
  const auto endpoint = "ipc://" + cli_temp_path("eit_indices_input", "pub_rate").string();
  const auto made = run_eitstream(fmt::format(
      "run --frames 60 --fps 0 --quiet --record {} --endpoint {}", file.string(), endpoint));
  INFO(made.output);
  REQUIRE(made.code == 0);
  for (const double rate :
       {-20.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    CAPTURE(rate);
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    REQUIRE(H5Adelete(f, "frame_rate_hz") >= 0);
    eit::test::write_h5_attribute(f, "frame_rate_hz", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &rate, 1);
    H5Fclose(f);
    const auto bad = run_eitstream(fmt::format("indices {} --fps 50 -o -", file.string()));
    INFO(bad.output);
    CHECK(bad.code != 0);
    CHECK(contains(bad.output, fmt::format("attribute 'frame_rate_hz' is {}, expected a finite "
                                           "number ≥ 0",
                                           rate)));
  }
  std::filesystem::remove(file);
}
