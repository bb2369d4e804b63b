// NatsLink: connection set-up, reconnect accounting and stream creation (see nats_link.hpp).
#include "nats_link.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "eit/nats/server_wait.hpp"

namespace eit::nats {

void check(natsStatus s, const std::string& what) {
  if (s == NATS_OK) return;
  const char* detail = nats_GetLastError(nullptr);
  throw std::runtime_error(fmt::format("{}: {}{}{}", what, natsStatus_GetText(s),
                                       detail && *detail ? " — " : "", detail ? detail : ""));
}

natsStatus fetch_batch(natsMsgList* list, natsSubscription* sub, int batch, int64_t timeout_ms,
                       jsErrCode* err) {
  int queued = 0, queued_bytes = 0;
  if (natsSubscription_GetPending(sub, &queued, &queued_bytes) != NATS_OK) queued = 0;
  const int ask = queued > 0 ? queued + 4 * batch : batch;
  return natsSubscription_Fetch(list, sub, ask, timeout_ms, err);
}

NatsLink::NatsLink(const NatsAddress& address, NatsLinkOptions options)
    : address_(address), options_(options) {
  const std::string where = fmt::format("NATS {}", address_.server_url);
  check(natsOptions_Create(&opts_), where + ": options");
  check(natsOptions_SetURL(opts_, address_.server_url.c_str()), where + ": URL");
  check(natsOptions_SetName(opts_, options_.client_name.c_str()), where + ": name");
  check(natsOptions_SetMaxReconnect(opts_, -1), where + ": reconnect");
  check(natsOptions_SetReconnectWait(opts_, 250), where + ": reconnect wait");
  check(natsOptions_SetReconnectBufSize(opts_, options_.reconnect_buffer_bytes),
        where + ": reconnect buffer");
  check(natsOptions_SetTimeout(opts_, options_.connect_timeout_ms), where + ": timeout");
  check(natsOptions_SetDisconnectedCB(opts_, &NatsLink::on_disconnected, this), where);
  check(natsOptions_SetReconnectedCB(opts_, &NatsLink::on_reconnected, this), where);
  check(natsOptions_SetClosedCB(opts_, &NatsLink::on_closed, this), where);
  // With a connected callback libnats' connect returns at once and retries in the background;
  // the wait for the first connection is below, where it can be given up and reported.
  if (options_.wait_for_server)
    check(natsOptions_SetRetryOnFailedConnect(opts_, true, &NatsLink::on_connected, this), where);
  if (!address_.creds_file.empty())
    check(natsOptions_SetUserCredentialsFromFiles(opts_, address_.creds_file.c_str(), nullptr),
          fmt::format("{}: credentials {}", where, address_.creds_file));
  if (!address_.nkey.empty())
    check(
        natsOptions_SetNKeyFromSeed(opts_, address_.nkey.c_str(), address_.nkey_seed_file.c_str()),
        fmt::format("{}: nkey seed {}", where, address_.nkey_seed_file));
  if (address_.tls()) {
    check(natsOptions_SetSecure(opts_, true), where + ": TLS");
    if (!address_.tls_ca.empty())
      check(natsOptions_LoadCATrustedCertificates(opts_, address_.tls_ca.c_str()),
            fmt::format("{}: CA {}", where, address_.tls_ca));
    if (!address_.tls_cert.empty())
      check(natsOptions_LoadCertificatesChain(opts_, address_.tls_cert.c_str(),
                                              address_.tls_key.c_str()),
            fmt::format("{}: certificate {}", where, address_.tls_cert));
  }
  const natsStatus s = natsConnection_Connect(&nc_, opts_);
  // With retry-on-failed-connect, "not yet connected" is a success: libnats keeps trying.
  if (s != NATS_OK && !(options_.wait_for_server && s == NATS_NOT_YET_CONNECTED)) {
    natsOptions_Destroy(opts_);
    check(s, where + ": connect");
  }
  if (s == NATS_NOT_YET_CONNECTED) wait_connected(where);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = options_.max_pending_acks;
  jo.PublishAsync.StallWait = options_.stall_wait_ms;
  jo.PublishAsync.AckHandler = options_.ack_handler;
  jo.PublishAsync.AckHandlerClosure = options_.ack_closure;
  check(natsConnection_JetStream(&js_, nc_, &jo), where + ": JetStream context");
}

NatsLink::~NatsLink() { release(); }

void NatsLink::release() noexcept {
  if (js_) jsCtx_Destroy(js_);
  js_ = nullptr;
  if (nc_) {
    // libnats runs its connection callbacks on a thread of its own: wait for the last one
    // (closed) so none of them can touch this object after it is gone.
    closing_.store(true);
    natsConnection_Close(nc_);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!closed_.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    natsConnection_Destroy(nc_);
    nc_ = nullptr;
  }
  if (opts_) natsOptions_Destroy(opts_);
  opts_ = nullptr;
}

bool NatsLink::connected() const noexcept {
  return nc_ && natsConnection_Status(nc_) == NATS_CONN_STATUS_CONNECTED;
}

std::string NatsLink::last_error() const {
  std::lock_guard lock(error_mutex_);
  return last_error_;
}

void NatsLink::note_error(std::string message) {
  std::lock_guard lock(error_mutex_);
  last_error_ = std::move(message);
}

void NatsLink::on_closed(natsConnection*, void* self) {
  static_cast<NatsLink*>(self)->closed_.store(true);
}

void NatsLink::on_disconnected(natsConnection*, void* self) {
  auto* link = static_cast<NatsLink*>(self);
  if (link->closing_.load()) return;
  link->disconnects_.fetch_add(1, std::memory_order_relaxed);
  if (link->options_.on_disconnect) link->options_.on_disconnect(link->options_.disconnect_closure);
  link->note_error(fmt::format("disconnected from {}; reconnecting", link->address_.server_url));
}

void NatsLink::on_connected(natsConnection*, void* self) {
  static_cast<NatsLink*>(self)->connected_.store(true);
}

namespace {
ServerWait& process_server_wait() {
  static ServerWait wait;
  return wait;
}
}  // namespace

void set_default_server_wait(ServerWait wait) { process_server_wait() = std::move(wait); }
const ServerWait& default_server_wait() { return process_server_wait(); }

void NatsLink::wait_connected(const std::string& where) {
  using namespace std::chrono;
  const auto& give_up =
      options_.wait.give_up ? options_.wait.give_up : default_server_wait().give_up;
  const auto& report = options_.wait.report ? options_.wait.report : default_server_wait().report;
  const auto start = steady_clock::now();
  auto next_report = start + seconds(1);
  while (!connected_.load()) {
    if (give_up && give_up()) {
      release();  // the destructor does not run for a constructor that throws
      throw std::runtime_error(fmt::format("{}: gave up waiting for the server", where));
    }
    const auto now = steady_clock::now();
    if (report && now >= next_report) {
      report(fmt::format("{}: no server answers yet ({:.0f} s); retrying every 0.25 s", where,
                         duration<double>(now - start).count()));
      next_report = now + seconds(10);
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
}

void NatsLink::on_reconnected(natsConnection*, void* self) {
  auto* link = static_cast<NatsLink*>(self);
  link->reconnects_.fetch_add(1, std::memory_order_relaxed);
  link->note_error(fmt::format("reconnected to {}", link->address_.server_url));
}

namespace {

constexpr int64_t kStreamCreateWaitMs = 20'000;

void add_if_missing(jsCtx* js, const char* name, const char** subjects, int n_subjects,
                    const StreamLimits& limits) {
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = name;
  cfg.Subjects = subjects;
  cfg.SubjectsLen = n_subjects;
  cfg.MaxAge = limits.max_age_s * int64_t{1'000'000'000};
  cfg.MaxBytes = limits.max_bytes;
  cfg.Storage = js_FileStorage;
  cfg.Discard = js_DiscardOld;
  cfg.Replicas = limits.replicas;
  // A cluster that has just started, or lost a node, may take longer than libnats' default 5 s
  // to create a replicated stream while its nodes elect leaders (seen under CI's load).
  jsOptions api;
  jsOptions_Init(&api);
  api.Wait = kStreamCreateWaitMs;
  jsErrCode err = static_cast<jsErrCode>(0);
  jsStreamInfo* info = nullptr;
  natsStatus s = js_AddStream(&info, js, &cfg, &api, &err);
  // An existing stream keeps the limits its operator gave it.
  if (s != NATS_OK && err == JSStreamNameExistErr) s = NATS_OK;
  if (info) jsStreamInfo_Destroy(info);
  if (s != NATS_OK && err == JSStreamReplicasNotSupportedErr)
    throw std::runtime_error(fmt::format(
        "JetStream stream {}: {} replicas need a JetStream cluster, and this server runs alone: "
        "give --replicas 1, or a cluster's URL",
        name, limits.replicas));
  check(s, fmt::format("JetStream stream {} (JetStream error {})", name, static_cast<int>(err)));
}

}  // namespace

void NatsLink::ensure_streams(const StreamLimits& limits) {
  const char* images[] = {"eit.*.*.img", "eit.*.*.series", "eit.*.*.global", "eit.*.*.breath"};
  const char* raw[] = {"eit.*.*.raw"};
  add_if_missing(js_, kImageStream, images, 4, limits);
  add_if_missing(js_, kRawStream, raw, 1, limits);
}

}  // namespace eit::nats
