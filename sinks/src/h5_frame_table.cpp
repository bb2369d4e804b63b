#include "h5_frame_table.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/hdf5_io.hpp"

namespace eit::sinks::detail {
namespace {

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {} failed (HDF5)", file, what));
}

}  // namespace

H5FrameTable::H5FrameTable(const std::filesystem::path& path, const std::string& data_name,
                           size_t width, size_t chunk_rows, int deflate_level,
                           bool replace_existing)
    : path_(path.string()), width_(width), chunk_rows_(std::max<size_t>(1, chunk_rows)) {
  if (width == 0) throw std::invalid_argument(fmt::format("{}: row width 0", path_));
  if (deflate_level < 0 || deflate_level > 9)
    throw std::invalid_argument(
        fmt::format("{}: compression level {}, expected 0 (none) to 9", path_, deflate_level));
  // The row buffer is one chunk; HDF5 refuses chunks of 4 GiB or more, and long before that the
  // buffer is memory nobody meant to spend.
  if (chunk_rows_ > kMaxChunkBytes / (width_ * sizeof(float)))
    throw std::invalid_argument(
        fmt::format("{}: a chunk of {} rows of {} values is over {} MiB; give fewer rows per chunk",
                    path_, chunk_rows_, width_, kMaxChunkBytes >> 20));
  if (rlimit rl{}; ::getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    file_size_limit_ = static_cast<uint64_t>(rl.rlim_cur);
  // SWMR needs the 1.10 file format; the latest bound lets HDF5 use it.
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  // EXCL: HDF5's own lock is gone once SWMR writing starts, so a second run given the same path
  // would otherwise truncate and interleave with the first.
  std::string reason;
  {
    const recon::h5::QuietErrors quiet;
    file_ = H5Fcreate(path_.c_str(), replace_existing ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT,
                      fapl);
    // Read before H5Pclose, whose success clears HDF5's error stack.
    if (file_ < 0) reason = recon::h5::error_reason();
  }
  H5Pclose(fapl);
  if (file_ < 0) {
    std::error_code ec;
    if (!replace_existing && std::filesystem::exists(path, ec))
      throw std::runtime_error(fmt::format(
          "{}: the file exists; not replaced (an earlier recording, or another run's)", path_));
    throw std::runtime_error(fmt::format("{}: creating the file failed: {}", path_, reason));
  }
  try {
    data_ = create_column(data_name, H5T_NATIVE_FLOAT, width, deflate_level);
    seq_ = create_column("seq", H5T_NATIVE_UINT64, 1, 0);
    t_acq_ = create_column("t_acquired_ns", H5T_NATIVE_INT64, 1, 0);
    t_pub_ = create_column("t_published_ns", H5T_NATIVE_INT64, 1, 0);
    flags_ = create_column("flags", H5T_NATIVE_UINT32, 1, 0);
    dropped_ = create_column("dropped_before", H5T_NATIVE_UINT32, 1, 0);
    rows_.assign(chunk_rows_ * width_, 0.0f);
    seq_buf_.assign(chunk_rows_, 0);
    t_acq_buf_.assign(chunk_rows_, 0);
    t_pub_buf_.assign(chunk_rows_, 0);
    flags_buf_.assign(chunk_rows_, 0);
    dropped_buf_.assign(chunk_rows_, 0);
  } catch (...) {
    // The destructor does not run for a constructor that throws: a file this constructor made
    // and could not finish holds nothing, and left behind it would block the retry.
    const recon::h5::QuietErrors quiet;
    for (Column* c : {&data_, &seq_, &t_acq_, &t_pub_, &flags_, &dropped_})
      if (c->dataset >= 0) H5Dclose(c->dataset), c->dataset = H5I_INVALID_HID;
    H5Fclose(file_);
    file_ = H5I_INVALID_HID;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    throw;
  }
}

H5FrameTable::~H5FrameTable() { close(); }

H5FrameTable::Column H5FrameTable::create_column(const std::string& name, hid_t type, size_t width,
                                                 int deflate) {
  Column c;
  c.type = type;
  c.width = width;
  const int rank = width > 1 ? 2 : 1;
  const hsize_t dims[2] = {0, width}, maxdims[2] = {H5S_UNLIMITED, width};
  // Per-frame columns get larger chunks (they are tiny); the data chunk is chunk_rows rows.
  const hsize_t chunk[2] = {width > 1 ? chunk_rows_ : std::max<hsize_t>(chunk_rows_, 1024), width};
  const hid_t space = H5Screate_simple(rank, dims, maxdims);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, chunk);
  // Every row is written before it becomes visible: a fill would only be a memset of each new
  // chunk that the rows then overwrite.
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  if (deflate > 0) {
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, static_cast<unsigned>(deflate));
  }
  c.chunk_rows = chunk[0];
  // Unfiltered columns take whole chunks straight to the file (write_column), which the chunk
  // cache would otherwise copy and hold; it is left for the partial chunks of a flush.
  c.direct = deflate == 0;
  c.dataset = H5Dcreate2(file_, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  if (c.dataset < 0) fail(path_, fmt::format("creating /{}", name));
  return c;
}

