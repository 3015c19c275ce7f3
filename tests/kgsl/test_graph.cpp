// Capture and replay (graph.hpp) against the fake driver: results through a host kernel model, one
// GPU_COMMAND per replay, patching of rebound buffers, variables and launch sizes, reallocated and
// freed buffers, destroyed kernels, refused input, and fault injection at every syscall.
#include <doctest/doctest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kgsl/blob_builder.hpp"
#include "kgsl/fake_kgsl.hpp"
#include "uopcg/runtime/kgsl.hpp"

using namespace uopcg::kgsl;
using testing::fake_kgsl;
using fdevice = basic_device<fake_kgsl>;
using fqueue = basic_queue<fake_kgsl>;
using fkernel = basic_kernel<fake_kgsl>;
using fgraph = basic_graph<fake_kgsl>;
using fbuffer = basic_buffer<fake_kgsl>;

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const uopcg::error& e) {
    return e.what();
  }
  return "";
}

// Host model of the blob_builder's add kernel: out[i] = a[i] + b[i] for i < n, args at c20..c23.
void add_model(fake_kgsl& f, const testing::dispatch_info& d) {
  const auto* k = f.gpu_ptr<unsigned char>(d.kernargs, 4096);
  if (!k) return;
  std::uint64_t a, b, out;
  std::int32_t n;
  std::memcpy(&a, k + 0x140, 8);
  std::memcpy(&b, k + 0x150, 8);
  std::memcpy(&out, k + 0x160, 8);
  std::memcpy(&n, k + 0x170, 4);
  const auto items = std::min<std::uint64_t>(static_cast<std::uint64_t>(n), std::uint64_t{d.global[0]} * d.global[1] * d.global[2]);
  const float* pa = f.gpu_ptr<float>(a, items * 4);
  const float* pb = f.gpu_ptr<float>(b, items * 4);
  float* po = f.gpu_ptr<float>(out, items * 4);
  if (!pa || !pb || !po) return;
  for (std::uint64_t i = 0; i < items; ++i) po[i] = pa[i] + pb[i];
}

fbuffer filled(fdevice& dev, int n, float start) {
  fbuffer b = dev.alloc(static_cast<std::uint64_t>(n) * 4);
  auto* p = static_cast<float*>(b.data());
  for (int i = 0; i < n; ++i) p[i] = start + static_cast<float>(i);
  return b;
}
const float* floats(const fbuffer& b) { return static_cast<const float*>(b.data()); }

struct rig {
  fake_kgsl fake;
  std::vector<std::byte> blob = testing::build_blob(testing::add_kernel_spec());
  rig() { fake.kernel_model = add_model; }
};
}  // namespace

