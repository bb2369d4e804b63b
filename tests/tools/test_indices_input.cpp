// `eitstream indices` on an image file whose attributes were edited: each is read into one
// value, so one holding several is refused by name instead of overrunning that value.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <filesystem>
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
  CHECK(contains(bad.output, "attribute frame_rate_hz holds 3 values, expected 1"));
  std::filesystem::remove(file);
}
