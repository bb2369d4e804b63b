#include "eit/bench/subscriber_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "eit/bench/cpu_pinning.hpp"
#include "eit/bench/shm_image_receiver.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/pipeline/cpu_wake_hold.hpp"
#include "eit/sinks/shm_layout.hpp"
#include "eit/sinks/zmq_io_placement.hpp"

namespace eit::bench {
namespace {

constexpr std::string_view kMagic = "EITBSUB3";
constexpr int64_t kDrainQuietNs = 300'000'000;

bool write_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes before `deadline_ns`; false on EOF, error or timeout.
bool read_exact(int fd, void* data, size_t n, int64_t deadline_ns) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const int64_t left_ms = (deadline_ns - pipeline::now_ns()) / 1'000'000;
    if (left_ms <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    const int rc = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (rc < 0 && errno != EINTR) return false;
    if (rc <= 0) continue;
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The child's record on stdout (the format in subscriber_process.hpp).
bool write_record(const SubscriberCounts& c, int pin_error, const std::vector<ReceiveTime>& t) {
  const std::array<uint64_t, 8> head{c.images,
                                     c.overflow,
                                     c.malformed,
                                     c.series,
                                     c.series_end ? 1u : 0u,
                                     static_cast<uint64_t>(static_cast<int64_t>(pin_error)),
                                     t.size(),
                                     c.batches};
  return write_all(STDOUT_FILENO, kMagic.data(), kMagic.size()) &&
         write_all(STDOUT_FILENO, head.data(), sizeof head) &&
         write_all(STDOUT_FILENO, t.data(), t.size() * sizeof(ReceiveTime));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string current_executable() {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe to start the bench subscriber");
  return std::string(buf.data(), static_cast<size_t>(n));
}

SubscriberProcess::SubscriberProcess(const std::string& executable, const std::string& endpoint,
                                     size_t capacity, SubscriberMode mode, int ready_timeout_ms) {
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("bench subscriber: pipe: {}", std::strerror(errno)));
  const std::string cap = std::to_string(capacity);
  std::vector<std::string> args{
      executable, "bench", "--subscriber-only", endpoint, "--subscriber-capacity", cap};
  if (mode.pull) args.push_back("--subscriber-pull");
  if (mode.spin) args.push_back("--subscriber-spin");
  if (mode.cpu >= 0) {
    args.push_back("--subscriber-cpu");
    args.push_back(std::to_string(mode.cpu));
  }
  if (mode.io_cpu >= 0) {
    args.push_back("--subscriber-io-cpu");
    args.push_back(std::to_string(mode.io_cpu));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0)
    throw std::runtime_error(fmt::format("bench subscriber: fork: {}", std::strerror(errno)));
  if (pid_ == 0) {  // child: only async-signal-safe calls until exec
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  char ready[6] = {};
  if (!read_exact(from_child_, ready, sizeof ready,
                  pipeline::now_ns() + int64_t{ready_timeout_ms} * 1'000'000) ||
      std::string_view(ready, sizeof ready) != "ready\n") {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    close_fd(to_child_);
    close_fd(from_child_);
    throw std::runtime_error(fmt::format(
        "bench subscriber ({} bench --subscriber-only {}) did not report ready within {} ms",
        executable, endpoint, ready_timeout_ms));
  }
}

SubscriberProcess::~SubscriberProcess() {
  close_fd(to_child_);
  close_fd(from_child_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

SubscriberReport SubscriberProcess::finish(int timeout_ms) {
  close_fd(to_child_);  // EOF on the child's stdin: the run is over
  const int64_t deadline = pipeline::now_ns() + int64_t{timeout_ms} * 1'000'000;
  SubscriberReport report;
  char magic[8];
  std::array<uint64_t, 8> head{};
  bool ok = read_exact(from_child_, magic, sizeof magic, deadline) &&
            std::string_view(magic, 8) == kMagic &&
            read_exact(from_child_, head.data(), sizeof head, deadline);
  if (ok) {
    report.counts.images = head[0];
    report.counts.overflow = head[1];
    report.counts.malformed = head[2];
    report.counts.series = head[3];
    report.counts.series_end = head[4] != 0;
    report.counts.batches = head[7];
    report.pin_error = static_cast<int>(static_cast<int64_t>(head[5]));
    report.times.resize(head[6]);
    ok = read_exact(from_child_, report.times.data(), head[6] * sizeof(ReceiveTime), deadline);
  }
  close_fd(from_child_);
  int status = 0;
  if (!ok) ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (!ok)
    throw std::runtime_error(
        "bench subscriber: its record of receive times was missing or cut short");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("bench subscriber exited with status {}", status));
  return report;
}

int run_subscriber_child(const std::string& endpoint, size_t capacity, SubscriberMode mode) {
  static_assert(sizeof(ReceiveTime) == 16);
  ::signal(SIGPIPE, SIG_IGN);
  std::optional<pipeline::CpuWakeHold> wake_hold;
  if (mode.spin) wake_hold.emplace();
  if (sinks::is_shm_uri(endpoint)) {  // no other thread: pin at once
    const int pinned = mode.cpu >= 0 ? pin_this_thread(mode.cpu) : -1;
    SubscriberReport r;
    if (!receive_shm_images(endpoint, capacity, mode.spin, r)) return 2;
    return write_record(r.counts, pinned, r.times) ? 0 : 3;
  }
  zmq::context_t context(1);
  if (mode.io_cpu >= 0) sinks::place_io_threads(context, mode.io_cpu);
  ImageSubscriber sub(context, endpoint, capacity, mode.pull);
  // The socket has started the context's I/O thread with this thread's (unpinned) CPUs; pinning
  // now keeps that thread off the receiving CPU, where a spinning receiver would starve it.
  const int pinned = mode.cpu >= 0 ? pin_this_thread(mode.cpu) : -1;
  // Connecting is asynchronous: give the connection and the subscription time to reach the
  // publisher before the parent starts the source (the warm-up absorbs anything later).
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  if (!write_all(STDOUT_FILENO, "ready\n", 6)) return 2;
  bool parent_open = true;
  int64_t quiet_until = 0;
  uint32_t spins = 0;
  while (!sub.counts().series_end) {
    size_t got = 0;
    bool parent_said = false;
    if (mode.spin) {  // never sleeps: look at stdin only every 4096 rounds
      got = sub.drain();
      if (parent_open && (++spins & 4095u) == 0) {
        pollfd pfd{STDIN_FILENO, POLLIN, 0};
        parent_said = ::poll(&pfd, 1, 0) > 0;
      }
    } else {
      std::array<zmq::pollitem_t, 2> items{
          {{sub.socket().handle(), 0, ZMQ_POLLIN, 0}, {nullptr, STDIN_FILENO, ZMQ_POLLIN, 0}}};
      zmq::poll(items.data(), parent_open ? 2 : 1, std::chrono::milliseconds(50));
      got = (items[0].revents & ZMQ_POLLIN) ? sub.poll(0) : 0;
      parent_said = parent_open && (items[1].revents & (ZMQ_POLLIN | ZMQ_POLLERR));
    }
    if (parent_said) {
      char buf[64];
      if (::read(STDIN_FILENO, buf, sizeof buf) <= 0) {
        parent_open = false;
        quiet_until = pipeline::now_ns() + kDrainQuietNs;
      }
    }
    if (!parent_open) {
      if (got > 0) quiet_until = pipeline::now_ns() + kDrainQuietNs;
      if (pipeline::now_ns() > quiet_until) break;
    }
  }
  // Leave before writing the record: a PUSH publisher's lossless end waits for its consumers to
  // close, and the parent reads the record only after that end (the record can exceed a pipe).
  sub.close();
  return write_record(sub.counts(), pinned, sub.received()) ? 0 : 3;
}

}  // namespace eit::bench
