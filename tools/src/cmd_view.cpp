// `eitstream view [ENDPOINT…] --http 127.0.0.1:8080`: subscribes to eitstream publishers over
// ZeroMQ, or follows beds through NATS JetStream (nats://HOST:4222?bed=ID, view_nats_feed.hpp),
// and serves the live view (a web page that shows every image as it arrives) over HTTP +
// WebSocket. Several endpoints, several streams on one endpoint, or several beds give the page a
// stream chooser.
// The page's recapture button needs the pipeline's process: use `eitstream run --http` for that.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "bind_exposure.hpp"
#include "command_registry.hpp"
#include "eit/sinks/curve_keys.hpp"
#include "eit/view/view_server.hpp"
#include "eit/view/zmq_view_feed.hpp"
#include "run_security.hpp"
#include "stop_signals.hpp"
#include "view_banner.hpp"
#include "view_nats_feed.hpp"

namespace eit::cli {
namespace {

struct ViewOptions {
  std::vector<std::string> endpoints{"tcp://127.0.0.1:5555"};
  std::string http = "127.0.0.1:8080";
  double duration = 0;
  CurveClientOptions curve;
  bool insecure = false;
};

void view(const ViewOptions& o) {
  view::ViewServerOptions so;
  try {
    so = view::parse_http_address(o.http);
  } catch (const std::invalid_argument& e) {
    throw CommandError(e.what());
  }
  check_bind(BindKind::kHttp, "--http", o.http, false, o.insecure);
  so.report = print_view_report;
  view::ZmqViewCurve curve;
  if (!o.curve.server_key.empty() || !o.curve.secret.empty()) {
    if (o.curve.server_key.empty() || o.curve.secret.empty())
      throw CommandError("--curve-server-key and --curve-secret go together (docs/security.md)");
    try {
      curve.server_public_z85 = sinks::read_curve_certificate(o.curve.server_key, false).public_z85;
      curve.client = sinks::read_curve_certificate(o.curve.secret, true);
    } catch (const std::runtime_error& e) {
      throw CommandError(e.what());
    }
  }
  view::ViewServer server(so);
  // Declared after the server: the feeds stop before it.
  std::vector<std::unique_ptr<view::ViewFeed>> feeds;
  std::vector<std::string> zmq_endpoints;
  for (const auto& e : o.endpoints) {
    if (is_nats_view_uri(e))
      feeds.push_back(open_nats_view_feed(server, e));
    else
      zmq_endpoints.push_back(e);
  }
  if (!zmq_endpoints.empty())
    feeds.push_back(std::make_unique<view::ZmqViewFeed>(server, zmq_endpoints, curve));
  server.set_status_provider([&feeds] { return view::feeds_status_json(feeds); });
  server.start();
  for (auto& f : feeds) f->start();
  // Before the banner: whoever has read the address can stop the view cleanly. Kept through the
  // summary, so a second signal cannot cut it short.
  const StopSignals stop;
  print_view_banner(server, fmt::format("{}", fmt::join(o.endpoints, ", ")));

  const auto t0 = std::chrono::steady_clock::now();
  while (stop.count() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (o.duration > 0 &&
        std::chrono::steady_clock::now() - t0 >= std::chrono::duration<double>(o.duration))
      break;
  }
  for (auto& f : feeds) f->stop();
  server.stop();
  const auto s = server.stats();
  fmt::print(
      "view: images sent {}, skipped for slow browsers {}, thinned to the pages' display rate {}, "
      "paint reports {}\n",
      s.images_sent, s.images_skipped, s.images_thinned, s.paint_reports);
}

const RegisterCommand kView{
    35, [](CLI::App& app) {
      auto o = std::make_shared<ViewOptions>();
      auto* cmd = app.add_subcommand(
          "view",
          "Serve a live view of published images in the web browser (HTTP + WebSocket); "
          "open the printed address");
      cmd->add_option("endpoint", o->endpoints,
                      "Publishers to subscribe to (eitstream run --endpoint), any number; or beds "
                      "to follow through NATS JetStream, nats://HOST:4222?site=S&bed=B"
                      "[&since=new|all|EPOCH_SECONDS&creds=FILE&tls-ca=FILE…] (the URI of listen "
                      "nats://…; live from the newest image unless since= asks for history)")
          ->capture_default_str();
      cmd->add_option("--http", o->http,
                      "Address to serve the page on, HOST:PORT (port 0: any free port); "
                      "loopback by default: anything else exposes the images to the network")
          ->capture_default_str();
      cmd->add_option("--duration", o->duration, "Stop after N seconds (0 = until Ctrl-C)")
          ->check(CLI::Validator(
              [](const std::string& s) {
                return std::strtod(s.c_str(), nullptr) >= 0 ? std::string()
                                                            : "expected seconds >= 0, got " + s;
              },
              "SECONDS>=0"));
      add_curve_client_options(*cmd, o->curve);
      cmd->add_flag("--insecure", o->insecure,
                    "Allow --http on a non-loopback address (plain HTTP: anyone who can reach it "
                    "sees the images)");
      cmd->footer(
          std::string("Exit status: 0 at the end of --duration or after SIGINT/SIGTERM, with its "
                      "summary; 1 a wrong set-up (an --http address that is not HOST:PORT or "
                      "cannot be bound, one off loopback without --insecure, CURVE keys that "
                      "cannot be read, an endpoint that cannot be used); 2 a command line that "
                      "does not parse.") +
          kExitBySignalBeforeSetUp);
      cmd->callback([o] { view(*o); });
    }};

}  // namespace
}  // namespace eit::cli
