#pragma once
// The page's files (view/web/*), compiled into the library by view/embed_assets.cmake at build
// time. Static, immutable, never freed: safe to read from any thread.
#include <span>
#include <string_view>

namespace eit::view {

struct WebAsset {
  std::string_view path;          // "/index.html"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view bytes;
};

std::span<const WebAsset> web_assets() noexcept;

// The asset served for a request target ("/" → "/index.html"; the query string is ignored);
// nullptr when there is none.
const WebAsset* find_web_asset(std::string_view target) noexcept;

}  // namespace eit::view
