#pragma once
// Runs the real eitstream binary for CLI tests: stdout and stderr captured through pipes, a
// signal can be sent, everything bounded in time.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace eit::test {

class Subprocess {
 public:
  explicit Subprocess(std::vector<std::string> args) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(out[0]);
      close(err[0]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Subprocess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      wait(std::chrono::seconds(10));
    }
    if (out_ >= 0) close(out_);
    if (err_ >= 0) close(err_);
  }
  void signal(int sig) { kill(pid_, sig); }

  // Reads stderr (stdout) until it contains `needle` or the time runs out; true when found.
  bool wait_for_stderr(const std::string& needle, std::chrono::seconds limit) {
    return wait_for(stderr_, needle, limit);
  }
  bool wait_for_stdout(const std::string& needle, std::chrono::seconds limit) {
    return wait_for(stdout_, needle, limit);
  }
  // Waits for exit (draining output); returns the exit code, or -1 on timeout / signal death.
  int wait(std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!exited_ && std::chrono::steady_clock::now() < end) {
      pump(20);
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
    }
    while (exited_ && pump(0)) {  // a child still running keeps its pipes open: no draining
    }
    return exited_ ? code_ : -1;
  }
  const std::string& out() const { return stdout_; }
  const std::string& err() const { return stderr_; }

 private:
  bool wait_for(const std::string& text, const std::string& needle, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (text.find(needle) == std::string::npos) {
      if (std::chrono::steady_clock::now() > end) return false;
      if (!pump(100)) return text.find(needle) != std::string::npos;
    }
    return true;
  }
  // Reads whatever is available within timeout_ms; false when both pipes are closed.
  bool pump(int timeout_ms) {
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (poll(fds, 2, timeout_ms) <= 0) return !(out_closed_ && err_closed_);
    char buf[4096];
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0)
        (i == 0 ? stdout_ : stderr_).append(buf, static_cast<size_t>(n));
      else
        (i == 0 ? out_closed_ : err_closed_) = true;
    }
    return !(out_closed_ && err_closed_);
  }
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool out_closed_ = false, err_closed_ = false, exited_ = false;
  int code_ = -1;
  std::string stdout_, stderr_;
};

}  // namespace eit::test
