#pragma once
// `eitstream run --http ADDR`: the live view inside the pipeline's process. The ViewServer and
// its ViewSink are made before the pipeline (the sink joins the pipeline's sinks); once the
// pipeline exists, the page's recapture button is wired to Pipeline::recapture_reference and its
// status to the pipeline's counters, and the server starts. With `run --indices` as well, the
// page gets the indices too: a ZmqViewFeed subscribes to the indices publisher's own socket and
// forwards its global / breath messages into the view's stream.
#include <memory>
#include <string>
#include <vector>

#include "eit/pipeline/pipeline.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/series_message.hpp"
#include "eit/view/view_server.hpp"
#include "eit/view/view_sink.hpp"
#include "eit/view/zmq_view_feed.hpp"

namespace eit::cli {

struct RunView {
  std::unique_ptr<view::ViewServer> server;  // declared first: outlives the sink
  std::unique_ptr<view::ViewSink> sink;
  std::unique_ptr<view::ZmqViewFeed> indices;  // declared after the server: stops before it
};

// Empty `http`: no view (both null). Throws CommandError for a bad address or a busy port.
RunView open_run_view(const std::string& http, const recon::Model& model,
                      const sinks::SeriesInfo& series);
// With an indices sink (`run --indices`) and a view: subscribes the view to the indices' socket
// (as a CURVE client with `curve` when the indices publisher has CURVE on). Nothing when either
// is absent.
void attach_indices_to_view(RunView& view, pipeline::ImageSink* indices_sink,
                            const view::ZmqViewCurve& curve = {});
// Stops the server (its callbacks use the pipeline) when it goes out of scope: declare it after
// the pipeline so that it goes first.
class RunViewStopper {
 public:
  explicit RunViewStopper(view::ViewServer* server) : server_(server) {}
  ~RunViewStopper();
  RunViewStopper(const RunViewStopper&) = delete;
  RunViewStopper& operator=(const RunViewStopper&) = delete;

 private:
  view::ViewServer* server_;
};

// Wires recapture and status to `pipe`, starts the server and prints its address. The status
// carries `source_warnings` (RunInputs::warnings) for as long as the page is open.
[[nodiscard]] RunViewStopper start_run_view(RunView& view, pipeline::Pipeline& pipe,
                                            std::vector<std::string> source_warnings);

}  // namespace eit::cli
