// The receiver URI emulate prints (emulate_receiver.hpp).
#include "emulate_receiver.hpp"

#include <fmt/format.h>

#include "run_nats.hpp"

namespace eit::cli {

std::string emulate_receiver_uri(const std::string& link_uri, const std::string& format) {
  std::string uri = link_uri;
  const auto add = [&](std::string_view key, std::string_view value) {
    uri += fmt::format("{}{}={}", uri.find('?') == std::string::npos ? '?' : '&', key, value);
  };
  if (!is_nats_uri(link_uri)) add("format", format);
  return uri;
}

}  // namespace eit::cli
