#include "eit/view/web_assets.hpp"

namespace eit::view {

const WebAsset* find_web_asset(std::string_view target) noexcept {
  if (const auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  if (target == "/") target = "/index.html";
  for (const auto& a : web_assets())
    if (a.path == target) return &a;
  return nullptr;
}

}  // namespace eit::view
