#include "eit/view/view_server.hpp"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eit/pipeline/clock.hpp"
#include "eit/sinks/image_header.hpp"
#include "eit/sinks/json_text.hpp"
#include "http_session.hpp"
#include "view_server_impl.hpp"
#include "ws_session.hpp"

namespace eit::view {
namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;

ViewServerOptions parse_http_address(const std::string& text) {
  ViewServerOptions o;
  std::string port = text;
  if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) o.address = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (o.address.size() > 2 && o.address.front() == '[' && o.address.back() == ']')
    o.address = o.address.substr(1, o.address.size() - 2);
  // The one name the server resolves: the loopback it means (the bind takes addresses only).
  if (o.address == "localhost") o.address = "127.0.0.1";
  unsigned value = 0;
  const auto r = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || r.ec != std::errc() || r.ptr != port.data() + port.size() || value > 65535)
    throw std::invalid_argument(fmt::format(
        "--http '{}': expected HOST:PORT, :PORT or PORT with a port 0..65535 (0: any free port)",
        text));
  o.port = static_cast<uint16_t>(value);
  return o;
}

StreamChannel::StreamChannel(size_t capacity, int wake_fd) : ring_(capacity), wake_fd_(wake_fd) {}

bool StreamChannel::publish(std::span<const std::byte> head,
                            std::span<const std::byte> body) noexcept {
  if (!ring_.write(head, body)) return false;
  const uint64_t one = 1;
  // Non-blocking eventfd: a failed write means the counter is already huge, i.e. the server has
  // been woken anyway.
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  return true;
}

std::shared_ptr<ImageBuffer> StreamState::acquire_buffer() {
  for (auto& b : pool)
    if (b.use_count() == 1) return b;
  pool.push_back(std::make_shared<ImageBuffer>());
  return pool.back();
}

ViewServer::Impl::Impl(ViewServerOptions o) : options(std::move(o)) {}

StreamState* ViewServer::Impl::find_stream(const std::string& name) {
  const auto it = streams.find(name);
  return it == streams.end() ? nullptr : &it->second;
}

void ViewServer::Impl::accept() {
  acceptor.async_accept([self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
    if (ec == asio::error::operation_aborted || !self->acceptor.is_open()) return;
    if (ec) {
      self->counters.accept_failures.fetch_add(1, std::memory_order_relaxed);
      self->last_accept_error = ec.message();
      if (self->failures_in_a_row++ == 0 && self->options.report)
        self->options.report(
            fmt::format("view: cannot accept a connection ({}); trying again every {} ms",
                        ec.message(), kAcceptRetryPause.count()));
      self->accept_pause.expires_after(kAcceptRetryPause);
      self->accept_pause.async_wait([self](boost::system::error_code wait_ec) {
        if (!wait_ec && self->acceptor.is_open()) self->accept();
      });
      return;
    }
    if (self->failures_in_a_row > 0 && self->options.report)
      self->options.report(fmt::format("view: accepting connections again, after {} failed tries",
                                       self->failures_in_a_row));
    self->failures_in_a_row = 0;
    boost::system::error_code ignored;
    s.set_option(tcp::no_delay(true), ignored);
    s.set_option(asio::socket_base::send_buffer_size(self->options.send_buffer_bytes), ignored);
    std::make_shared<HttpSession>(std::move(s), self)->start();
    self->accept();
  });
}

void ViewServer::Impl::arm_wake() {
  wake.async_read_some(asio::buffer(&wake_value, sizeof wake_value),
                       [self = shared_from_this()](boost::system::error_code ec, size_t) {
                         if (ec == asio::error::operation_aborted) return;
                         self->drain_channels();
                         self->arm_wake();
                       });
}

void ViewServer::Impl::drain_channels() {
  for (auto& [name, st] : streams) {
    if (!st.channel) continue;
    batch.clear();
    while (true) {
      auto buffer = st.acquire_buffer();
      if (!st.channel->ring().take(*buffer)) break;
      const auto h = sinks::decode_image_header(*buffer);
      if (!h) continue;  // only ViewServer's own feeders write here, and they validate
      st.wall_times[h->seq % StreamState::kSeqRing] = {
          h->seq, h->t_published_wall_ns - (h->t_published_ns - h->t_acquired_ns),
          h->t_published_wall_ns};
      ++st.images;
      batch.push_back({std::move(buffer), h->t_acquired_ns});
    }
    if (batch.empty()) continue;
    st.latest = batch.back();
    st.last_image_wall_ns = pipeline::wall_ns();
    for (const auto& s : sessions)
      if (s->stream() == name) s->send_images(batch);
    batch.clear();  // the buffers a session did not keep are free again
  }
}

void ViewServer::Impl::arm_status() {
  status_timer.expires_after(std::chrono::milliseconds(options.status_interval_ms));
  status_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec) return;
    if (!self->sessions.empty()) {
      json source = json::object();
      if (self->status_provider) source = json::parse(self->status_provider(), nullptr, false);
      const int64_t wall = pipeline::wall_ns();
      for (const auto& s : self->sessions) {
        const StreamState* st = self->find_stream(s->stream());
        json msg = {{"type", "status"},
                    {"stream", s->stream()},
                    {"server_wall_ms", static_cast<double>(wall) / 1e6},
                    {"browser",
                     {{"images_sent", s->images_sent},
                      {"images_skipped", s->images_skipped},
                      {"images_thinned", s->images_thinned},
                      {"painted", s->painted}}},
                    {"source", source}};
        json names = json::array();
        for (const auto& [name, other] : self->streams) names.push_back(name);
        msg["streams"] = names;
        if (st)
          msg["stream_state"] = {
              {"images", st->images},
              {"has_series", !st->series.empty()},
              {"last_image_age_ms", st->last_image_wall_ns
                                        ? static_cast<double>(wall - st->last_image_wall_ns) / 1e6
                                        : -1.0},
              {"overwritten", st->channel ? st->channel->ring().overwritten() : 0}};
        s->send_text(sinks::json_text(msg));
      }
    }
    self->arm_status();
  });
}

