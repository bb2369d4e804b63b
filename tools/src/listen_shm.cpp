#include "listen_shm.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "command_registry.hpp"
#include "eit/sinks/shm_layout.hpp"
#include "eit/sinks/shm_reader.hpp"

namespace eit::cli {
namespace {

void set_series(std::vector<zmq::message_t>& parts, const std::string& json) {
  parts.clear();
  parts.emplace_back(std::string_view("eit/shm/series"));
  parts.emplace_back(json.data(), json.size());
}

// Look again soon, so the first images of a starting publisher are seen.
void pause(int timeout_ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 2)));
}

}  // namespace

ShmListenFeed::ShmListenFeed(const std::string& uri) {
  try {
    uri_ = "shm://" + sinks::shm_name_of(uri);
  } catch (const std::invalid_argument& e) {
    throw CommandError(e.what());
  }
}

ShmListenFeed::~ShmListenFeed() = default;

void ShmListenFeed::note_waiting() {
  if (noted_ || attached_) return;
  noted_ = true;
  fmt::print(stderr, "eitstream listen: {}; waiting for a publisher\n", problem_);
}

bool ShmListenFeed::attach(std::vector<zmq::message_t>& parts) {
  // An ended ring stays bound to its name after a kill -9: re-attaching it would report its
  // series and end again every time. Wait until the name goes or a new publisher takes it.
  if (stale_ && !stale_->name_rebound()) return false;
  stale_.reset();
  std::unique_ptr<sinks::ShmReader> reader;
  try {
    reader = std::make_unique<sinks::ShmReader>(uri_);
  } catch (const std::runtime_error& e) {
    problem_ = e.what();
    note_waiting();
    return false;
  }
  if (!reader->publisher_alive()) {
    problem_ = fmt::format("{}: a ring left by a publisher that has ended or is gone", uri_);
    note_waiting();
    stale_ = std::move(reader);
    return false;
  }
  reader_ = std::move(reader);
  attached_ = true;
  set_series(parts, reader_->series_json());
  return true;
}

bool ShmListenFeed::next(std::vector<zmq::message_t>& parts, int timeout_ms) {
  if (!reader_) {
    if (attach(parts)) return true;
    pause(timeout_ms);
    return false;
  }
  const sinks::ShmRead got = reader_->next(int64_t{timeout_ms} * 1'000'000);
  if (got == sinks::ShmRead::kTimeout) return false;
  if (got == sinks::ShmRead::kImage) {
    parts.clear();
    parts.emplace_back(std::string_view("eit/shm/img"));
    parts.emplace_back(&reader_->header(), sizeof(sinks::ImageHeader));
    parts.emplace_back(reader_->payload().data(), reader_->payload().size_bytes());
    return true;
  }
  // Ended or restarted: report the end of this series; a restart is attached on the next call.
  const auto& c = reader_->counts();
  set_series(parts, fmt::format(R"({{"type":"series-end","version":1,"series_id":"{:016x}",)"
                                R"("frames_read":{},"frames_missed":{},"reason":"{}"}})",
                                reader_->series_id(), c.images, c.overruns,
                                got == sinks::ShmRead::kEnded ? "ended" : "publisher restarted"));
  if (got == sinks::ShmRead::kEnded) stale_ = std::move(reader_);
  reader_.reset();
  return true;
}

}  // namespace eit::cli
