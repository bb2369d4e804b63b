#pragma once
// Hdf5IndicesAnnex: writes the clinical indices into the image recorder's HDF5 file
// (`eitstream run --record images.h5 --indices …`), as the group /indices (docs/formats.md):
//   /indices/seq           uint64  [n]                 the frame's seq (rows match /images)
//   /indices/regions       float64 [n × n_regions]     global first, then the regions
//   /indices/region_names  string  [n_regions]
//   /indices/breaths       float64 [n_breaths × n_cols] one row per completed breath
//   /indices/breath_columns string [n_cols]            the columns' names (kBreathColumns)
//   /indices/tidal         float32 [n_breaths × n_out] the breath's pixel tidal image (NaN
//                                                      outside the body or without pixel data)
// and attributes format = "eitstream-indices", version = 1, frame_rate_hz, sign on the group.
//
// It owns its own IndicesEngine (the publisher has another: both see every frame). Threads: the
// image recorder's (one). append() computes the indices and buffers rows in memory allocated at
// create(); rows reach the file in chunks, at flush() and at close(). No allocation per frame.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eit/indices/indices_engine.hpp"
#include "eit/sinks/recording_annex.hpp"

namespace eit::indices {

// The columns of /indices/breaths, in order.
inline constexpr std::array<std::string_view, 28> kBreathColumns = {"number",
                                                                    "start_frame",
                                                                    "middle_frame",
                                                                    "end_frame",
                                                                    "start_seq",
                                                                    "middle_seq",
                                                                    "end_seq",
                                                                    "start_s",
                                                                    "middle_s",
                                                                    "end_s",
                                                                    "rate_per_min",
                                                                    "inspiration_s",
                                                                    "expiration_s",
                                                                    "tiv",
                                                                    "tiv_expiratory",
                                                                    "eeli",
                                                                    "eili",
                                                                    "eeli_change",
                                                                    "eeli_trend_per_min",
                                                                    "pixel_data",
                                                                    "cov_vertical_pct",
                                                                    "cov_horizontal_pct",
                                                                    "gi",
                                                                    "rvd_mean_pct",
                                                                    "rvd_index_pct",
                                                                    "silent_dependent_pct",
                                                                    "silent_nondependent_pct",
                                                                    "lung_pixels"};

class Hdf5IndicesAnnex final : public sinks::RecordingAnnex {
 public:
  explicit Hdf5IndicesAnnex(IndicesEngine engine, size_t chunk_frames = 256);
  ~Hdf5IndicesAnnex() override;

  void create(int64_t root, const std::string& file) override;
  void append(const pipeline::FrameSlot& frame) noexcept override;
  void flush() noexcept override;
  void close() noexcept override;
  uint64_t errors() const noexcept override { return errors_; }
  uint64_t breaths() const noexcept { return engine_.breaths(); }

  struct Table;  // one extendible 2-D dataset with its row buffer

 private:
  void add_breath(const BreathIndices& b) noexcept;

  IndicesEngine engine_;
  size_t chunk_frames_;
  int64_t group_ = -1;
  std::unique_ptr<Table> seq_, regions_, breaths_, tidal_;
  std::vector<double> breath_row_;
  std::vector<float> tidal_row_;
  uint64_t errors_ = 0;
  bool closed_ = false;
};

}  // namespace eit::indices
