/* LD_PRELOAD shim for tests: writes to a file whose path contains $EIT_FAIL_WRITES_PATH fail
 * with EIO once $EIT_FAIL_WRITES_AFTER bytes have gone to it, as a dying disk or a lost network
 * mount fails them. Lets a test reach a recorder's write-failure path, which no limit the
 * recorder checks beforehand (free space, ulimit -f) can reach any more. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static long long written_so_far = 0;

/* Whether writes to fd should fail now (after counting `count` more bytes). */
static int should_fail(int fd, size_t count) {
  const char* want = getenv("EIT_FAIL_WRITES_PATH");
  const char* after = getenv("EIT_FAIL_WRITES_AFTER");
  if (!want || !*want || !after) return 0;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  if (!strstr(path, want)) return 0;
  if (written_so_far + (long long)count > atoll(after)) return 1;
  written_so_far += (long long)count;
  return 0;
}

ssize_t write(int fd, const void* buf, size_t count) {
  static ssize_t (*real)(int, const void*, size_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  if (should_fail(fd, count)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  if (should_fail(fd, count)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
  if (should_fail(fd, count)) {
    errno = EIO;
    return -1;
  }
  return real(fd, buf, count, offset);
}