TEST_CASE("graph: a captured sequence replays with one submission and the results of its launches") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k = q.load(r.blob, "E_add");
    auto x = filled(dev, 256, 1), y = filled(dev, 256, 100), t = dev.alloc(1024), out = dev.alloc(1024);
    fgraph g(q);
    // t = x + y; out = t + x; both over n items, n a graph variable.
    CHECK(g.launch(k, {graph_buffer(x), graph_buffer(y), graph_buffer(t), graph_var(0)}, {{256, 1, 1}, {64, 1, 1}}) == 0u);
    CHECK(g.launch(k, {graph_buffer(t), graph_buffer(x), graph_buffer(out), graph_var(0)}, {{256, 1, 1}, {64, 1, 1}}) == 1u);
    CHECK(g.buffer_count() == 4u);
    CHECK(g.var_count() == 1u);
    CHECK(g.buffer_index(t) == 2u);
    const std::size_t submits = r.fake.submissions();
    q.wait(g.replay({256}));
    CHECK(r.fake.submissions() == submits + 1);
    REQUIRE(r.fake.dispatches.size() == 2);
    CHECK(floats(out)[0] == (1.0f + 100.0f) + 1.0f);
    CHECK(floats(out)[255] == (256.0f + 355.0f) + 256.0f);
    // The IB: one wait, two dispatch bodies, one signal; both dispatches read the queue's signal chain.
    CHECK(!g.commands().empty());
    CHECK(r.fake.dispatches[0].global[0] == 256u);
    CHECK(r.fake.dispatches[1].kernargs - r.fake.dispatches[0].kernargs == 2048u);

    // A second replay with nothing changed: only the timeline dwords move.
    const std::vector<std::uint32_t> before(g.commands().begin(), g.commands().end());
    std::memset(out.data(), 0, 1024);
    q.wait(g.replay({256}));
    CHECK(r.fake.submissions() == submits + 2);
    CHECK(floats(out)[7] == (8.0f + 107.0f) + 8.0f);
    std::size_t changed = 0;
    for (std::size_t i = 0; i < before.size(); ++i) changed += before[i] != g.commands()[i];
    CHECK(changed == 2u);  // the wait reference and the signal value
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("graph: rebinding a buffer, a variable and a launch size patches only those") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k = q.load(r.blob, "E_add");
    auto a = filled(dev, 512, 1), a2 = filled(dev, 512, 1000), b = filled(dev, 512, 10);
    auto o1 = dev.alloc(2048), o2 = dev.alloc(2048);
    fgraph g(q);
    g.launch(k, {graph_buffer(a), graph_buffer(b), graph_buffer(o1), graph_var(0)}, {{512, 1, 1}, {64, 1, 1}});
    g.launch(k, {graph_buffer(b), graph_buffer(b), graph_buffer(o2), graph_scalar<std::int32_t>(512)}, {{512, 1, 1}, {64, 1, 1}});
    q.wait(g.replay({512}));
    CHECK(floats(o1)[3] == 4.0f + 13.0f);

    const auto dims_before = std::vector<std::uint32_t>(g.commands().begin(), g.commands().end());
    g.bind(g.buffer_index(a), a2);  // a new input
    g.set_dims(1, {{128, 1, 1}, {32, 1, 1}});
    std::memset(o1.data(), 0, 2048);
    std::memset(o2.data(), 0, 2048);
    r.fake.dispatches.clear();
    q.wait(g.replay({100}));
    REQUIRE(r.fake.dispatches.size() == 2);
    CHECK(floats(o1)[3] == 1003.0f + 13.0f);   // the new input
    CHECK(floats(o1)[99] == 1099.0f + 109.0f);
    CHECK(floats(o1)[100] == 0.0f);            // n = 100 now
    CHECK(floats(o2)[127] == 2.0f * 137.0f);   // launch 1: 128 items now
    CHECK(floats(o2)[128] == 0.0f);
    CHECK(r.fake.dispatches[1].global[0] == 128u);
    CHECK(r.fake.dispatches[1].local[0] == 32u);
    CHECK(r.fake.dispatches[0].global[0] == 512u);
    // Besides the timeline, only launch 1's NDRANGE burst changed in the IB (the kernel arguments
    // live in their own buffer).
    std::size_t changed = 0;
    for (std::size_t i = 0; i < dims_before.size(); ++i) changed += dims_before[i] != g.commands()[i];
    CHECK(changed == 2u + 3u);  // + NDRANGE_0 (local size), GLOBALSIZE_X and KERNEL_GROUP_X of launch 1
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("graph: replay after a buffer was reallocated is a named error until the new buffer is bound") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k = q.load(r.blob, "E_add");
    auto a = filled(dev, 64, 1), b = filled(dev, 64, 2), out = dev.alloc(256);
    fgraph g(q);
    g.launch(k, {graph_buffer(a), graph_buffer(b), graph_buffer(out), graph_scalar<std::int32_t>(64)}, {{64, 1, 1}, {64, 1, 1}});
    q.wait(g.replay());
    const std::size_t ib = g.buffer_index(out);
    out = dev.alloc(512);  // the old buffer is freed, a new one takes the name
    const std::size_t submits = r.fake.submissions();
    const std::string e = error_of([&] { g.replay(); });
    CHECK(e.find("KGSL graph: buffer 2 (0x") == 0);
    CHECK(e.find("4096 bytes), argument 2 of launch 0 ('E_add'), was freed; bind() a live buffer") != std::string::npos);
    CHECK(r.fake.submissions() == submits);  // nothing submitted
    CHECK(error_of([&] { (void)g.buffer_index(out); }).find("is not bound in this graph") != std::string::npos);
    // The device and queue stay usable.
    auto c = dev.alloc(256);
    q.wait(q.launch(k, {buffer_arg(a), buffer_arg(b), buffer_arg(c), scalar_arg<std::int32_t>(64)}, {{64, 1, 1}, {64, 1, 1}}));
    CHECK(floats(c)[5] == 6.0f + 7.0f);
    // Binding the new buffer makes the graph whole again.
    g.bind(ib, out);
    q.wait(g.replay());
    CHECK(floats(out)[63] == 64.0f + 65.0f);
    CHECK(g.buffer_index(out) == ib);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("graph: a destroyed kernel, a moved-from buffer and wrong input are refused without side effects") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    std::optional<fkernel> k(std::in_place, dev, r.blob, "E_add");
    auto a = filled(dev, 64, 1), out = dev.alloc(256), small = dev.alloc(64);
    const auto add = [&](fgraph& g, dims3 global, dims3 local) {
      return g.launch(*k, {graph_buffer(a), graph_buffer(a), graph_buffer(out), graph_var(0)}, {global, local});
    };
    fgraph g(q);
    CHECK(error_of([&] { g.replay({}); }) == "KGSL graph: nothing captured");
    // Capture errors leave the graph as it was.
    CHECK(error_of([&] { g.launch(*k, {graph_buffer(a)}, {{64, 1, 1}, {64, 1, 1}}); }) ==
          "KGSL graph: launch 0 of kernel 'E_add' takes 4 arguments, 1 given");
    CHECK(error_of([&] {
            g.launch(*k, {graph_buffer(a), graph_image(a, 4, 4), graph_buffer(out), graph_var(0)}, {{64, 1, 1}, {64, 1, 1}});
          }) == "KGSL graph: launch 0 ('E_add') argument 1 is an image but the parameter is not");
    CHECK(error_of([&] { g.launch(*k, {graph_buffer(a, 8192), graph_buffer(a), graph_buffer(out), graph_var(0)}, {{64, 1, 1}, {64, 1, 1}}); }) ==
          "KGSL graph: launch 0 ('E_add') argument 0 needs 8192 bytes of a 4096-byte buffer");
    fbuffer moved = std::move(small);
    CHECK(error_of([&] { g.launch(*k, {graph_buffer(small), graph_buffer(a), graph_buffer(out), graph_var(0)}, {{64, 1, 1}, {64, 1, 1}}); }) ==
          "KGSL graph: launch 0 ('E_add') argument 0: the buffer is empty or freed");
    CHECK(error_of([&] { add(g, {64, 1, 1}, {2048, 1, 1}); }).find("local size 2048") != std::string::npos);
    CHECK(g.size() == 0u);
    fgraph g2(q);
    CHECK(error_of([&] { g2.launch(*k, {graph_buffer(moved), graph_buffer(a), graph_buffer(out), graph_var(0)}, {{64, 1, 1}, {64, 1, 1}}); }) == "");
    CHECK(g2.buffer_count() == 3u);

    add(g, {64, 1, 1}, {64, 1, 1});
    CHECK(g.buffer_count() == 2u);
    CHECK(error_of([&] { g.replay(); }) == "KGSL graph: replay with 0 variable values; the graph reads 1");
    q.wait(g.replay({64}));
    CHECK(error_of([&] { add(g, {64, 1, 1}, {64, 1, 1}); }) == "KGSL graph: cannot capture launches after the first replay");
    CHECK(error_of([&] { g.bind(7, out); }) == "KGSL graph: no buffer 7 (the graph has 2)");
    CHECK(error_of([&] { g.bind(0, small); }) == "KGSL graph: bind of buffer 0 to an empty buffer");
    CHECK(error_of([&] { g.set_dims(3, {{64, 1, 1}, {64, 1, 1}}); }) == "KGSL graph: no launch 3 (the graph has 1)");
    // A refused size keeps the old one.
    CHECK(error_of([&] { g.set_dims(0, {{64, 1, 1}, {64, 64, 1}}); }).find("too many resources") != std::string::npos);
    r.fake.dispatches.clear();
    q.wait(g.replay({64}));
    CHECK(r.fake.dispatches.at(0).local[1] == 1u);
    // A destroyed kernel.
    k.reset();
    const std::size_t submits = r.fake.submissions();
    CHECK(error_of([&] { g.replay({64}); }) ==
          "KGSL graph: the kernel 'E_add' of launch 0 was destroyed; kernels must outlive the graphs that captured them");
    CHECK(r.fake.submissions() == submits);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("graph: images and their buffers are rebound with their descriptors") {
  fake_kgsl fake;
  testing::blob_spec s;
  s.name = "r_img";
  s.args = {{0, 2}, {0, 1}, {0x50, 0}};
  s.samplers = 1;
  const auto blob = testing::build_blob(s);
  {
    fdevice dev(fake);
    fqueue q(dev);
    fkernel k = q.load(blob, "r_img");
    // 64 x 16 RGBA float texels: 16 KiB, more than the page a small allocation rounds to.
    auto img = dev.alloc(16384), tex = dev.alloc(16384), tex2 = dev.alloc(16384), buf = dev.alloc(256);
    fgraph g(q);
    g.launch(k, {graph_image(img, 64, 16), graph_image(tex, 64, 16), graph_buffer(buf)}, {{16, 4, 1}, {16, 4, 1}});
    q.wait(g.replay());
    REQUIRE(fake.dispatches.size() == 1);
    const auto* d = fake.gpu_ptr<std::uint32_t>(fake.dispatches[0].kernargs + 2048, 128);
    CHECK((d[4] | std::uint64_t{d[5]} << 32) == img.gpu_address());
    CHECK((d[16 + 4] | std::uint64_t{d[16 + 5]} << 32) == tex.gpu_address());
    g.bind(g.buffer_index(tex), tex2);
    q.wait(g.replay());
    CHECK((d[16 + 4] | std::uint64_t{d[16 + 5]} << 32) == tex2.gpu_address());
    CHECK(d[16 + 1] == (64u | 16u << 15));  // the rest of the descriptor is rewritten unchanged
    auto too_small = dev.alloc(64);
    CHECK(error_of([&] { g.bind(0, too_small); }) ==
          "KGSL graph: launch 0 ('r_img') argument 0 needs 16384 bytes of buffer 0; the buffer bound has 4096");
  }
  CHECK(fake.problems() == "");
}

