#include "run_view.hpp"

#include <chrono>
#include <thread>

#include "command_registry.hpp"
#include "eit/indices/indices_publisher.hpp"
#include "pipeline_status_json.hpp"
#include "view_banner.hpp"

namespace eit::cli {

RunView open_run_view(const std::string& http, const recon::Model& model,
                      const sinks::SeriesInfo& series) {
  RunView v;
  if (http.empty()) return v;
  try {
    auto options = view::parse_http_address(http);
    options.report = print_view_report;
    v.server = std::make_unique<view::ViewServer>(std::move(options));
  } catch (const std::exception& e) {
    throw CommandError(e.what());
  }
  v.sink = std::make_unique<view::ViewSink>(model, *v.server, series);
  return v;
}

void attach_indices_to_view(RunView& v, pipeline::ImageSink* indices_sink,
                            const view::ZmqViewCurve& curve) {
  const auto* publisher = dynamic_cast<const indices::IndicesPublisher*>(indices_sink);
  if (!v.server || !publisher) return;
  std::string endpoint = publisher->endpoint();
  // A publisher bound to all interfaces is reached on loopback from inside its own process.
  for (const std::string any : {"tcp://0.0.0.0:", "tcp://*:"})
    if (endpoint.starts_with(any)) endpoint = "tcp://127.0.0.1:" + endpoint.substr(any.size());
  try {
    v.indices = std::make_unique<view::ZmqViewFeed>(*v.server, std::vector{endpoint}, curve);
  } catch (const std::exception& e) {
    throw CommandError(e.what());
  }
}

RunViewStopper::~RunViewStopper() {
  if (!server_) return;
  // Give the browsers a moment to receive the series-end message the sink posted.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server_->stop();
}

RunViewStopper start_run_view(RunView& v, pipeline::Pipeline& pipe,
                              std::vector<std::string> source_warnings) {
  if (!v.server) return RunViewStopper(nullptr);
  v.server->set_recapture([&pipe](size_t frames) {
    pipe.recapture_reference(frames);
    return std::string();
  });
  v.server->set_status_provider([&pipe, warnings = std::move(source_warnings)] {
    return pipeline_status_json(pipe.stats(), warnings);
  });
  v.server->start();
  if (v.indices) v.indices->start();
  print_view_banner(*v.server, "this run's images");
  return RunViewStopper(v.server.get());
}

}  // namespace eit::cli
