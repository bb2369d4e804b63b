#include "view_banner.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace eit::cli {

void print_view_banner(const view::ViewServer& server, const std::string& what) {
  const std::string url = server.url();
  fmt::print(stderr, "live view: {} (showing {})\n", url, what);
  const bool loopback = url.starts_with("http://127.") || url.starts_with("http://[::1]") ||
                        url.starts_with("http://localhost");
  if (!loopback)
    fmt::print(stderr,
               "live view: WARNING: not bound to loopback; anyone who can reach this address "
               "sees the images and can recapture the reference\n");
  std::fflush(stderr);
}

void print_view_report(const std::string& line) {
  fmt::print(stderr, "eitstream: {}\n", line);
  std::fflush(stderr);
}

}  // namespace eit::cli