std::string ViewServer::Impl::hello_json() const {
  json names = json::array();
  for (const auto& [name, st] : streams) names.push_back(name);
  return sinks::json_text(json{{"type", "hello"},
                               {"version", 1},
                               {"streams", names},
                               {"recapture", static_cast<bool>(recapture)}});
}

void ViewServer::Impl::on_session_open(const std::shared_ptr<WsSession>& s) {
  sessions.insert(s);
  counters.browsers.store(sessions.size(), std::memory_order_relaxed);
  if (s->stream().empty()) s->set_stream(first_stream);
  s->send_text(hello_json());
  if (const StreamState* st = find_stream(s->stream())) send_stream_start(*s, *st, true);
}

void ViewServer::Impl::send_stream_start(WsSession& s, const StreamState& st, bool with_latest) {
  if (!st.series.empty()) s.send_text(st.series);
  if (with_latest && st.latest.bytes) s.send_latest(st.latest);
}

void ViewServer::Impl::on_session_close(const std::shared_ptr<WsSession>& s) {
  sessions.erase(s);
  counters.browsers.store(sessions.size(), std::memory_order_relaxed);
}

void ViewServer::Impl::on_session_select(const std::shared_ptr<WsSession>& s,
                                         const std::string& stream) {
  const StreamState* st = find_stream(stream);
  if (!st) return;
  const bool switched = s->stream() != stream;  // the page already has this stream's images
  s->set_stream(stream);
  send_stream_start(*s, *st, switched);
}

ViewServer::ViewServer(ViewServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(options))) {
  auto& o = impl_->options;
  try {
    const tcp::endpoint ep(asio::ip::make_address(o.address), o.port);
    impl_->acceptor.open(ep.protocol());
    impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
    impl_->acceptor.bind(ep);
    impl_->acceptor.listen();
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(
        fmt::format("view: cannot listen on {}:{}: {}", o.address, o.port, e.code().message()));
  }
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->wake_fd < 0) throw std::runtime_error("view: eventfd() failed");
  impl_->wake.assign(impl_->wake_fd);
}

ViewServer::~ViewServer() { stop(); }

uint16_t ViewServer::port() const noexcept {
  boost::system::error_code ec;
  const auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

std::string ViewServer::url() const {
  const auto& a = impl_->options.address;
  const bool v6 = a.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}/", v6 ? "[" : "", a, v6 ? "]" : "", port());
}

void ViewServer::start() {
  if (impl_->started) return;
  impl_->started = true;
  impl_->accept();
  impl_->arm_wake();
  impl_->arm_status();
  impl_->thread = std::thread([impl = impl_] { impl->io.run(); });
}

void ViewServer::stop() noexcept {
  if (!impl_->thread.joinable()) return;
  asio::post(impl_->io, [impl = impl_] {
    boost::system::error_code ec;
    impl->acceptor.close(ec);
    impl->status_timer.cancel();
    impl->accept_pause.cancel();
    impl->wake.cancel(ec);
    for (const auto& s : impl->sessions) s->close();
    impl->sessions.clear();
    impl->io.stop();
  });
  impl_->thread.join();
  // Let the cancelled operations complete here, so that their handlers (which hold the Impl)
  // are released and nothing outlives the server.
  impl_->io.restart();
  impl_->io.poll();
}

std::shared_ptr<StreamChannel> ViewServer::add_stream(const std::string& name, size_t capacity) {
  auto channel = std::make_shared<StreamChannel>(capacity, impl_->wake_fd);
  asio::post(impl_->io, [impl = impl_, name, channel] {
    auto& st = impl->streams[name];
    const bool is_new = st.name.empty();
    st.name = name;
    st.channel = channel;
    if (impl->first_stream.empty()) impl->first_stream = name;
    for (const auto& s : impl->sessions) {
      if (s->stream().empty()) s->set_stream(name);
      if (is_new) s->send_text(impl->hello_json());
    }
  });
  return channel;
}

void ViewServer::set_series(const std::string& stream, std::string text) {
  asio::post(impl_->io, [impl = impl_, stream, text = std::move(text)] {
    auto* st = impl->find_stream(stream);
    if (!st) return;
    const bool changed = st->series != text;
    st->series = text;
    if (!changed) return;  // browsers already have it
    st->latest = {};       // an image of the old series, which the new one may not fit
    for (const auto& s : impl->sessions)
      if (s->stream() == stream) s->send_text(text);
  });
}

void ViewServer::post_json(const std::string& stream, std::string text) {
  asio::post(impl_->io, [impl = impl_, stream, text = std::move(text)] {
    for (const auto& s : impl->sessions)
      if (s->stream() == stream) s->send_text(text);
  });
}

void ViewServer::set_recapture(std::function<std::string(size_t)> recapture) {
  asio::post(impl_->io, [impl = impl_, f = std::move(recapture)] { impl->recapture = f; });
}

void ViewServer::set_status_provider(std::function<std::string()> provider) {
  asio::post(impl_->io, [impl = impl_, f = std::move(provider)] { impl->status_provider = f; });
}

ViewStats ViewServer::stats() const noexcept {
  const auto& c = impl_->counters;
  return {c.browsers.load(),       c.images_sent.load(),   c.images_skipped.load(),
          c.images_thinned.load(), c.paint_reports.load(), c.accept_failures.load()};
}

}  // namespace eit::view
