// The system-call policy of the KGSL launcher and the ioctl error reporting.
//
// Every syscall the launcher makes goes through a policy object, so tests can swap the real driver
// for an in-process fake. A policy provides (all with libc conventions: -1 and errno on failure):
//   int   open(const char* path, int flags);
//   int   close(int fd);
//   int   ioctl(int fd, std::uint32_t request, void* arg);
//   void* mmap(void* addr, std::size_t len, int prot, int flags, int fd, std::int64_t offset);
//   int   munmap(void* addr, std::size_t len);
//   long  page_size();            // sysconf(_SC_PAGESIZE)
//   std::int64_t now_ns();        // monotonic clock, for wait deadlines
#pragma once

#if !defined(__linux__)
#error "uopcg/runtime/kgsl is Linux-only (it talks to the msm KGSL driver)"
#endif

#include <cerrno>
#include <concepts>
#include <cstdint>
#include <ctime>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../core/error.hpp"
#include "abi.hpp"

namespace uopcg::kgsl {

template <class S>
concept syscall_policy = requires(S& s, const char* path, int i, std::uint32_t req, void* p, std::size_t n,
                                  std::int64_t off) {
  { s.open(path, i) } -> std::same_as<int>;
  { s.close(i) } -> std::same_as<int>;
  { s.ioctl(i, req, p) } -> std::same_as<int>;
  { s.mmap(p, n, i, i, i, off) } -> std::same_as<void*>;
  { s.munmap(p, n) } -> std::same_as<int>;
  { s.page_size() } -> std::same_as<long>;
  { s.now_ns() } -> std::same_as<std::int64_t>;
};

/// The real thing: libc calls straight to the kernel.
struct real_sys {
  int open(const char* path, int flags) { return ::open(path, flags | O_CLOEXEC); }
  int close(int fd) { return ::close(fd); }
  int ioctl(int fd, std::uint32_t request, void* arg) {
    // glibc declares the request as unsigned long, bionic as int; both accept the 32-bit value.
    return ::ioctl(fd, request, arg);
  }
  void* mmap(void* addr, std::size_t len, int prot, int flags, int fd, std::int64_t offset) {
    return ::mmap(addr, len, prot, flags, fd, static_cast<off_t>(offset));
  }
  int munmap(void* addr, std::size_t len) { return ::munmap(addr, len); }
  long page_size() { return ::sysconf(_SC_PAGESIZE); }
  std::int64_t now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  /// The process-wide instance used when no policy object is given.
  static real_sys& instance() {
    static real_sys s;
    return s;
  }
};
static_assert(syscall_policy<real_sys>);

/// "ENOMEM" for ENOMEM, ... (the symbolic names users grep dmesg and headers for).
inline const char* errno_name(int e) {
  switch (e) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EINTR: return "EINTR";
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case ENODEV: return "ENODEV";
    case EINVAL: return "EINVAL";
    case ENFILE: return "ENFILE";
    case EMFILE: return "EMFILE";
    case ENOTTY: return "ENOTTY";
    case ENOSPC: return "ENOSPC";
    case ERANGE: return "ERANGE";
    case EDEADLK: return "EDEADLK";
    case ENOSYS: return "ENOSYS";
    case EPROTO: return "EPROTO";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ECANCELED: return "ECANCELED";
    default: return nullptr;
  }
}

/// "ENOMEM (Cannot allocate memory)"; unknown values read "errno 1234 (...)".
inline std::string errno_text(int e) {
  std::string s;
  if (const char* n = errno_name(e)) {
    s = n;
  } else {
    s = "errno " + std::to_string(e);
  }
  s += " (";
  s += std::generic_category().message(e);
  s += ')';
  return s;
}

namespace detail {

// What each failure means for the user, where the errno alone is cryptic (the driver's kgsl.c).
inline const char* errno_hint(std::uint32_t request, int e) {
  using namespace abi;
  if (e == EDEADLK) return "the context was invalidated by a GPU fault or hang; results are lost, recreate the queue";
  if (request == IOCTL_KGSL_GPU_COMMAND && e == EPROTO)
    return "the command was queued, but the context faulted earlier";
  if (request == IOCTL_KGSL_GPU_COMMAND && e == ETIMEDOUT) return "the context queue stayed full for 10 s; GPU hang?";
  if (request == IOCTL_KGSL_DRAWCTXT_CREATE && e == ENOSPC) return "too many contexts in this process";
  return nullptr;
}

[[noreturn]] inline void fail_ioctl(std::uint32_t request, int e, const std::string& detail = {}) {
  std::string msg = abi::ioctl_name(request);
  if (msg.empty()) msg = "ioctl";
  msg += " failed: ";
  msg += errno_text(e);
  if (!detail.empty()) msg += ": " + detail;
  if (const char* hint = errno_hint(request, e)) {
    msg += " -- ";
    msg += hint;
  }
  fail_runtime(std::move(msg));
}

/// One ioctl, retried on EINTR/EAGAIN (blocking calls can be interrupted). Returns 0 or the errno.
template <class Sys>
int ioctl_errno(Sys& sys, int fd, std::uint32_t request, void* arg) noexcept {
  for (;;) {
    if (sys.ioctl(fd, request, arg) == 0) return 0;
    const int e = errno;
    if (e != EINTR && e != EAGAIN) return e != 0 ? e : EIO;
  }
}

/// One ioctl that must succeed; on failure a uopcg::error names the ioctl and the errno.
template <class Sys>
void ioctl_or_fail(Sys& sys, int fd, std::uint32_t request, void* arg) {
  if (const int e = ioctl_errno(sys, fd, request, arg)) fail_ioctl(request, e);
}

}  // namespace detail
}  // namespace uopcg::kgsl
