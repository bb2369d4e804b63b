#pragma once
// H5FrameTable: an HDF5 file that grows by one row per frame, written in SWMR mode so readers
// (h5py with swmr=True, `eitstream indices`) can follow it while it is being written. Private to
// eit_sinks; the image and raw-frame recorders are its two users.
//
//   /<data>           float32 [n × width], chunked (chunk_rows rows), optional deflate
//   /seq              uint64  [n]      /t_acquired_ns  int64 [n]   /t_published_ns int64 [n]
//   /flags            uint32  [n]      /dropped_before uint32 [n]
//
// Life: construct (creates the file, throws std::runtime_error naming file and object), write
// the metadata through root() and the h5meta helpers, start_swmr(), then append() per frame and
// close() (or the destructor). append() copies into buffers allocated at construction and writes
// whole chunks (unfiltered: H5Dwrite_chunk, bypassing the chunk cache); flush() writes what is
// buffered (any row count) and makes it visible to readers.
// One writer thread; append/flush never throw. The first failed write or flush (a full disk, an
// I/O error) stops the table: the datasets are cut back to the rows last flushed whole, so the
// file holds only complete rows; those rows after them, and every later row, are counted as lost
// and never written; failure() then says why (the system's reason where HDF5 reports one).
#include <hdf5.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace eit::sinks::detail {

struct FrameRowMeta {
  uint64_t seq = 0;
  int64_t t_acquired_ns = 0;
  int64_t t_published_ns = 0;
  uint32_t flags = 0;
  uint32_t dropped_before = 0;
};

class H5FrameTable {
 public:
  static constexpr size_t kMaxChunkBytes = size_t{1} << 30;  // chunk_rows × width × 4 at most
  static constexpr uint64_t kFileLimitMargin = uint64_t{64} << 10;  // metadata beyond the chunks

  // replace_existing false: an existing file is refused (std::runtime_error naming it). A chunk
  // over kMaxChunkBytes is refused (std::invalid_argument) before the file is created; a file
  // created and then not finished (a column HDF5 refuses) is removed again.
  H5FrameTable(const std::filesystem::path& path, const std::string& data_name, size_t width,
               size_t chunk_rows, int deflate_level, bool replace_existing);
  ~H5FrameTable();
  H5FrameTable(const H5FrameTable&) = delete;
  H5FrameTable& operator=(const H5FrameTable&) = delete;

  hid_t root() const noexcept { return file_; }
  const std::string& path() const noexcept { return path_; }
  void start_swmr();  // after all attributes and fixed datasets; throws

  // Buffers one row (width floats); writes the buffer when a chunk is full. False when that
  // write failed or the table had stopped (the rows are then lost and counted).
  bool append(const float* row, const FrameRowMeta& meta) noexcept;
  bool flush() noexcept;
  void close() noexcept;
  // Set-up: called before each write of buffered rows (Hdf5RecorderOptions::before_write).
  void set_before_write(std::function<void()> hook) { before_write_ = std::move(hook); }
  // Set-up: stop cleanly (the file stays whole) when a write would leave less than `min_free`
  // bytes free; `probe` gives the free bytes (null: statvfs of the file).
  void set_min_free(uint64_t min_free, std::function<uint64_t()> probe) {
    min_free_ = min_free;
    free_probe_ = std::move(probe);
  }
  // Set-up: false leaves whole-chunk writes unflushed; flush() and close() still flush.
  void set_flush_each_chunk(bool on) noexcept { flush_each_chunk_ = on; }

  // Any thread.
  uint64_t rows_written() const noexcept { return rows_written_.load(std::memory_order_relaxed); }
  uint64_t rows_accepted() const noexcept { return accepted_.load(std::memory_order_relaxed); }
  uint64_t rows_lost() const noexcept { return rows_lost_.load(std::memory_order_relaxed); }
  uint64_t write_errors() const noexcept { return write_errors_.load(std::memory_order_relaxed); }
  // Empty while writing works; after the first failure, what failed and why (set once).
  std::string failure() const;
  bool stopped() const noexcept { return stopped_.load(std::memory_order_relaxed); }

 private:
  struct Column {
    hid_t dataset = H5I_INVALID_HID;
    hid_t type = H5I_INVALID_HID;
    size_t width = 1;
    hsize_t chunk_rows = 1;
    bool direct = false;  // whole chunks by H5Dwrite_chunk (no filter to apply)
  };
  Column create_column(const std::string& name, hid_t type, size_t width, int deflate);
  bool write_column(const Column& c, const void* data, size_t rows) noexcept;
  // Writes the buffered rows; make_visible flushes each dataset after its write (SWMR).
  bool write_buffered(bool make_visible) noexcept;
  // After a failed write or flush: cut every dataset back to rows_durable_, count what is lost,
  // remember why (`what` failed) and write nothing more.
  void stop_after_failure(const char* what) noexcept;
  // True when the disk has room for the buffered rows and min_free_ beside them; else stops
  // the table (nothing is written, the file stays whole) and says why.
  bool room_on_disk() noexcept;
  // Keeps HDF5's reason for the call that just failed (before another call clears it); false.
  bool note_failure() noexcept;

  std::string path_;
  hid_t file_ = H5I_INVALID_HID;
  size_t width_, chunk_rows_;
  Column data_, seq_, t_acq_, t_pub_, flags_, dropped_;
  std::vector<float> rows_;
  std::vector<uint64_t> seq_buf_;
  std::vector<int64_t> t_acq_buf_, t_pub_buf_;
  std::vector<uint32_t> flags_buf_, dropped_buf_;
  size_t buffered_ = 0;
  std::atomic<uint64_t> accepted_{0}, rows_written_{0}, rows_lost_{0}, write_errors_{0};
  uint64_t rows_durable_ = 0;  // rows written and flushed (the writer thread's)
  std::atomic<bool> stopped_{false};
  std::string reason_;   // HDF5's reason for the last failed call
  std::string failure_;  // written once before stopped_ is set (release)
  bool swmr_ = false;
  bool flush_each_chunk_ = true;
  std::function<void()> before_write_;
  uint64_t min_free_ = 0;
  std::function<uint64_t()> free_probe_;
  // The process's file-size limit (ulimit -f; UINT64_MAX: none). A write past it fails and
  // leaves the metadata pointing past the file's end, which libhdf5 1.10 cannot open: the
  // recorder stops before it, as before a full disk.
  uint64_t file_size_limit_ = UINT64_MAX;
};

}  // namespace eit::sinks::detail
