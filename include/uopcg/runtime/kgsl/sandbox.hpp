// Least privilege for a process that only launches kernels: a seccomp-bpf filter (no libseccomp)
// entered once the KGSL device is open. From then on the process may make only the system calls the
// launcher and the C++ runtime need:
//   ioctl      the KGSL requests the launcher sends (abi.hpp), on the device's file descriptor only
//   mmap       without PROT_EXEC, anonymous or of the device (GPU objects); mprotect without
//              PROT_EXEC; munmap, mremap, madvise, brk (the allocator)
//   write      writev, to the file descriptors named in the options (stderr by default)
//   close, clock_gettime, futex, sched_yield, exit, exit_group, rt_sigreturn, rt_sigprocmask,
//   restart_syscall, getpid, gettid, tgkill of this process (so abort() still raises SIGABRT),
//   rseq, set_robust_list and sigaltstack (what threads register as they start and exit)
// Everything else is refused with EPERM or kills the process (sandbox_options::refusal): sockets
// of every family (AF_CAN included, so the process can never send on a CAN bus), opening files or
// device nodes, exec, fork and clone, reading, dup, io_uring, ptrace, bpf. The filter checks the
// architecture first (a 32-bit or x32 system call is refused), applies to every thread of the
// process and cannot be lifted (the kernel keeps it for the process and its children).
#pragma once

#if !defined(__linux__)
#error "uopcg/runtime/kgsl/sandbox.hpp is Linux-only (seccomp)"
#endif

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../core/error.hpp"
#include "abi.hpp"
#include "sys.hpp"

namespace uopcg::kgsl {

#if defined(__x86_64__)
inline constexpr std::uint32_t sandbox_audit_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr std::uint32_t sandbox_audit_arch = AUDIT_ARCH_AARCH64;
#else
#error "uopcg/runtime/kgsl/sandbox.hpp supports x86_64 and aarch64"
#endif

enum class sandbox_refusal : std::uint8_t {
  eperm,         // the refused call fails with EPERM; the process goes on
  kill_process,  // the kernel kills the whole process with SIGSYS
};

struct sandbox_options {
  int device_fd = -1;                 // the KGSL descriptor; ioctl and file mappings only on it (-1: no ioctl, no file mappings)
  sandbox_refusal refusal = sandbox_refusal::eperm;
  std::vector<int> write_fds{STDERR_FILENO};  // write/writev only to these (already open) descriptors
  bool all_threads = true;            // SECCOMP_FILTER_FLAG_TSYNC: every thread of the process, not only the caller
};

/// The ioctl requests the launcher sends once the device is open (device.hpp, queue.hpp).
inline constexpr std::uint32_t sandbox_ioctls[] = {
    abi::IOCTL_KGSL_DEVICE_GETPROPERTY,   abi::IOCTL_KGSL_SETPROPERTY,
    abi::IOCTL_KGSL_DRAWCTXT_CREATE,      abi::IOCTL_KGSL_DRAWCTXT_DESTROY,
    abi::IOCTL_KGSL_GPUOBJ_ALLOC,         abi::IOCTL_KGSL_GPUOBJ_FREE,
    abi::IOCTL_KGSL_GPUOBJ_INFO,          abi::IOCTL_KGSL_GPUOBJ_SYNC,
    abi::IOCTL_KGSL_GPU_COMMAND,          abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID,
    abi::IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID,
};

namespace detail {

/// Appends classic-BPF instructions. Tests are forward jumps over what follows: one return, or a
/// block whose length is measured when it is closed, so no jump offset is counted by hand.
class bpf_program {
 public:
  void load_nr() { ld(offsetof(seccomp_data, nr)); }
  void load_arch() { ld(offsetof(seccomp_data, arch)); }
  // The low 32 bits of argument i: the kernel reads the descriptors, protections, flags, pids and
  // ioctl requests compared here as 32-bit values (or tests bits of the low word).
  void load_arg(int i) {
    ld(static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * i + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4)));
  }
  /// if (A == k) return ret;
  void ret_if_eq(std::uint32_t k, std::uint32_t ret) {
    jump(BPF_JEQ, k, 0, 1);
    ret_(ret);
  }
  /// if (A & k) return ret;
  void ret_if_set(std::uint32_t k, std::uint32_t ret) {
    jump(BPF_JSET, k, 0, 1);
    ret_(ret);
  }
  /// if (A == k) { body } -- the body must end in a return (it may change A).
  template <class F>
  void if_eq(std::uint32_t k, F&& body) {
    const std::size_t at = code_.size();
    jump(BPF_JEQ, k, 0, 0);
    body();
    const std::size_t n = code_.size() - at - 1;
    if (n > 255) fail_runtime("KGSL sandbox: a filter block of " + std::to_string(n) + " instructions is too long to jump over");
    code_[at].jf = static_cast<std::uint8_t>(n);
  }
  void ret_(std::uint32_t v) { code_.push_back(BPF_STMT(BPF_RET | BPF_K, v)); }
  std::size_t size() const { return code_.size(); }
  std::vector<sock_filter>& code() { return code_; }

 private:
  void ld(std::uint32_t off) { code_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off)); }
  void jump(std::uint16_t op, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    code_.push_back(BPF_JUMP(static_cast<std::uint16_t>(BPF_JMP | op | BPF_K), k, jt, jf));
  }
  std::vector<sock_filter> code_;
};

}  // namespace detail