TEST_CASE("graph: the queue's private stack growing between replays is followed") {
  rig r;
  testing::blob_spec pvt = testing::add_kernel_spec();
  pvt.pvtmem = 2048;
  const auto pvt_blob = testing::build_blob(pvt);
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k = q.load(r.blob, "E_add"), kp = q.load(pvt_blob, "E_add");
    auto a = filled(dev, 64, 1), out = dev.alloc(256);
    fgraph g(q);
    g.launch(k, {graph_buffer(a), graph_buffer(a), graph_buffer(out), graph_scalar(64)}, {{64, 1, 1}, {64, 1, 1}});
    q.wait(g.replay());
    const std::uint64_t stack0 = r.fake.dispatches.back().stack;
    q.wait(q.launch(kp, {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}}));
    const std::uint64_t stack1 = r.fake.dispatches.back().stack;
    CHECK(stack1 != stack0);
    q.wait(g.replay());
    CHECK(r.fake.dispatches.back().stack == stack1);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("graph: replays queue behind each other; a GPU hang loses the queue, not the process") {
  rig r;
  r.fake.deferred = true;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k = q.load(r.blob, "E_add");
    auto a = filled(dev, 64, 1), out = dev.alloc(256);
    fgraph g(q);
    g.launch(k, {graph_buffer(a), graph_buffer(a), graph_buffer(out), graph_var(0)}, {{64, 1, 1}, {64, 1, 1}});
    const submission s1 = g.replay({64});
    CHECK(r.fake.pending() == 1u);
    const submission s2 = g.replay({32});  // patching waits for the first replay
    CHECK(q.done(s1));
    q.wait(s2);
    CHECK(floats(out)[31] == 64.0f);
    r.fake.hang_next_submit();
    const submission s3 = g.replay({16});
    CHECK(error_of([&] { q.wait(s3); }).find("EDEADLK") != std::string::npos);
    CHECK(q.lost());
    CHECK(error_of([&] { g.replay({16}); }).find("is lost") != std::string::npos);
    // A new queue and graph work on the same device.
    fqueue q2(dev);
    fgraph g2(q2);
    g2.launch(k, {graph_buffer(a), graph_buffer(a), graph_buffer(out), graph_var(0)}, {{64, 1, 1}, {64, 1, 1}});
    q2.wait(g2.replay({8}));
    CHECK(floats(out)[7] == 16.0f);
  }
  CHECK(r.fake.problems() == "");
}

