#pragma once
// Ctrl-C and SIGTERM as requests to stop, for the commands that end cleanly and report (`run`,
// `emulate`): while a StopSignals lives, SIGINT and SIGTERM only count, and the command looks at
// count() in its loop (a first signal: stop and report; `run` takes a second as "give up
// waiting"). The handlers are installed without SA_RESTART, so a call blocked in the kernel
// returns EINTR and its caller can look too. Destruction restores the default actions. One at a
// time per process, made and destroyed on the main thread; count() may be read from any thread.
namespace eit::cli {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // SIGINT and SIGTERM received since construction.
  int count() const noexcept;
};

}  // namespace eit::cli
