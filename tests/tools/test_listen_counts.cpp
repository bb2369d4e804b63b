// ListenCounts and ImageSaver, the parts of `eitstream listen` that count and save, driven
// directly with the cases a publisher rarely produces on demand: a late image beyond the duplicate
// window, a repeated series-end, a series-end of a series with no image received.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "../../tools/src/command_registry.hpp"
#include "../../tools/src/listen_counts.hpp"
#include "../../tools/src/listen_save.hpp"
#include "file_text.hpp"

using eit::cli::Arrival;
using eit::cli::ListenCounts;
namespace fs = std::filesystem;

TEST_CASE("ListenCounts keeps series apart and fills a gap with a late image") {
  ListenCounts c;
  CHECK(c.on_image(1, 100, 50) == Arrival::kNewSeries);
  CHECK(c.on_image(2, 0, 0) == Arrival::kNewSeries);  // interleaved second stream
  CHECK(c.on_image(1, 103, 1) == Arrival::kInOrder);
  CHECK(c.on_image(2, 1, 0) == Arrival::kInOrder);
  CHECK(c.on_image(1, 101, 0) == Arrival::kOutOfOrder);
  CHECK(c.on_image(1, 101, 0) == Arrival::kDuplicate);
  const auto t = c.totals();
  CHECK(t.series == 2);
  CHECK(t.missing == 1);           // 102
  CHECK(t.reported_dropped == 1);  // the first image's 50 came before listen's first seq
  CHECK(t.reported_dropped <= t.missing);
  CHECK(t.duplicates == 1);
  CHECK(t.out_of_order == 1);
}

TEST_CASE("ListenCounts tells duplicates only within its window and never counts below zero") {
  ListenCounts c;
  c.on_image(7, 0, 0);
  c.on_image(7, 1, 0);
  const uint64_t far = 1 + ListenCounts::kSeqWindow;
  CHECK(c.on_image(7, far, 0) == Arrival::kInOrder);
  CHECK(c.on_image(7, far - 1, 0) == Arrival::kOutOfOrder);  // inside the window: late
  CHECK(c.on_image(7, far - 1, 0) == Arrival::kDuplicate);
  CHECK(c.on_image(7, 1, 0) == Arrival::kOutOfOrder);  // behind the window: cannot tell
  const auto t = c.totals();
  CHECK(t.missing == (far + 1) - 5);  // seqs 0..far, 5 counted as received
  CHECK(t.duplicates == 1);
}

TEST_CASE("ListenCounts takes each series-end once and counts images sent before the first") {
  ListenCounts c;
  c.on_image(3, 10, 0);
  c.on_image(3, 11, 0);
  c.on_series_end(3, 12);
  c.on_series_end(3, 12);            // repeated: not counted again
  c.on_series_end(4, 5);             // no image of it came
  c.on_series_end(5, std::nullopt);  // an end without frames_sent (shm)
  const auto t = c.totals();
  CHECK(t.series == 1);
  CHECK(t.sent_not_received == 10 + 5);
  CHECK(t.series_with_sent == 2);
}

TEST_CASE("ImageSaver names files by series and seq and refuses an existing one") {
  const fs::path dir = fs::temp_directory_path() / fmt::format("eit_listen_saver_{}", ::getpid());
  fs::remove_all(dir);
  eit::cli::ImageSaver saver(dir.string(), "raw");
  eit::sinks::ImageHeader h;
  h.shape[0] = 2;
  h.count = 2;
  h.series_id = 0xabc;
  h.seq = 5;
  const float a[2] = {1, 2}, b[2] = {3, 4};
  saver.save(h, std::as_bytes(std::span(a)));
  saver.save(h, std::as_bytes(std::span(b)));  // same series and seq: kept as first written
  CHECK(saver.path_of(h) == dir / "img_0000000000000abc_00000005.f32");
  CHECK(saver.saved() == 1);
  CHECK(saver.refused() == 1);
  CHECK(saver.failed() == 0);
  std::ifstream in(saver.path_of(h), std::ios::binary);
  float back[2] = {};
  in.read(reinterpret_cast<char*>(back), sizeof back);
  CHECK(back[0] == 1);
  CHECK(back[1] == 2);
  CHECK_THROWS_AS(eit::cli::ImageSaver(dir.string(), "png"), eit::cli::CommandError);
  fs::remove_all(dir);
}
