// SIGINT/SIGTERM counted while a StopSignals lives (stop_signals.hpp).
#include "stop_signals.hpp"

#include <atomic>
#include <csignal>

namespace eit::cli {
namespace {

std::atomic<int> g_stop_signals{0};
extern "C" void on_stop_signal(int) { g_stop_signals.fetch_add(1); }

}  // namespace

StopSignals::StopSignals() {
  g_stop_signals = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

StopSignals::~StopSignals() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

int StopSignals::count() const noexcept { return g_stop_signals.load(); }

}  // namespace eit::cli
