// What view and listen check of a bed's URI before reading it (nats_reader_uri.hpp).
#if EIT_HAVE_NATS  // (without libnats neither command reads NATS)
#include "nats_reader_uri.hpp"

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "command_registry.hpp"

namespace eit::cli {

std::string since_of(const std::string& uri) {
  const auto q = uri.find('?');
  if (q == std::string::npos) return {};
  for (size_t at = q + 1; at < uri.size();) {
    const size_t amp = std::min(uri.find('&', at), uri.size());
    const std::string item = uri.substr(at, amp - at);
    if (item.starts_with("since=")) return item.substr(6);
    at = amp + 1;
  }
  return {};
}

std::string with_since(const std::string& uri, std::string_view since) {
  const auto q = uri.find('?');
  if (q == std::string::npos) return fmt::format("{}?since={}", uri, since);
  std::string out = uri.substr(0, q + 1);
  for (size_t at = q + 1; at < uri.size();) {
    const size_t amp = std::min(uri.find('&', at), uri.size());
    const std::string item = uri.substr(at, amp - at);
    if (!item.starts_with("since=")) out += item + "&";
    at = amp + 1;
  }
  return fmt::format("{}since={}", out, since);
}

nats::NatsAddress checked_nats_reader_address(std::string_view command, const std::string& uri) {
  nats::NatsAddress a;
  try {
    a = nats::parse_nats_subscriber_address(uri);  // since= included (nats::parse_since)
  } catch (const std::invalid_argument& e) {
    throw CommandError(fmt::format("{}: {}", command, e.what()));
  }
  for (auto [option, file] : {std::pair{"creds", &a.creds_file},
                              {"seed", &a.nkey_seed_file},
                              {"tls-ca", &a.tls_ca},
                              {"tls-cert", &a.tls_cert},
                              {"tls-key", &a.tls_key}})
    if (!file->empty() && !std::filesystem::is_regular_file(*file))
      throw CommandError(fmt::format("{}: '{}': {}={}: no such file (expected a readable file)",
                                     command, uri, option, *file));
  return a;
}

}  // namespace eit::cli
#endif  // EIT_HAVE_NATS
