// The names the command line and the stats use for the pipeline's options (pipeline.hpp), and
// their inverses.
#include <optional>
#include <string_view>

#include "eit/pipeline/pipeline.hpp"

namespace eit::pipeline {

std::string_view layout_name(StageLayout layout) noexcept {
  switch (layout) {
    case StageLayout::kAuto:
      return "auto";
    case StageLayout::kPipelined:
      return "pipelined";
    case StageLayout::kRunToCompletion:
      return "run-to-completion";
  }
  return "?";
}

std::string_view latency_mode_name(LatencyMode mode) noexcept {
  switch (mode) {
    case LatencyMode::kSpin:
      return "spin";
    case LatencyMode::kBalanced:
      return "balanced";
    case LatencyMode::kIdle:
      return "idle";
  }
  return "?";
}

std::optional<StageLayout> layout_from_name(std::string_view name) noexcept {
  for (StageLayout l : {StageLayout::kAuto, StageLayout::kPipelined, StageLayout::kRunToCompletion})
    if (layout_name(l) == name) return l;
  return std::nullopt;
}

std::optional<LatencyMode> latency_mode_from_name(std::string_view name) noexcept {
  for (LatencyMode m : {LatencyMode::kSpin, LatencyMode::kBalanced, LatencyMode::kIdle})
    if (latency_mode_name(m) == name) return m;
  return std::nullopt;
}

std::string_view wake_hold_name(WakeHold hold) noexcept {
  switch (hold) {
    case WakeHold::kAuto:
      return "auto";
    case WakeHold::kOn:
      return "on";
    case WakeHold::kOff:
      return "off";
  }
  return "?";
}

std::optional<WakeHold> wake_hold_from_name(std::string_view name) noexcept {
  for (WakeHold hold : {WakeHold::kAuto, WakeHold::kOn, WakeHold::kOff})
    if (wake_hold_name(hold) == name) return hold;
  return std::nullopt;
}

}  // namespace eit::pipeline
