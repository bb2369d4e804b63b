#pragma once
// Runs `eitstream emulate …` (EITSTREAM_BIN) as a child process with its stdout on a pipe, so a
// test can read back the lines it prints ("endpoint: …", "receiver: …") and kill it mid-stream.
// The destructor kills and reaps the child, so a failing test never leaves one behind.
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace eit::test {

class EmulateProcess {
 public:
  explicit EmulateProcess(const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> argv_s = {EITSTREAM_BIN, "emulate"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~EmulateProcess() {
    kill(SIGKILL);
    wait();
    ::close(out_);
  }
  EmulateProcess(const EmulateProcess&) = delete;
  EmulateProcess& operator=(const EmulateProcess&) = delete;

  // The rest of the first line starting with `prefix` ("" when none came within the timeout
  // or the process closed its stdout first).
  std::string line_after(const std::string& prefix,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      size_t start = scanned_;
      for (size_t nl; (nl = output_.find('\n', start)) != std::string::npos; start = nl + 1) {
        const std::string line = output_.substr(start, nl - start);
        scanned_ = nl + 1;
        if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return {};
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
      char buf[4096];
      const ssize_t n = ::read(out_, buf, sizeof(buf));
      if (n <= 0) return {};
      output_.append(buf, static_cast<size_t>(n));
    }
  }

  void kill(int sig) {
    if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
  }
  // Exit status (or 128 + signal); waits for the child.
  int wait() {
    if (pid_ <= 0 || reaped_) return status_;
    int st = 0;
    ::waitpid(pid_, &st, 0);
    reaped_ = true;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return status_;
  }
  const std::string& output() const { return output_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool reaped_ = false;
  int status_ = -1;
  std::string output_;
  size_t scanned_ = 0;
};

}  // namespace eit::test
