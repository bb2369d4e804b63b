#pragma once
// ViewSink: the ImageSink of `eitstream run --http`. Sends every image to a ViewServer stream in
// the published wire format (ImageHeader + float32 payload), the series message at begin() and
// the series-end message at end(). Its policy is kDropNewest: publish() copies into the stream's
// RecentFrameRing and returns; an image the server had not taken before the ring overwrote it
// counts as dropped (the server's own per-browser skips are counted there).
//
// Threads: publish-stage thread for begin/publish/end; stats from any thread. publish() never
// blocks, allocates, locks or logs. The server must outlive the sink.
#include <atomic>
#include <memory>
#include <string>

#include "eit/pipeline/image_sink.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/series_message.hpp"
#include "eit/view/view_server.hpp"

namespace eit::view {

class ViewSink final : public pipeline::ImageSink {
 public:
  // `series` should carry the same series_id as the run's other publishers, so that headers and
  // series messages agree across outputs.
  ViewSink(const recon::Model& model, ViewServer& server, sinks::SeriesInfo series);

  std::string_view name() const noexcept override { return "view"; }
  void begin() noexcept override;
  void publish(const pipeline::FrameSlot& frame) noexcept override;
  void end() noexcept override;
  pipeline::SinkStats stats() const noexcept override;
  pipeline::SinkPolicy policy() const noexcept override {
    return pipeline::SinkPolicy::kDropNewest;
  }

 private:
  ViewServer& server_;
  sinks::SeriesInfo series_;
  std::string series_json_;
  std::shared_ptr<StreamChannel> channel_;
  sinks::ImageHeader header_template_;
  size_t payload_bytes_ = 0;
  std::atomic<uint64_t> sent_{0}, errors_{0};
};

}  // namespace eit::view
