// The seccomp sandbox (sandbox.hpp), entered for real in forked children (it cannot be left): launches
// on the fake driver go on, the system calls the launcher makes still reach the kernel, and
// sockets (AF_CAN, AF_INET, ...), opening files, exec, fork and reading are refused with EPERM or
// kill the process. The fake driver lives in this process, so its ioctls are function calls; the
// filter's ioctl rule is exercised with real ioctls on a real descriptor standing in for the device.
#include <doctest/doctest.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kgsl/blob_builder.hpp"
#include "kgsl/fake_kgsl.hpp"
#include "uopcg/runtime/kgsl.hpp"

using namespace uopcg::kgsl;
using testing::fake_kgsl;
using fdevice = basic_device<fake_kgsl>;
using fqueue = basic_queue<fake_kgsl>;
using fkernel = basic_kernel<fake_kgsl>;
using fgraph = basic_graph<fake_kgsl>;

namespace {

// Host model of the blob_builder's add kernel: out[i] = a[i] + b[i] for i < n.
void add_model(fake_kgsl& f, const testing::dispatch_info& d) {
  const auto* k = f.gpu_ptr<unsigned char>(d.kernargs, 4096);
  if (!k) return;
  std::uint64_t a, b, out;
  std::int32_t n;
  std::memcpy(&a, k + 0x140, 8);
  std::memcpy(&b, k + 0x150, 8);
  std::memcpy(&out, k + 0x160, 8);
  std::memcpy(&n, k + 0x170, 4);
  const float* pa = f.gpu_ptr<float>(a, std::uint64_t(n) * 4);
  const float* pb = f.gpu_ptr<float>(b, std::uint64_t(n) * 4);
  float* po = f.gpu_ptr<float>(out, std::uint64_t(n) * 4);
  if (!pa || !pb || !po) return;
  for (std::int32_t i = 0; i < n; ++i) po[i] = pa[i] + pb[i];
}

/// What a child reported (one "key value" line per check) and how it ended.
struct child_result {
  std::map<std::string, std::string> report;
  int status = 0;
  bool killed_by(int sig) const { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }
  bool exited_0() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

/// Runs `body(report_fd)` in a forked child and collects its report. The child never returns into
/// the test framework: it ends with _exit.
template <class F>
child_result in_child(F&& body) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    // The framework's crash handlers would try to report from inside the sandbox: a crash ends the
    // child as the kernel would, and a hang ends it after 60 s (the timer is armed before the filter).
    for (int sig : {SIGABRT, SIGSEGV, SIGILL, SIGFPE, SIGBUS, SIGTERM, SIGINT}) std::signal(sig, SIG_DFL);
    ::alarm(60);
    try {
      body(p[1]);
    } catch (const std::exception& e) {
      const std::string line = std::string("exception ") + e.what() + "\n";
      (void)!::write(p[1], line.data(), line.size());
      ::_exit(3);
    }
    ::_exit(0);
  }
  ::close(p[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  child_result r;
  REQUIRE(::waitpid(pid, &r.status, 0) == pid);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto sp = line.find(' ');
    r.report[line.substr(0, sp)] = sp == std::string::npos ? "" : line.substr(sp + 1);
  }
  return r;
}

void say(int fd, const std::string& key, const std::string& value) {
  const std::string line = key + " " + value + "\n";
  (void)!::write(fd, line.data(), line.size());
}
/// "ok" when the call succeeded, else the errno's name ("EPERM", ...).
std::string outcome(long r) {
  if (r >= 0) return "ok";
  const char* n = errno_name(errno);
  return n ? n : "errno " + std::to_string(errno);
}

}  // namespace

