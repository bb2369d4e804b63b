// An ordered JetStream consumer on one bed's images (see nats_image_reader.hpp).
#include "eit/nats/nats_image_reader.hpp"

#include <charconv>

#include <fmt/format.h>

#include "eit/nats/nats_address.hpp"
#include "nats_link.hpp"

namespace eit::nats {

struct NatsImageReader::Impl {
  std::unique_ptr<NatsLink> link;
  natsSubscription* sub = nullptr;
  std::string filter;
  ~Impl() {
    if (sub) natsSubscription_Destroy(sub);
  }
};

namespace {

std::string_view option(std::string_view uri, std::string_view key) {
  const auto q = uri.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view rest = uri.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view item = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    if (item.size() > key.size() && item.starts_with(key) && item[key.size()] == '=')
      return item.substr(key.size() + 1);
  }
  return {};
}

}  // namespace

NatsImageReader::NatsImageReader(std::string_view uri) : impl_(std::make_unique<Impl>()) {
  const NatsAddress address = parse_nats_address(uri);
  NatsLinkOptions lo;
  lo.client_name = fmt::format("eitstream listen {}.{}", address.site, address.bed);
  lo.wait_for_server = false;
  impl_->link = std::make_unique<NatsLink>(address, lo);
  impl_->filter = fmt::format("eit.{}.{}.img", address.site, address.bed);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = kImageStream;
  so.Ordered = true;
  const std::string_view since = option(uri, "since");
  if (since.empty() || since == "new") {
    so.Config.DeliverPolicy = js_DeliverNew;
  } else if (since == "all") {
    so.Config.DeliverPolicy = js_DeliverAll;
  } else {
    double seconds = 0;
    const auto [end, ec] = std::from_chars(since.data(), since.data() + since.size(), seconds);
    if (ec != std::errc{} || end != since.data() + since.size() || seconds <= 0)
      throw std::invalid_argument(
          fmt::format("'{}': since={} is not 'new', 'all' or seconds since the epoch", uri, since));
    so.Config.DeliverPolicy = js_DeliverByStartTime;
    so.Config.OptStartTime = static_cast<int64_t>(seconds * 1e9);
  }
  jsErrCode err = static_cast<jsErrCode>(0);
  check(js_SubscribeSync(&impl_->sub, impl_->link->jetstream(), impl_->filter.c_str(), nullptr, &so,
                         &err),
        fmt::format("NATS {}: ordered consumer on {} in {} (JetStream error {})",
                    address.server_url, impl_->filter, kImageStream, static_cast<int>(err)));
}

NatsImageReader::~NatsImageReader() = default;

const std::string& NatsImageReader::subject_filter() const noexcept { return impl_->filter; }

bool NatsImageReader::next(ImageStreamMessage& out, int timeout_ms) {
  natsMsg* msg = nullptr;
  if (natsSubscription_NextMsg(&msg, impl_->sub, timeout_ms) != NATS_OK) return false;
  const std::string_view subject = natsMsg_GetSubject(msg);
  out.kind = std::string(subject.substr(subject.rfind('.') + 1));
  out.data.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  natsMsg_Destroy(msg);
  return true;
}

}  // namespace eit::nats
