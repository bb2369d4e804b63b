// A lost frame is counted once by StreamSource: as bad (rejected by the decoder, or cut off when
// the connection broke inside it) or as missing by seq, never both. The old source counted a
// rejected ingest frame twice (bad, then missing when the next frame's seq jumped over it), and a
// raw frame a reconnect cut short not at all.
#include <doctest/doctest.h>

#include <cstring>
#include <deque>
#include <vector>

#include "eit/acquisition/byte_transport.hpp"
#include "eit/acquisition/ingest_decoder.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "eit/acquisition/raw_frame_decoder.hpp"
#include "eit/acquisition/stream_source.hpp"
#include "eit/recon/protocol.hpp"

using namespace eit::acquisition;

namespace {

// Hands out the chunks given, one per read, each flagged as the start of a new connection or
// not; then the end.
class ScriptedTransport final : public ByteTransport {
 public:
  struct Chunk {
    std::vector<uint8_t> bytes;
    bool new_connection = false;
  };
  explicit ScriptedTransport(std::deque<Chunk> chunks) : chunks_(std::move(chunks)) {}
  std::string describe() const override { return "scripted"; }
  std::string endpoint() const override { return "scripted"; }
  TransportRead read(std::span<uint8_t> buffer, Clock::time_point) override {
    if (chunks_.empty()) return {TransportStatus::kEnd, 0, false};
    Chunk c = std::move(chunks_.front());
    chunks_.pop_front();
    REQUIRE(c.bytes.size() <= buffer.size());
    std::memcpy(buffer.data(), c.bytes.data(), c.bytes.size());
    return {TransportStatus::kData, c.bytes.size(), c.new_connection};
  }
  void stop() noexcept override {}

 private:
  std::deque<Chunk> chunks_;
};

constexpr size_t kValues = 8;

std::vector<uint8_t> ingest_frame(uint64_t seq, size_t n_values = kValues) {
  std::vector<float> values(n_values, 1.5f);
  std::vector<uint8_t> out(ingest_frame_size(IngestSampleType::kF32, n_values));
  REQUIRE(encode_ingest_frame(out, IngestSampleType::kF32, seq, -1, values) == out.size());
  return out;
}

std::vector<uint8_t> join(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// An ingest stream of kValues-value frames over the chunks given.
std::unique_ptr<StreamSource> ingest_source(std::deque<ScriptedTransport::Chunk> chunks) {
  return std::make_unique<StreamSource>(std::make_unique<ScriptedTransport>(std::move(chunks)),
                                        std::make_unique<IngestDecoder>(kValues));
}

// Reads the source to its end; returns the seqs of the frames it gave.
std::vector<uint64_t> drain(StreamSource& source, size_t n_values) {
  std::vector<float> values(n_values);
  eit::pipeline::FrameSlot slot;
  slot.values = values.data();
  std::vector<uint64_t> seqs;
  for (int guard = 0; guard < 1000; ++guard) {
    const auto r = source.read(slot, std::chrono::milliseconds(10));
    if (r == eit::pipeline::ReadStatus::kFrame) seqs.push_back(slot.seq);
    if (r == eit::pipeline::ReadStatus::kEnd) break;
  }
  return seqs;
}

}  // namespace

TEST_CASE("an ingest frame of the wrong length counts as bad and not again as missing by seq") {
  std::deque<ScriptedTransport::Chunk> chunks;
  chunks.push_back({join({ingest_frame(0), ingest_frame(1, kValues + 1), ingest_frame(2)})});
  auto source = ingest_source(std::move(chunks));
  CHECK(drain(*source, kValues) == std::vector<uint64_t>{0, 2});
  const auto s = source->stats();
  CHECK(s.bad_frames == 1);
  CHECK(s.seq_gaps == 0);
}

TEST_CASE("frames that never arrived still count as missing beside a rejected one") {
  std::deque<ScriptedTransport::Chunk> chunks;
  // seq 1 rejected; seq 2 and 3 never sent.
  chunks.push_back({join({ingest_frame(0), ingest_frame(1, kValues + 1), ingest_frame(4)})});
  auto source = ingest_source(std::move(chunks));
  CHECK(drain(*source, kValues) == std::vector<uint64_t>{0, 4});
  const auto s = source->stats();
  CHECK(s.bad_frames == 1);
  CHECK(s.seq_gaps == 2);
}

TEST_CASE("an ingest frame a reconnect cut short counts once as bad with its bytes skipped") {
  const auto whole = ingest_frame(1);
  // The header whole (it vouches for a frame) and 10 bytes of the payload.
  const std::vector<uint8_t> half(whole.begin(), whole.begin() + kIngestHeaderSize + 10);
  std::deque<ScriptedTransport::Chunk> chunks;
  chunks.push_back({join({ingest_frame(0), half})});
  chunks.push_back({ingest_frame(2), true});
  auto source = ingest_source(std::move(chunks));
  CHECK(drain(*source, kValues) == std::vector<uint64_t>{0, 2});
  const auto s = source->stats();
  CHECK(s.bad_frames == 1);
  CHECK(s.seq_gaps == 0);
  CHECK(s.bytes_skipped == half.size());
}

TEST_CASE("a raw frame a reconnect cut short counts as bad") {
  const auto model = eit::recon::make_protocol({});
  const size_t n = model.n_meas();
  std::vector<uint8_t> frame(n * sizeof(float), 0);
  std::deque<ScriptedTransport::Chunk> chunks;
  chunks.push_back({join({frame, std::vector<uint8_t>(frame.begin(), frame.begin() + 100)})});
  chunks.push_back({frame, true});
  StreamSource source(
      std::make_unique<ScriptedTransport>(std::move(chunks)),
      std::make_unique<RawFrameDecoder>(DeviceLayout{}, model, SampleType::kFloat32));
  CHECK(drain(source, n).size() == 2);
  const auto s = source.stats();
  CHECK(s.bad_frames == 1);
  CHECK(s.bytes_skipped == 100);
}

TEST_CASE("a truncated last ingest frame at the end of the stream counts as bad") {
  const auto whole = ingest_frame(1);
  std::deque<ScriptedTransport::Chunk> chunks;
  chunks.push_back({join({ingest_frame(0), std::vector<uint8_t>(whole.begin(), whole.end() - 3)})});
  auto source = ingest_source(std::move(chunks));
  CHECK(drain(*source, kValues) == std::vector<uint64_t>{0});
  CHECK(source->stats().bad_frames == 1);
}