TEST_CASE("sandbox: launches go on, the launcher's syscalls pass, sockets, files, exec and fork get EPERM") {
  const auto blob = testing::build_blob(testing::add_kernel_spec());
  const child_result r = in_child([&](int out) {
    fake_kgsl fake;
    fake.kernel_model = add_model;
    const int node = ::open("/dev/null", O_RDWR | O_CLOEXEC);   // stands in for /dev/kgsl-3d0
    const int other = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
    int spare[2];
    if (::pipe(spare) != 0) ::_exit(4);
    {
      fdevice dev(fake);
      fqueue q(dev);
      fkernel k = q.load(blob, "E_add");
      auto a = dev.alloc(1024), b = dev.alloc(1024), c = dev.alloc(1024), spare_buf = dev.alloc(4096);
      for (int i = 0; i < 256; ++i) static_cast<float*>(a.data())[i] = float(i), static_cast<float*>(b.data())[i] = 1;
      fgraph g(q);
      g.launch(k, {graph_buffer(a), graph_buffer(b), graph_buffer(c), graph_var(0)}, {{256, 1, 1}, {64, 1, 1}});
      q.wait(g.replay({256}));  // builds the graph's GPU memory before the sandbox

      // Sanitizer builds check a virtual call's dynamic type by probing memory through a pipe the
      // first time they meet a type, which the filter refuses: meet the error path's types here.
      try {
        uopcg::fail_runtime(errno_text(ENOMEM));
      } catch (const uopcg::error& warm) {
        say(out, "warm", warm.what()[0] ? "yes" : "no");
      }
      sandbox_options o;
      o.device_fd = node;
      o.write_fds = {out};
      enter_sandbox(o);
      say(out, "entered", "yes");

      // Launching, waiting, replaying and freeing GPU memory go on.
      std::memset(c.data(), 0, 1024);
      q.wait(q.launch(k, {buffer_arg(a), buffer_arg(b), buffer_arg(c), scalar_arg<std::int32_t>(256)}, {{256, 1, 1}, {64, 1, 1}}));
      say(out, "launch", static_cast<const float*>(c.data())[200] == 201.0f ? "ok" : "wrong");
      std::memset(c.data(), 0, 1024);
      q.wait(g.replay({128}));
      say(out, "replay", static_cast<const float*>(c.data())[127] == 128.0f && static_cast<const float*>(c.data())[128] == 0.0f ? "ok" : "wrong");
      const std::size_t objects = fake.live_objects();
      { auto gone = std::move(spare_buf); }
      say(out, "free", fake.live_objects() == objects - 1 ? "ok" : "wrong");
      // Allocation needs the fake's memfd (a new descriptor): refused, and reported as such.
      std::string e;
      try {
        (void)dev.alloc(4096);
      } catch (const uopcg::error& err) {
        e = err.what();
      }
      say(out, "fake_alloc", e.find("ENOMEM") != std::string::npos ? "refused" : "?" + e);
    }
    say(out, "no_leaks", fake.problems().empty() ? "yes" : fake.problems());

    // Real system calls the launcher and the C++ runtime make.
    unsigned char arg[64] = {};
    say(out, "ioctl_kgsl_on_device", outcome(::ioctl(node, abi::IOCTL_KGSL_GPU_COMMAND, arg)));  // reaches the driver
    say(out, "ioctl_kgsl_waits", outcome(::ioctl(node, abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, arg)));
    int avail = 0;
    say(out, "ioctl_other_request", outcome(::ioctl(node, FIONREAD, &avail)));
    say(out, "ioctl_other_fd", outcome(::ioctl(spare[0], abi::IOCTL_KGSL_GPU_COMMAND, arg)));
    void* m = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    say(out, "mmap_anonymous", m != MAP_FAILED ? "ok" : outcome(-1));
    say(out, "mprotect_rw", outcome(::mprotect(m, 4096, PROT_READ)));
    say(out, "mprotect_exec", outcome(::mprotect(m, 4096, PROT_READ | PROT_EXEC)));
    say(out, "munmap", outcome(::munmap(m, 8192)));
    void* x = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    say(out, "mmap_exec", x == MAP_FAILED ? outcome(-1) : "ok");
    void* dm = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, node, 0);
    say(out, "mmap_device", dm == MAP_FAILED && errno == EPERM ? "EPERM" : "not refused");
    void* om = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, other, 0);
    say(out, "mmap_other_file", om == MAP_FAILED ? outcome(-1) : "ok");
    timespec ts{};
    say(out, "clock_gettime", outcome(::syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts)));
    int word = 0;
    say(out, "futex", outcome(::syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0)));
    say(out, "getpid", outcome(::getpid()));
    say(out, "write_other_fd", outcome(::write(spare[1], "x", 1)));
    say(out, "write_stdout", outcome(::write(STDOUT_FILENO, "", 0)));
    // Everything that could reach a network, a file, another program or another process.
    say(out, "socket_can", outcome(::socket(AF_CAN, SOCK_RAW, 1 /* CAN_RAW */)));
    say(out, "socket_can_dgram", outcome(::socket(AF_CAN, SOCK_DGRAM, 2 /* CAN_BCM */)));
    say(out, "socket_inet", outcome(::socket(AF_INET, SOCK_DGRAM, 0)));
    say(out, "socket_inet6", outcome(::socket(AF_INET6, SOCK_STREAM, 0)));
    say(out, "socket_unix", outcome(::socket(AF_UNIX, SOCK_STREAM, 0)));
    say(out, "socket_netlink", outcome(::socket(AF_NETLINK, SOCK_RAW, 0)));
    int sv[2];
    say(out, "socketpair", outcome(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv)));
    say(out, "open", outcome(::open("/etc/hostname", O_RDONLY)));
    say(out, "open_device_again", outcome(::open("/dev/null", O_RDWR)));
    say(out, "openat", outcome(::openat(AT_FDCWD, "/dev/zero", O_RDONLY)));
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    say(out, "execve", outcome(::execve("/bin/true", argv, nullptr)));
    say(out, "fork", outcome(::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)));
    char ch;
    say(out, "read", outcome(::read(spare[0], &ch, 1)));
    say(out, "dup", outcome(::dup(node)));
    say(out, "kill_other", outcome(::kill(1, 0)));
    say(out, "close", outcome(::close(other)));
  });
  INFO("child status " << r.status);
  CHECK(r.exited_0());
  const std::map<std::string, std::string> want{
      {"entered", "yes"}, {"launch", "ok"}, {"replay", "ok"}, {"free", "ok"}, {"fake_alloc", "refused"}, {"no_leaks", "yes"},
      {"ioctl_kgsl_on_device", "ENOTTY"}, {"ioctl_kgsl_waits", "ENOTTY"}, {"ioctl_other_request", "EPERM"},
      {"ioctl_other_fd", "EPERM"}, {"mmap_anonymous", "ok"}, {"mprotect_rw", "ok"}, {"mprotect_exec", "EPERM"},
      {"munmap", "ok"}, {"mmap_exec", "EPERM"}, {"mmap_device", "not refused"}, {"mmap_other_file", "EPERM"},
      {"clock_gettime", "ok"}, {"futex", "ok"}, {"getpid", "ok"}, {"write_other_fd", "EPERM"}, {"write_stdout", "EPERM"},
      {"socket_can", "EPERM"}, {"socket_can_dgram", "EPERM"}, {"socket_inet", "EPERM"}, {"socket_inet6", "EPERM"},
      {"socket_unix", "EPERM"}, {"socket_netlink", "EPERM"}, {"socketpair", "EPERM"}, {"open", "EPERM"},
      {"open_device_again", "EPERM"}, {"openat", "EPERM"}, {"execve", "EPERM"}, {"fork", "EPERM"}, {"read", "EPERM"},
      {"dup", "EPERM"}, {"kill_other", "EPERM"}, {"close", "ok"},
  };
  for (const auto& kv : want) {  // (clang 14 cannot capture structured bindings)
    const std::string& key = kv.first;
    CAPTURE(key);
    CHECK(r.report.count(key) == 1);
    if (r.report.count(key)) CHECK(r.report.at(key) == kv.second);
  }
  CHECK(r.report.count("exception") == 0);
}

