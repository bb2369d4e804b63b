#pragma once
// Raw frames through a bed for NATS tests: float frames stored through a device link, and the
// seqs a source reads back.
#include <chrono>
#include <cstdint>
#include <vector>

#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "eit/pipeline/frame_pool.hpp"
#include "eit/pipeline/source.hpp"

namespace eit::test {

// Stores frames seq first..first+count-1 through a device link opened beforehand (connecting
// takes a while); true when JetStream stored all.
inline bool store_frames(eit::acquisition::DeviceLink& link, size_t n_values, uint64_t first,
                         uint64_t count) {
  const std::vector<float> values(n_values, 1.0f);
  std::vector<uint8_t> bytes(
      eit::acquisition::ingest_frame_size(eit::acquisition::IngestSampleType::kF32, n_values));
  for (uint64_t seq = first; seq < first + count; ++seq) {
    eit::acquisition::encode_ingest_frame(bytes, eit::acquisition::IngestSampleType::kF32, seq, 0,
                                          values);
    if (!link.send(bytes)) return false;
  }
  return link.drain(std::chrono::seconds(5));
}

// The seqs a source reads until it ends or nothing comes for 1.5 s.
inline std::vector<uint64_t> read_seqs(eit::pipeline::Source& source, size_t n_values) {
  eit::pipeline::FramePool pool(1, n_values, 1);
  eit::pipeline::FrameSlot* slot = pool.try_acquire();
  std::vector<uint64_t> seqs;
  while (seqs.size() < 100) {
    const auto s = source.read(*slot, std::chrono::milliseconds(1500));
    if (s != eit::pipeline::ReadStatus::kFrame) break;
    seqs.push_back(slot->seq);
  }
  pool.release(slot);
  return seqs;
}

}  // namespace eit::test
