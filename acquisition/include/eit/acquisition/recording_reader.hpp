#pragma once
// RecordingReader: random access to the frames of a recorded file (Dräger .eit, Goe-MF II .get,
// EIDORS .mat, OpenEIT text, raw float32/float64, CSV, .npy), already mapped to the model's order.
//
// Set-up (open_recording_reader, the constructors) reads the header, counts whole frames and
// builds the MeasurementMap; it throws std::runtime_error / std::invalid_argument naming the file,
// the field, the value found and the value expected. A file that ends inside a frame keeps every
// whole frame before it and reports the cut in info().warnings.
//
// read() is the per-frame path: no allocation, no throw; it returns false (and counts the frame
// as bad) when a frame cannot be decoded (unparsable text row, I/O error). One thread at a time.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "eit/acquisition/measurement_map.hpp"
#include "eit/recon/protocol.hpp"

namespace eit::acquisition {

struct RecordingInfo {
  std::filesystem::path path;
  std::string format;                 // e.g. "Dräger .eit v51"
  size_t n_frames = 0;                // whole frames available to read()
  double rate_hz = 0.0;               // nominal frame rate, 0 when the file does not say
  std::string rate_source;            // where rate_hz came from ("header Framerate [Hz]", ".prl")
  size_t raw_values = 0;              // values per raw frame, as the device wrote them
  uint64_t bytes_total = 0;           // file size
  uint64_t truncated_bytes = 0;       // bytes of an incomplete last frame (not delivered)
  std::vector<std::string> warnings;  // set-up findings (truncation, missing rate, …)
  std::string reference_variable;     // a variable/dataset in the file holding a reference frame
                                      // (eitstream raw files: "v_ref"); "" when none
};

// Where a frame stood in the stream it was recorded from, when the file keeps that (eitstream
// raw-frame files: /seq, the gap bit of /flags, /dropped_before).
struct FrameOrigin {
  uint64_t seq = 0;             // its sequence number in the recorded stream
  bool gap_before = false;      // frames were missing before it there
  uint32_t dropped_before = 0;  // how many, where the recorder knew
};

class RecordingReader {
 public:
  virtual ~RecordingReader() = default;
  const RecordingInfo& info() const noexcept { return info_; }
  const MeasurementMap& map() const noexcept { return map_; }
  size_t n_values() const noexcept { return map_.n_values(); }

  // Decodes frame i (< info().n_frames) into out (>= n_values() floats) in model order.
  bool read(size_t i, std::span<float> out) noexcept {
    if (i >= info_.n_frames || !read_raw(i, raw_)) {
      ++bad_frames_;
      return false;
    }
    map_.apply(raw_, out);
    return true;
  }
  uint64_t bad_frames() const noexcept { return bad_frames_; }
  // Frame i's place in the recorded stream; false when the file does not keep it (then frame i
  // is frame i, no gaps). Replay and reconstruct keep the original numbering and gaps with it.
  virtual bool origin(size_t i, FrameOrigin& out) const noexcept {
    (void)i;
    (void)out;
    return false;
  }

 protected:
  // Derived readers fill info_ (its path first), then call set_map() once the device layout is
  // known. Throws std::invalid_argument naming the file when the layout cannot feed the model.
  void set_map(const DeviceLayout& layout, const recon::Protocol& model);
  // Fills raw (map().raw_scalars() doubles) with frame i as the device wrote it.
  virtual bool read_raw(size_t i, std::span<double> raw) noexcept = 0;

  RecordingInfo info_;

 private:
  MeasurementMap map_;
  std::vector<double> raw_;
  uint64_t bad_frames_ = 0;
};

// The most values one frame may have: far above any electrode count (32 electrodes, full
// complex table: 2,048); a larger count is a typo, and its byte size would overflow.
inline constexpr size_t kMaxValuesPerFrame = size_t{1} << 24;

// Options shared by every recording format; all default to "as the file says".
struct RecordingOptions {
  std::string format;  // "" = detect; draeger, get, mat, openeit, f32, f64, csv, npy, h5
  std::string variable;  // .mat: variable holding the frames ("" = the largest fitting); .h5: dataset
  size_t values_per_frame = 0;  // raw f32/f64 files (required there); ≤ kMaxValuesPerFrame
  std::string layout;           // device layout override (parse_layout); "" = the format's own
  ComplexPart complex_part = ComplexPart::kReal;
  bool invert = false;  // flip polarity (EIDORS-convention data into pyEIT's)
};

// Chooses the reader by options.format, else by extension, else by content. Throws naming the
// file when the format is unknown or the file does not match it.
std::unique_ptr<RecordingReader> open_recording_reader(const std::filesystem::path& path,
                                                       const RecordingOptions& options,
                                                       const recon::Protocol& model);

// The format name open_recording_reader would pick ("draeger", "get", …), for messages and tests.
std::string detect_recording_format(const std::filesystem::path& path);

}  // namespace eit::acquisition