TEST_CASE("sandbox: configured to kill, a refused call ends the process with SIGSYS after launches worked") {
  const auto blob = testing::build_blob(testing::add_kernel_spec());
  const std::pair<const char*, void (*)()> forbidden[] = {
      {"socket_can", [] { (void)::socket(AF_CAN, SOCK_RAW, 1); }},
      {"socket_inet", [] { (void)::socket(AF_INET, SOCK_STREAM, 0); }},
      {"open", [] { (void)::open("/etc/hostname", O_RDONLY); }},
      {"execve", [] {
         char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
         (void)::execve("/bin/true", argv, nullptr);
       }},
  };
  for (const auto& f : forbidden) {
    const char* name = f.first;
    void (*call)() = f.second;
    CAPTURE(name);
    const child_result r = in_child([&](int out) {
      fake_kgsl fake;
      fake.kernel_model = add_model;
      fdevice dev(fake);
      fqueue q(dev);
      fkernel k = q.load(blob, "E_add");
      auto a = dev.alloc(1024);
      sandbox_options o;
      o.refusal = sandbox_refusal::kill_process;
      o.write_fds = {out};
      enter_sandbox(o);
      q.wait(q.launch(k, {buffer_arg(a), buffer_arg(a), buffer_arg(a), scalar_arg<std::int32_t>(16)}, {{64, 1, 1}, {64, 1, 1}}));
      say(out, "launched", "yes");
      call();
      say(out, "survived", "yes");
    });
    CHECK(r.killed_by(SIGSYS));
    CHECK(r.report.count("launched") == 1);
    CHECK(r.report.count("survived") == 0);
  }
}

