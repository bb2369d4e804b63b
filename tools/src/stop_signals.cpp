// SIGINT/SIGTERM counted while a StopSignals lives (stop_signals.hpp).
#include "stop_signals.hpp"

#include <atomic>
#include <csignal>

namespace eit::cli {
namespace {

std::atomic<int> g_stop_signals{0};
std::atomic<int> g_last_stop_signal{0};
extern "C" void on_stop_signal(int sig) {
  g_last_stop_signal.store(sig);
  g_stop_signals.fetch_add(1);
}

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

int StopSignals::count() const noexcept { return stop_signals_received(); }

int stop_signals_received() noexcept { return g_stop_signals.load(); }
int last_stop_signal() noexcept { return g_last_stop_signal.load(); }

}  // namespace eit::cli
