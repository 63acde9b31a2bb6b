// Kernel symbols demangled by the analyzer (rfprof/analyzer/rows.h: demangle). A trace is hostile
// input and both demanglers expand back-references without limit (a 283-byte symbol printed as
// 1.88 GB, in 7.6 s by __cxa_demangle, 4.6 s by LLVM's): a symbol that can expand is demangled
// in a child process that is killed past kDemangleDeadline or kMaxDemangledBytes of output.
#include <cxxabi.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>

#include "rfprof/analyzer/rows.h"
#ifdef RFPROF_HAVE_LLVM_DEMANGLE
#include <llvm/Demangle/Demangle.h>
#endif

namespace rf::analyzer {
namespace {

/// libstdc++'s demangler, then LLVM's (symbols up to kMaxLlvmDemangled bytes); nullopt when both
/// refuse. Unbounded time and memory for a symbol may_expand() accepts.
std::optional<std::string> demangle_here(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                             std::free);
  if (status == 0 && out) return std::string(out.get());
#ifdef RFPROF_HAVE_LLVM_DEMANGLE
  // LLVM's demangler recurses without a depth limit: 100,000 nested "P" overflow an 8 MiB stack
  // (seen with LLVM 14). Only names up to kMaxLlvmDemangled bytes (about 90 bytes of stack per
  // level: < 1 MiB) go to it; real kernel symbols are shorter.
  if (symbol.size() <= kMaxLlvmDemangled) {
    status = 0;
    out.reset(llvm::itaniumDemangle(symbol.c_str(), nullptr, nullptr, &status));
    if (status == 0 && out) return std::string(out.get());
  }
#endif
  return std::nullopt;
}

/// Whether `symbol` holds what a demangler expands: a substitution (S_, S<seq>_, St.. excluded),
/// a template parameter (T_, T<n>_), a pack expansion (Dp) or a pack size (sZ, sP). Without any,
/// the printed name is at most a small multiple of the symbol. May say yes for a symbol that only
/// contains such letters inside an identifier: it is then demangled in a child, no less right.
bool may_expand(std::string_view s) {
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    const char c = s[i];
    if (c == 'S' || c == 'T') {
      size_t j = i + 1;
      while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || (c == 'S' && s[j] >= 'A' && s[j] <= 'Z'))) ++j;
      if (j < s.size() && s[j] == '_') return true;
    }
    if ((c == 'D' && s[i + 1] == 'p') || (c == 's' && (s[i + 1] == 'Z' || s[i + 1] == 'P'))) return true;
  }
  return false;
}

constexpr auto kDemangleDeadline = std::chrono::milliseconds(500);
constexpr size_t kMaxDemangledBytes = size_t{256} << 10;

/// demangle_here() in a child process (fork; the analyzer is single-threaded, and the child only
/// demangles, writes and _exits): its answer, or nullopt when it refused, took longer than
/// kDemangleDeadline, printed more than kMaxDemangledBytes, or the child could not be made.
std::optional<std::string> demangle_in_child(const std::string& symbol) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {  // the child: no return, no exit handlers
    ::close(fds[0]);
    const std::optional<std::string> d = demangle_here(symbol);
    if (d && d->size() <= kMaxDemangledBytes) {
      size_t done = 0;
      while (done < d->size()) {
        const ssize_t n = ::write(fds[1], d->data() + done, d->size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) ::_exit(1);
        done += static_cast<size_t>(n);
      }
    }
    ::_exit(d ? 0 : 1);
  }
  ::close(fds[1]);
  std::string out;
  bool complete = false;
  const auto deadline = std::chrono::steady_clock::now() + kDemangleDeadline;
  char buf[8192];
  while (out.size() <= kMaxDemangledBytes) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      complete = n == 0;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (!complete) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::string demangle(const std::string& mangled) {
  // Only symbols: __cxa_demangle also reads type encodings ("f" -> "float"), and a kernel named
  // "f" (extern "C") is "f".
  if (!mangled.starts_with("_Z")) return mangled;
  const std::optional<std::string> d = may_expand(mangled) ? demangle_in_child(mangled) : demangle_here(mangled);
  return d ? *d : mangled;
}

bool demangle_refused(std::string_view demangled, std::string_view mangled) {
  return mangled.starts_with("_Z") && (demangled.empty() || demangled == mangled);
}

bool has_llvm_demangler() {
#ifdef RFPROF_HAVE_LLVM_DEMANGLE
  return true;
#else
  return false;
#endif
}

}  // namespace rf::analyzer