void H5FrameTable::start_swmr() {
  if (swmr_) return;
  if (H5Fstart_swmr_write(file_) < 0) fail(path_, "starting SWMR writing");
  swmr_ = true;
}

bool H5FrameTable::append(const float* row, const FrameRowMeta& meta) noexcept {
  if (stopped_.load(std::memory_order_relaxed)) {
    rows_lost_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::memcpy(rows_.data() + buffered_ * width_, row, width_ * sizeof(float));
  seq_buf_[buffered_] = meta.seq;
  t_acq_buf_[buffered_] = meta.t_acquired_ns;
  t_pub_buf_[buffered_] = meta.t_published_ns;
  flags_buf_[buffered_] = meta.flags;
  dropped_buf_[buffered_] = meta.dropped_before;
  ++buffered_;
  accepted_.fetch_add(1, std::memory_order_relaxed);
  // Write when the buffer reaches the end of a data chunk: after a partial flush (tick) that is
  // a shorter buffer, so that the following writes are whole, aligned chunks again.
  const size_t room = chunk_rows_ - rows_written_.load(std::memory_order_relaxed) % chunk_rows_;
  return buffered_ < room || write_buffered(flush_each_chunk_);
}

bool H5FrameTable::write_column(const Column& c, const void* data, size_t rows) noexcept {
  const int rank = c.width > 1 ? 2 : 1;
  const hsize_t done = rows_written_.load(std::memory_order_relaxed);
  const hsize_t new_dims[2] = {done + rows, c.width};
  if (H5Dset_extent(c.dataset, new_dims) < 0) return note_failure();
  if (c.direct && done % c.chunk_rows == 0 && rows == c.chunk_rows) {
    // One whole chunk at a chunk boundary: its bytes as they are in memory, no cache, no copy.
    const hsize_t offset[2] = {done, 0};
    const size_t bytes = rows * c.width * H5Tget_size(c.type);
    return H5Dwrite_chunk(c.dataset, H5P_DEFAULT, 0, offset, bytes, data) >= 0 || note_failure();
  }
  const hid_t file_space = H5Dget_space(c.dataset);
  const hsize_t start[2] = {done, 0}, count[2] = {rows, c.width};
  H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const hid_t mem_space = H5Screate_simple(rank, count, nullptr);
  const bool ok = H5Dwrite(c.dataset, c.type, mem_space, file_space, H5P_DEFAULT, data) >= 0 ||
                  note_failure();  // before the closes below clear HDF5's error stack
  H5Sclose(mem_space);
  H5Sclose(file_space);
  return ok;
}

bool H5FrameTable::room_on_disk() noexcept {
  const uint64_t next = buffered_ * (width_ * sizeof(float) + 32);
  if (file_size_limit_ != UINT64_MAX) {
    struct stat st {};
    const uint64_t size = ::stat(path_.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    // HDF5 allocates whole chunks: the data's and the five per-frame columns' next ones.
    const uint64_t chunks = chunk_rows_ * width_ * sizeof(float) +
                            5 * std::max<uint64_t>(chunk_rows_, 1024) * sizeof(uint64_t);
    if (size + chunks + kFileLimitMargin > file_size_limit_) {
      try {
        reason_ = fmt::format(
            "the file is {:.1f} MiB and the process may write files of at most {:.1f} MiB "
            "(ulimit -f)",
            static_cast<double>(size) / (1 << 20),
            static_cast<double>(file_size_limit_) / (1 << 20));
      } catch (...) {
      }
      stop_after_failure("stopped before the file-size limit");
      return false;
    }
  }
  if (min_free_ == 0) return true;
  uint64_t free = 0;
  if (free_probe_) {
    free = free_probe_();
  } else {
    struct statvfs fs {};
    if (::statvfs(path_.c_str(), &fs) != 0) return true;  // unknown: let the write tell
    free = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  }
  const uint64_t needed = next + min_free_;
  if (free >= needed) return true;
  try {
    reason_ = fmt::format("the disk has {:.1f} MiB free, and the recorder keeps {:.1f} MiB free",
                          static_cast<double>(free) / (1 << 20),
                          static_cast<double>(min_free_) / (1 << 20));
  } catch (...) {
  }
  stop_after_failure("stopped before the disk was full");
  return false;
}

bool H5FrameTable::note_failure() noexcept {
  try {
    reason_ = recon::h5::error_reason();
  } catch (...) {  // out of memory while failing: the counts still tell
  }
  return false;
}

bool H5FrameTable::flush() noexcept {
  if (file_ < 0 || stopped_.load(std::memory_order_relaxed)) return true;
  if (buffered_ > 0) return write_buffered(true);
  if (!swmr_ || flush_each_chunk_) return true;
  // Whole chunks written since the last flush are not visible yet: flush in the same order.
  const recon::h5::QuietErrors quiet;  // a failure is reported once, by failure(), not printed
  bool ok = true;
  for (const Column* c : {&seq_, &t_acq_, &t_pub_, &flags_, &dropped_, &data_})
    ok = ok && (H5Dflush(c->dataset) >= 0 || note_failure());
  if (!ok) {
    stop_after_failure("flushing the rows to the file failed");
    return false;
  }
  rows_durable_ = rows_written_.load(std::memory_order_relaxed);
  return true;
}

bool H5FrameTable::write_buffered(bool make_visible) noexcept {
  if (buffered_ == 0 || file_ < 0) return true;
  if (before_write_) before_write_();
  if (!room_on_disk()) return false;
  const recon::h5::QuietErrors quiet;  // a failure is reported once, by failure(), not printed
  bool ok = true;
  // Per-frame columns first and the data last, each flushed, so a SWMR reader that sees a row of
  // /images (its length decides the frame count) also sees that row's seq and times.
  for (const auto& [col, buf] : {std::pair<const Column*, const void*>{&seq_, seq_buf_.data()},
                                 {&t_acq_, t_acq_buf_.data()},
                                 {&t_pub_, t_pub_buf_.data()},
                                 {&flags_, flags_buf_.data()},
                                 {&dropped_, dropped_buf_.data()},
                                 {&data_, rows_.data()}}) {
    ok = ok && write_column(*col, buf, buffered_);
    if (ok && swmr_ && make_visible) ok = H5Dflush(col->dataset) >= 0 || note_failure();
  }
  if (!ok) {
    stop_after_failure("writing rows to the file failed");
    return false;
  }
  rows_written_.fetch_add(buffered_, std::memory_order_relaxed);
  // Flushed (or nothing to flush before SWMR): on disk whole. Unflushed chunks become durable at
  // the next flush().
  if (make_visible || !swmr_) rows_durable_ = rows_written_.load(std::memory_order_relaxed);
  buffered_ = 0;
  return true;
}

void H5FrameTable::stop_after_failure(const char* what) noexcept {
  // Rows written since the last complete flush may be partly on disk, and HDF5 may have grown
  // some datasets and not others: cut every dataset back to the last complete row, so a reader
  // never sees a row whose image or columns were not written (zeros in place of an image).
  const uint64_t undone = rows_written_.load(std::memory_order_relaxed) - rows_durable_;
  rows_lost_.fetch_add(undone + buffered_, std::memory_order_relaxed);
  accepted_.fetch_sub(undone + buffered_, std::memory_order_relaxed);
  write_errors_.fetch_add(1, std::memory_order_relaxed);
  rows_written_.store(rows_durable_, std::memory_order_relaxed);
  buffered_ = 0;
  {
    const recon::h5::QuietErrors quiet;  // the cut may fail too (the disk is still full)
    for (const Column* c : {&data_, &seq_, &t_acq_, &t_pub_, &flags_, &dropped_}) {
      const hsize_t dims[2] = {rows_durable_, c->width};
      H5Dset_extent(c->dataset, dims);
      if (swmr_) H5Dflush(c->dataset);
    }
  }
  try {
    failure_ = fmt::format("{} after {} rows: {}; nothing more is written to it", what,
                           rows_durable_, reason_.empty() ? "HDF5 gave no reason" : reason_);
  } catch (...) {  // out of memory while failing: the counts still tell
  }
  stopped_.store(true, std::memory_order_release);
}

std::string H5FrameTable::failure() const {
  return stopped_.load(std::memory_order_acquire) ? failure_ : std::string();
}

void H5FrameTable::close() noexcept {
  if (file_ < 0) return;
  flush();
  const recon::h5::QuietErrors quiet;
  for (Column* c : {&data_, &seq_, &t_acq_, &t_pub_, &flags_, &dropped_})
    if (c->dataset >= 0) H5Dclose(c->dataset), c->dataset = H5I_INVALID_HID;
  // Closing writes the last metadata (and ends SWMR writing): it can fail on a full disk too.
  if (H5Fclose(file_) < 0 && !stopped_.load(std::memory_order_relaxed)) {
    note_failure();
    stop_after_failure("closing the file failed");
  }
  file_ = H5I_INVALID_HID;
}

}  // namespace eit::sinks::detail
