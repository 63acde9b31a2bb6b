// Internal to the trace writer (writer.cpp, writer_chunks.cpp): a write's signals and errors.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string>
#include <system_error>

namespace rf::trace::detail {

inline std::string errno_text(int err) { return std::system_category().message(err); }

/// Blocks SIGXFSZ and SIGPIPE on the calling thread while it writes the trace. A write past
/// RLIMIT_FSIZE (`ulimit -f`, which Slurm passes on) raises SIGXFSZ on the writing thread, one to a
/// pipe whose reader left SIGPIPE; by default either kills the process. Blocked, the write fails
/// with EFBIG or EPIPE instead (a WriteError: rfprof says so and stops writing), and take_back()
/// consumes the signal it left pending, so the application never sees it. The application's own
/// dispositions are untouched. Two pthread_sigmask calls per batch of chunks.
class WriteSignalsBlocked {
 public:
  WriteSignalsBlocked() noexcept {
    sigset_t set;
    ::sigemptyset(&set);
    ::sigaddset(&set, SIGXFSZ);
    ::sigaddset(&set, SIGPIPE);
    blocked_ = ::pthread_sigmask(SIG_BLOCK, &set, &old_) == 0;
  }
  ~WriteSignalsBlocked() {
    if (blocked_) (void)::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  WriteSignalsBlocked(const WriteSignalsBlocked&) = delete;
  WriteSignalsBlocked& operator=(const WriteSignalsBlocked&) = delete;
  /// After a write failed with `err`: consumes the SIGXFSZ (EFBIG) or SIGPIPE (EPIPE) it raised,
  /// pending on this thread while blocked (sigtimedwait, zero timeout: never waits).
  void take_back(int err) const noexcept {
    const int sig = err == EFBIG ? SIGXFSZ : err == EPIPE ? SIGPIPE : 0;
    if (sig == 0 || !blocked_) return;
    sigset_t one;
    ::sigemptyset(&one);
    ::sigaddset(&one, sig);
    const struct timespec now {0, 0};
    while (::sigtimedwait(&one, nullptr, &now) < 0 && errno == EINTR) {
    }
  }

 private:
  sigset_t old_{};
  bool blocked_ = false;
};

/// Writes all of `iov` to `fd`, retrying on EINTR and short writes. Returns 0 or an errno.
inline int write_all(int fd, struct iovec* iov, int count) {
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    auto left = static_cast<size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return 0;
}

}  // namespace rf::trace::detail