namespace {
// Bring-up, capture, replay, reallocation + rebind, replay with a new variable and size, teardown.
void scenario(fake_kgsl& fake, const std::vector<std::byte>& blob) {
  fdevice dev(fake);
  queue_options o;
  o.timeout = std::chrono::milliseconds(100);
  fqueue q(dev, o);
  fkernel k = q.load(blob, "E_add");
  auto a = dev.alloc(4096), out = dev.alloc(4096);
  fgraph g(q);
  g.launch(k, {graph_buffer(a), graph_buffer(a), graph_buffer(out), graph_var(0)}, {{64, 1, 1}, {64, 1, 1}});
  g.launch(k, {graph_buffer(out), graph_buffer(a), graph_buffer(out), graph_scalar(64)}, {{128, 1, 1}, {64, 1, 1}});
  q.wait(g.replay({64}));
  out = dev.alloc(8192);
  g.bind(1, out);
  g.set_dims(0, {{256, 1, 1}, {64, 1, 1}});
  q.wait(g.replay({32}));
  q.synchronize();
}
void sweep(bool deferred, std::initializer_list<int> errnos) {
  const auto blob = testing::build_blob(testing::add_kernel_spec());
  long total = 0;
  {
    fake_kgsl fake;
    fake.deferred = deferred;
    scenario(fake, blob);
    REQUIRE(fake.problems() == "");
    total = fake.calls();
  }
  REQUIRE(total > 20);
  int errors = 0;
  for (long n = 0; n < total; ++n) {
    for (int e : errnos) {
      CAPTURE(n);
      CAPTURE(e);
      fake_kgsl fake;
      fake.deferred = deferred;
      fake.fail_call(n, e);
      std::string msg;
      try {
        scenario(fake, blob);
      } catch (const uopcg::error& err) {
        msg = err.what();
      }
      CAPTURE(msg);
      CAPTURE(fake.last_injected);
      REQUIRE(!fake.last_injected.empty());
      if (!msg.empty()) {
        ++errors;
        const bool names_call = msg.find(fake.last_injected) != std::string::npos ||
                                (fake.last_injected == "open" && msg.find("cannot open") == 0) ||
                                msg.find("IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID") != std::string::npos ||
                                msg.find("KGSL wait") == 0 || msg.find("is lost") != std::string::npos;
        CHECK(names_call);
      }
      CHECK(fake.problems() == "");
    }
  }
  CHECK(errors > 0);
}
}  // namespace

TEST_CASE("graph: every syscall of capture and replay can fail: a named error, never a leak") {
  sweep(false, {ENOMEM, EINVAL, EPROTO, EDEADLK});
  sweep(true, {ENOMEM, EINVAL, ETIMEDOUT});
}
