// Which query options each live URI scheme takes (see live_source.hpp). A misspelt option
// (idel=5, Idle=5) would otherwise be ignored and the run wait for the source timeout instead of
// saying what is wrong.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eit/acquisition/live_source.hpp"

namespace eit::acquisition {
namespace {

using Names = std::vector<std::string_view>;

Names source_options(std::string_view scheme) {
  Names names = {"format", "complex", "scale", "rate"};
  const auto add = [&](Names more) { names.insert(names.end(), more.begin(), more.end()); };
  if (scheme == "tcp" || scheme == "tcp-listen" || scheme == "tls-connect" ||
      scheme == "tls-listen")
    add({"idle", "keepalive"});
  if (scheme == "tcp" || scheme == "tls-connect") add({"connect_timeout"});
  if (scheme == "tls-connect") add({"ca", "cert", "key", "name", "crl"});
  if (scheme == "tls-listen") add({"cert", "key", "ca", "crl"});
  if (scheme == "serial") add({"baud", "bits", "parity", "stop", "flow"});
  if (scheme == "file") add({"loop"});
  return names;
}

Names device_link_options(std::string_view scheme) {
  if (scheme == "tls-connect") return {"ca", "cert", "key", "name", "crl"};
  if (scheme == "tls-listen") return {"cert", "key", "ca", "crl"};
  return {};
}

void check_options(const LiveUri& uri, const Names& known, std::string_view role) {
  for (const auto& [key, value] : uri.query) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (known.empty()) {
      throw std::invalid_argument(fmt::format(
          "{} '{}': option '{}' unknown; {}:// takes no options", role, uri.text, key, uri.scheme));
    }
    throw std::invalid_argument(fmt::format("{} '{}': option '{}' unknown; expected {}", role,
                                            uri.text, key, fmt::join(known, ", ")));
  }
}

}  // namespace

void check_live_source_options(const LiveUri& uri) {
  check_options(uri, source_options(uri.scheme), "source");
}

void check_device_link_options(const LiveUri& uri) {
  check_options(uri, device_link_options(uri.scheme), "device link");
}

}  // namespace eit::acquisition
