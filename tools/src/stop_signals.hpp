#pragma once
// Ctrl-C and SIGTERM as requests to stop, for every long-running command that ends cleanly and
// reports (`run`, `emulate`, `listen`, `view`, `worker`): while a StopSignals lives, SIGINT and
// SIGTERM only count, and the command looks at count() in its loop. The same rule everywhere: a
// first signal stops and leads to the summary (exit status as at a normal end); where finishing
// the stop waits on something (`run`: the consumer; `emulate`: the receiver; `worker`: its beds'
// last batch), a second signal gives that wait up at once (as does a first signal that comes
// while a stop for another reason waits: the end, --duration, a failed source). Every command
// keeps it alive through its summary (`run`: and the closing of its recordings), so no signal
// cuts that short. The handlers are installed without SA_RESTART, so a call blocked in the kernel
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

// The same count, for set-up code that waits (a NATS connect) without the StopSignals object;
// and the number of the last of those signals (0: none).
int stop_signals_received() noexcept;
int last_stop_signal() noexcept;

}  // namespace eit::cli