/// The filter enter_sandbox() installs, as classic-BPF instructions (for inspection and tests).
inline std::vector<sock_filter> sandbox_filter(const sandbox_options& o) {
  constexpr std::uint32_t allow = SECCOMP_RET_ALLOW;
  const std::uint32_t refuse = o.refusal == sandbox_refusal::kill_process ? SECCOMP_RET_KILL_PROCESS
                                                                           : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  detail::bpf_program p;
  // A call made through another ABI (i386 int 0x80, x32, AArch32) has other numbers: never allowed.
  p.load_arch();
  p.if_eq(sandbox_audit_arch, [&] {
    p.load_nr();
#if defined(__x86_64__)
    p.ret_if_set(0x40000000, refuse);  // __X32_SYSCALL_BIT
#endif

    // Calls allowed whatever their arguments.
    const long plain[] = {
      SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk, SYS_close, SYS_clock_gettime, SYS_futex, SYS_sched_yield,
      SYS_exit, SYS_exit_group, SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_restart_syscall, SYS_getpid, SYS_gettid,
      // A thread started just before the filter registers these as it starts (glibc aborts without
      // rseq); sanitizer runtimes take down a thread's signal stack as it exits.
      SYS_set_robust_list, SYS_sigaltstack,
#ifdef SYS_rseq
      SYS_rseq,
#endif
    };
    for (long nr : plain) p.ret_if_eq(static_cast<std::uint32_t>(nr), allow);

    // tgkill(own pid, ...): how abort() raises SIGABRT; signalling other processes stays refused.
    p.if_eq(SYS_tgkill, [&] {
      p.load_arg(0);
      p.ret_if_eq(static_cast<std::uint32_t>(::getpid()), allow);
      p.ret_(refuse);
    });

    // write / writev: only to the descriptors named.
    for (long nr : {long{SYS_write}, long{SYS_writev}}) {
      p.if_eq(static_cast<std::uint32_t>(nr), [&] {
        p.load_arg(0);
        for (int fd : o.write_fds) p.ret_if_eq(static_cast<std::uint32_t>(fd), allow);
        p.ret_(refuse);
      });
    }

    // mmap: never executable; anonymous, or a GPU object of the device.
    p.if_eq(SYS_mmap, [&] {
      p.load_arg(2);
      p.ret_if_set(PROT_EXEC, refuse);
      p.load_arg(3);
      p.ret_if_set(MAP_ANONYMOUS, allow);
      if (o.device_fd >= 0) {
        p.load_arg(4);
        p.ret_if_eq(static_cast<std::uint32_t>(o.device_fd), allow);
      }
      p.ret_(refuse);
    });

    // mprotect: never executable.
    p.if_eq(SYS_mprotect, [&] {
      p.load_arg(2);
      p.ret_if_set(PROT_EXEC, refuse);
      p.ret_(allow);
    });

    // ioctl: the launcher's KGSL requests on the device only (the kernel reads the request as a
    // 32-bit unsigned int).
    if (o.device_fd >= 0) {
      p.if_eq(SYS_ioctl, [&] {
        p.load_arg(0);
        p.if_eq(static_cast<std::uint32_t>(o.device_fd), [&] {
          p.load_arg(1);
          for (std::uint32_t r : sandbox_ioctls) p.ret_if_eq(r, allow);
          p.ret_(refuse);
        });
        p.ret_(refuse);
      });
    }
    p.ret_(refuse);
  });
  p.ret_(SECCOMP_RET_KILL_PROCESS);
  if (p.size() > BPF_MAXINSNS) fail_runtime("KGSL sandbox: the filter has too many instructions");
  return std::move(p.code());
}

/// Enters the sandbox: sets no_new_privs and installs sandbox_filter(o) for the whole process.
/// Irreversible. Open the device, create queues and allocate what the process needs first (GPU
/// objects can still be allocated and freed afterwards; files and sockets cannot be opened).
inline void enter_sandbox(const sandbox_options& o) {
  for (int fd : o.write_fds)
    if (fd < 0) fail_runtime("KGSL sandbox: write descriptor " + std::to_string(fd) + " is invalid");
  std::vector<sock_filter> code = sandbox_filter(o);
  sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    fail_runtime("KGSL sandbox: prctl(PR_SET_NO_NEW_PRIVS) failed: " + errno_text(errno));
  const unsigned long flags = o.all_threads ? SECCOMP_FILTER_FLAG_TSYNC : 0;
  const long r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (r != 0) {
    const int e = errno;
    if (r > 0)
      fail_runtime("KGSL sandbox: thread " + std::to_string(r) + " could not take the filter (it has its own seccomp filter)");
    fail_runtime("KGSL sandbox: seccomp(SECCOMP_SET_MODE_FILTER) failed: " + errno_text(e) +
                 (e == EINVAL ? " -- the kernel lacks seccomp filters or SECCOMP_RET_KILL_PROCESS (Linux >= 4.14)" : ""));
  }
}

/// Enters the sandbox with ioctl and file mappings allowed on `dev`'s descriptor.
template <class Device>
void enter_sandbox(const Device& dev, sandbox_options o = {}) {
  o.device_fd = dev.fd();
  enter_sandbox(o);
}

}  // namespace uopcg::kgsl
