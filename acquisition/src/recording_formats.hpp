#pragma once
// The per-format openers behind open_recording_reader(), and the layout rules they share.
// Private to eit_acquisition; each opener lives in its own <format>_reader.cpp.
#include <filesystem>
#include <memory>
#include <string>

#include "eit/acquisition/measurement_map.hpp"
#include "eit/acquisition/recording_reader.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::acquisition::detail {

using ReaderPtr = std::unique_ptr<RecordingReader>;
namespace fs = std::filesystem;

ReaderPtr open_draeger_eit(const fs::path& path, const RecordingOptions& o,
                           const recon::Protocol& m);
ReaderPtr open_goe_get(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m);
ReaderPtr open_mat(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m);
ReaderPtr open_openeit_text(const fs::path& path, const RecordingOptions& o,
                            const recon::Protocol& m);
ReaderPtr open_raw_frames(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m,
                          bool float64);
ReaderPtr open_csv(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m);
ReaderPtr open_hdf5_frames(const fs::path& path, const RecordingOptions& o,
                           const recon::Protocol& m);
ReaderPtr open_npy(const fs::path& path, const RecordingOptions& o, const recon::Protocol& m);

// Throws naming the file when options.values_per_frame exceeds kMaxValuesPerFrame (its byte
// size would overflow the readers' arithmetic).
void check_values_per_frame(const fs::path& path, const RecordingOptions& o);

// A format's own layout with the user's overrides applied: --layout replaces the protocol part
// (keeping where the measurements sit in the raw frame and whether it is complex), the complex
// part and the polarity always apply.
DeviceLayout with_overrides(DeviceLayout native, const RecordingOptions& o,
                            const recon::Protocol& model);

// For formats that carry no layout (raw, CSV, .npy, .mat): values == the model's n_meas means the
// model's own order, n×n means a full 'std' table; anything else needs --layout. Throws naming
// the file and both counts.
DeviceLayout generic_layout(const fs::path& path, size_t values, bool complex,
                            const RecordingOptions& o, const recon::Protocol& model);

// The OpenEIT layout for a value count: n electrodes, opposition drive (n/2), adjacent pairs,
// 'std' order, n·(n−4) values (8 → 32, 16 → 192, 32 → 896). Throws for other counts.
DeviceLayout openeit_layout(size_t values);

}  // namespace eit::acquisition::detail
