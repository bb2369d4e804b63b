// The final summary of `eitstream run` (tools/src/run_report.cpp) and the live view's pipeline
// panel (pipeline_status_json.cpp) count each frame once: the old summary printed "published" for
// frames reconstructed whatever the sinks did, and a "dropped" total that added every sink's
// misses, so a frame both sinks missed counted twice; the view's "dropped" added every sink's send
// drops to the pipeline's.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../../tools/src/pipeline_status_json.hpp"
#include "../../tools/src/run_report.hpp"
#include "run_summary_counts.hpp"

namespace {

// 100 frames in, 2 lost at the input queue; two sinks that both missed the same 5 frames (the
// ZeroMQ one 4 in its queue and 1 in its send, the recorder 5 in its queue).
eit::pipeline::PipelineStats two_sinks_missing_the_same_frames() {
  eit::pipeline::PipelineStats s;
  s.started_ns = 0;
  s.now_ns = 1'000'000'000;
  s.frames_in = 100;
  s.frames_reconstructed = 98;
  s.frames_out = 98;
  s.input.dropped = 2;
  s.sinks = {{.sent = 93, .dropped = 1, .errors = 0}, {.sent = 93, .dropped = 0, .errors = 0}};
  s.sink_queues.resize(2);
  s.sink_queues[0].name = "zmq";
  s.sink_queues[0].queue.dropped = 4;
  s.sink_queues[1].name = "hdf5-images";
  s.sink_queues[1].queue.dropped = 5;
  return s;
}

}  // namespace

TEST_CASE("run summary gives each sink its own sent and dropped and no double-counted total") {
  const std::string out = eit::cli::final_summary(two_sinks_missing_the_same_frames());
  INFO(out);
  const auto counts = eit::test::run_counts(out);
  REQUIRE(counts);
  CHECK(counts->in == 100);
  CHECK(counts->reconstructed == 98);
  CHECK(counts->lost_before_sinks == 2);
  const auto zmq = eit::test::sink_counts(out, "zmq");
  const auto recorder = eit::test::sink_counts(out, "hdf5-images");
  REQUIRE(zmq);
  REQUIRE(recorder);
  CHECK(zmq->sent == 93);
  CHECK(zmq->dropped == 5);
  CHECK(recorder->sent == 93);
  CHECK(recorder->dropped == 5);
  CHECK(out.find("(queue 4, send 1)") != std::string::npos);
  // 2 + 5 + 5 = 12 would be a frame counted once per sink that missed it.
  CHECK(out.find("12") == std::string::npos);
  CHECK(out.find("published") == std::string::npos);
}

TEST_CASE(
    "the live view's pipeline panel gives the frames lost before the sinks and each sink's own") {
  const auto j =
      nlohmann::json::parse(eit::cli::pipeline_status_json(two_sinks_missing_the_same_frames()));
  CHECK(j["frames_in"] == 100);
  CHECK(j["dropped"] == 2);
  REQUIRE(j["sinks"].size() == 2);
  CHECK(j["sinks"][0]["name"] == "zmq");
  CHECK(j["sinks"][0]["sent"] == 93);
  CHECK(j["sinks"][0]["dropped"] == 5);
  CHECK(j["sinks"][1]["name"] == "hdf5-images");
  CHECK(j["sinks"][1]["dropped"] == 5);
  CHECK(j["source"].contains("bytes_skipped"));
  CHECK(j["source"].contains("reordered"));
  CHECK(j["warnings"].empty());
  const auto w = nlohmann::json::parse(eit::cli::pipeline_status_json(
      two_sinks_missing_the_same_frames(), {"a.csv: first row is a header, skipped"}));
  CHECK(w["warnings"] == nlohmann::json::array({"a.csv: first row is a header, skipped"}));
}

TEST_CASE("the status line shows source damage as it happens: missing by seq and bytes skipped") {
  eit::pipeline::SourceStats src;
  CHECK(eit::cli::source_status(src).empty());
  src.seq_gaps = 17;
  src.bytes_skipped = 4096;
  src.bad_frames = 2;
  src.reordered = 3;
  src.reconnects = 1;
  src.last_error = "udp://127.0.0.1:5000: datagram of 12 bytes";
  const std::string line = eit::cli::source_status(src);
  CHECK(line.find("missing by seq 17") != std::string::npos);
  CHECK(line.find("bytes skipped 4096") != std::string::npos);
  CHECK(line.find("rejected frames 2") != std::string::npos);
  CHECK(line.find("dropped by seq 3") != std::string::npos);
  CHECK(line.find("reconnects 1") != std::string::npos);
  CHECK(line.find("source: udp://127.0.0.1:5000") != std::string::npos);
}

TEST_CASE("the summary's latency table keeps columns apart when a stall makes values wide") {
  auto s = two_sinks_missing_the_same_frames();
  auto& l = s.latency[0];
  l.count = 2160;
  l.p50_ns = 11'140'071'413;  // a consumer frozen for seconds: 11,140,071.4 µs
  l.p90_ns = l.p99_ns = l.p999_ns = l.max_ns = 13'287'555'123;
  l.mean_ns = 7'164'396'700;
  const std::string out = eit::cli::final_summary(s);
  INFO(out);
  // The old table ran them together: "11140071.413287555.113287555.1…".
  CHECK(out.find("11140071.4 13287555.1 13287555.1 13287555.1 13287555.1 7164396.7") !=
        std::string::npos);
}

TEST_CASE("the summary's run time and rate leave out the stop's wait and say it from 0.1 s") {
  auto s = two_sinks_missing_the_same_frames();  // 98 frames out in 1 s of wall time
  s.now_ns = 3'500'000'000;
  const std::string waited = eit::cli::final_summary(s, 2.5);
  INFO(waited);
  CHECK(waited.find("\nrun: 1.00 s, 98.0 frames/s to the sinks,") != std::string::npos);
  CHECK(waited.find("\nstop: waited 2.50 s for the sinks to finish") != std::string::npos);
  const std::string brief = eit::cli::final_summary(s, 0.04);  // the loop's sampling: no line
  CHECK(brief.find("\nrun: 3.46 s, 28.3 frames/s") != std::string::npos);
  CHECK(brief.find("stop:") == std::string::npos);
}
