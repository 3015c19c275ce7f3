// CPU cost of a launch through the KGSL launcher, measured against the fake driver (no GPU needed).
//
// Batch mode is the path meant for repeated graphs (openpilot's model runs): the command buffer is
// built once; per frame one argument per launch is re-pointed (new input buffers) and the batch is
// submitted with one GPU_COMMAND. Single-launch mode builds the whole IB and kernarg block per
// launch. The fake driver decodes and validates every submitted PM4 stream, which a real driver
// does not; its share is measured separately and shown, and the launcher-only figure excludes it.
//
// Replay mode is capture and replay (graph.hpp): a sequence of 50 kernels captured once; per frame
// the input buffer of the first kernel is rebound and a variable every kernel reads changes, then
// the sequence is replayed with one GPU_COMMAND.
//
// Prints a table, then `ns_per_launch <N>`: CPU time per launch in batch mode, fake included;
// `single_us_per_kernel <X>` and `replay_us_per_kernel <X>`: the launcher's CPU time per kernel
// launched singly and in a replayed sequence of 50, without the fake driver's share (a real
// driver does not decode the stream; its ioctl is one per replay, amortised over the 50 kernels).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

#include "kgsl/blob_builder.hpp"
#include "kgsl/fake_kgsl.hpp"
#include "uopcg/runtime/kgsl.hpp"

namespace kg = uopcg::kgsl;
using kg::testing::fake_kgsl;

namespace {

std::int64_t cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Forwards to the fake and accounts the CPU time spent inside the driver's ioctls.
struct timed_sys {
  fake_kgsl* fake;
  std::int64_t driver_ns = 0;
  int open(const char* p, int f) { return fake->open(p, f); }
  int close(int fd) { return fake->close(fd); }
  int ioctl(int fd, std::uint32_t req, void* arg) {
    const std::int64_t t0 = cpu_ns();
    const int r = fake->ioctl(fd, req, arg);
    driver_ns += cpu_ns() - t0;
    return r;
  }
  void* mmap(void* a, std::size_t l, int p, int f, int fd, std::int64_t o) { return fake->mmap(a, l, p, f, fd, o); }
  int munmap(void* a, std::size_t l) { return fake->munmap(a, l); }
  long page_size() { return fake->page_size(); }
  std::int64_t now_ns() { return fake->now_ns(); }
};
static_assert(kg::syscall_policy<timed_sys>);

struct result {
  double total_ns, launcher_ns;
};

result run_batch(int launches, int frames) {
  fake_kgsl fake;
  fake.record_dispatches = false;
  timed_sys sys{&fake};
  kg::basic_device<timed_sys> dev(sys);
  kg::basic_queue<timed_sys> q(dev);
  const auto blob = kg::testing::build_blob(kg::testing::add_kernel_spec());
  kg::basic_kernel<timed_sys> k(dev, blob, "E_add");
  auto in0 = dev.alloc(1 << 16), in1 = dev.alloc(1 << 16), w = dev.alloc(1 << 16), out = dev.alloc(1 << 16);
  kg::basic_batch<timed_sys> batch(q);
  for (int i = 0; i < launches; ++i)
    batch.add(k, {kg::buffer_arg(in0), kg::buffer_arg(w), kg::buffer_arg(out), kg::scalar_arg(4096)},
              {{4096, 1, 1}, {128, 1, 1}});
  q.wait(batch.submit());  // build + warm up
  std::vector<std::uint64_t> inputs{in0.gpu_address(), in1.gpu_address()};
  sys.driver_ns = 0;
  const std::int64_t t0 = cpu_ns();
  for (int f = 0; f < frames; ++f) {
    const auto input = kg::buffer_arg(inputs[static_cast<std::size_t>(f) & 1]);
    for (int i = 0; i < launches; ++i) batch.set_arg(static_cast<std::size_t>(i), 0, input);
    batch.submit();
  }
  q.synchronize();
  const double total = static_cast<double>(cpu_ns() - t0);
  const double n = static_cast<double>(launches) * frames;
  return {total / n, (total - static_cast<double>(sys.driver_ns)) / n};
}

result run_single(int launches) {
  fake_kgsl fake;
  fake.record_dispatches = false;
  timed_sys sys{&fake};
  kg::basic_device<timed_sys> dev(sys);
  kg::basic_queue<timed_sys> q(dev);
  const auto blob = kg::testing::build_blob(kg::testing::add_kernel_spec());
  kg::basic_kernel<timed_sys> k(dev, blob, "E_add");
  auto in = dev.alloc(1 << 16), w = dev.alloc(1 << 16), out = dev.alloc(1 << 16);
  const kg::kernel_arg args[] = {kg::buffer_arg(in), kg::buffer_arg(w), kg::buffer_arg(out), kg::scalar_arg(4096)};
  q.wait(q.launch(k, args, {{4096, 1, 1}, {128, 1, 1}}));
  sys.driver_ns = 0;
  const std::int64_t t0 = cpu_ns();
  for (int i = 0; i < launches; ++i) q.launch(k, args, {{4096, 1, 1}, {128, 1, 1}});
  q.synchronize();
  const double total = static_cast<double>(cpu_ns() - t0);
  return {total / launches, (total - static_cast<double>(sys.driver_ns)) / launches};
}

result run_replay(int kernels, int frames) {
  fake_kgsl fake;
  fake.record_dispatches = false;
  timed_sys sys{&fake};
  kg::basic_device<timed_sys> dev(sys);
  kg::basic_queue<timed_sys> q(dev);
  const auto blob = kg::testing::build_blob(kg::testing::add_kernel_spec());
  kg::basic_kernel<timed_sys> k(dev, blob, "E_add");
  auto in0 = dev.alloc(1 << 16), in1 = dev.alloc(1 << 16), w = dev.alloc(1 << 16), a = dev.alloc(1 << 16), b = dev.alloc(1 << 16);
  kg::basic_graph<timed_sys> g(q);
  // A chain: a = in + w, b = a + w, a = b + w, ... each over n items, n a graph variable.
  g.launch(k, {kg::graph_buffer(in0), kg::graph_buffer(w), kg::graph_buffer(a), kg::graph_var(0)}, {{4096, 1, 1}, {128, 1, 1}});
  for (int i = 1; i < kernels; ++i) {
    auto& src = i % 2 ? a : b;
    auto& dst = i % 2 ? b : a;
    g.launch(k, {kg::graph_buffer(src), kg::graph_buffer(w), kg::graph_buffer(dst), kg::graph_var(0)}, {{4096, 1, 1}, {128, 1, 1}});
  }
  q.wait(g.replay({4096}));  // build + warm up
  const std::size_t input = g.buffer_index(in0);
  sys.driver_ns = 0;
  const std::int64_t t0 = cpu_ns();
  for (int f = 0; f < frames; ++f) {
    g.bind(input, f & 1 ? in1 : in0);
    g.replay({static_cast<std::uint64_t>(4096 - (f & 1))});
  }
  q.synchronize();
  const double total = static_cast<double>(cpu_ns() - t0);
  const double n = static_cast<double>(kernels) * frames;
  return {total / n, (total - static_cast<double>(sys.driver_ns)) / n};
}

template <class F>
result best_of(int reps, F&& f) {
  result best{1e30, 1e30};
  for (int r = 0; r < reps; ++r) {
    const result x = f();
    if (x.total_ns < best.total_ns) best = x;
  }
  return best;
}

}  // namespace