TEST_CASE("sandbox: the filter covers threads started before it") {
  const child_result r = in_child([&](int out) {
    std::atomic<int> phase{0};
    std::atomic<long> result{0};
    std::thread t([&] {
      phase = 1;  // running
      while (phase.load() == 1) std::this_thread::yield();
      result = ::socket(AF_CAN, SOCK_RAW, 1) < 0 ? errno : 0;
    });
    while (phase.load() == 0) std::this_thread::yield();
    sandbox_options o;
    o.write_fds = {out};
    enter_sandbox(o);
    phase = 2;
    t.join();
    say(out, "thread_socket", result.load() == EPERM ? "EPERM" : std::to_string(result.load()));
  });
  CHECK(r.exited_0());
  CHECK(r.report.at("thread_socket") == "EPERM");
}

TEST_CASE("sandbox: the filter's shape, and bad options") {
  sandbox_options o;
  o.device_fd = 7;
  const auto code = sandbox_filter(o);
  CHECK(code.size() < BPF_MAXINSNS);
  // Every jump lands inside the program and the last instruction returns.
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (BPF_CLASS(code[i].code) == BPF_JMP) {
      CHECK(i + 1 + code[i].jt < code.size());
      CHECK(i + 1 + code[i].jf < code.size());
    }
  }
  CHECK(BPF_CLASS(code.back().code) == BPF_RET);
  // Without a device descriptor, no ioctl is allowed at all: the filter is shorter by that rule.
  CHECK(sandbox_filter(sandbox_options{}).size() < code.size());
  const child_result r = in_child([&](int out) {
    sandbox_options bad;
    bad.write_fds = {out, -2};
    try {
      enter_sandbox(bad);
      say(out, "error", "none");
    } catch (const uopcg::error& e) {
      say(out, "error", e.what());
    }
    say(out, "socket_after", outcome(::socket(AF_INET, SOCK_DGRAM, 0)) == "EPERM" ? "refused" : "allowed");
  });
  CHECK(r.report.at("error") == "KGSL sandbox: write descriptor -2 is invalid");
  CHECK(r.report.at("socket_after") == "allowed");  // a refused configuration installs nothing
}