int main() {
  std::printf("KGSL launcher CPU overhead (fake driver, best of 5 runs, CPU time of this thread)\n");
  std::printf("%-34s %14s %22s\n", "mode", "ns/launch", "ns/launch w/o driver");
  double headline = 0;
  for (int launches : {1, 16, 64, 256}) {
    const int frames = std::max(20, 40000 / launches);
    const result r = best_of(5, [&] { return run_batch(launches, frames); });
    char name[64];
    std::snprintf(name, sizeof name, "batch of %d, 1 arg patched each", launches);
    std::printf("%-34s %14.0f %22.0f\n", name, r.total_ns, r.launcher_ns);
    if (launches == 64) headline = r.total_ns;
  }
  const result s = best_of(5, [] { return run_single(20000); });
  std::printf("%-34s %14.0f %22.0f\n", "single launches", s.total_ns, s.launcher_ns);
  const result g = best_of(5, [] { return run_replay(50, 800); });
  std::printf("%-34s %14.0f %22.0f\n", "replay of 50, input + var changed", g.total_ns, g.launcher_ns);
  std::printf("target: < 2000 ns per launch in batch mode (batch of 64), <= 0.3 us per kernel replayed\n");
  std::printf("ns_per_launch %.0f\n", headline);
  std::printf("single_us_per_kernel %.3f\n", s.launcher_ns / 1000);
  std::printf("replay_us_per_kernel %.3f\n", g.launcher_ns / 1000);
  return 0;
}
