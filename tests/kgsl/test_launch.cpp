// Launching through the queue and batches against the fake driver: results via a host kernel
// model, ordering and waits, timeline re-base, ring reuse, deferred frees, error recovery.
#include <doctest/doctest.h>

#include <cstring>
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
using fbatch = basic_batch<fake_kgsl>;
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

struct rig {
  fake_kgsl fake;
  std::vector<std::byte> blob = testing::build_blob(testing::add_kernel_spec());
  rig() { fake.kernel_model = add_model; }
};

fbuffer filled(fdevice& dev, int n, float start) {
  fbuffer b = dev.alloc(static_cast<std::uint64_t>(n) * 4);
  auto* p = static_cast<float*>(b.data());
  for (int i = 0; i < n; ++i) p[i] = start + static_cast<float>(i);
  return b;
}
}  // namespace

TEST_CASE("launch: a vector add runs, with the sizes and addresses the stream describes") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k = q.load(r.blob, "E_add");
    auto a = filled(dev, 1000, 1), b = filled(dev, 1000, 100), out = dev.alloc(4000);
    const submission s = q.launch(k, {buffer_arg(a), buffer_arg(b), buffer_arg(out), scalar_arg<std::int32_t>(1000)},
                                  {{1000, 1, 1}, {64, 1, 1}});
    CHECK(s.value == 1u);
    CHECK(s.timestamp == 1u);
    q.wait(s);
    CHECK(q.done(s));
    const float* o = static_cast<const float*>(out.data());
    CHECK(o[0] == 101.0f);
    CHECK(o[999] == 1000.0f + 1099.0f);
    REQUIRE(r.fake.dispatches.size() == 1);
    const auto& d = r.fake.dispatches[0];
    CHECK(d.kick == pm4::CP_RUN_OPENCL);
    CHECK(d.local[0] == 64u);
    CHECK(d.global[0] == 1000u);
    CHECK(d.groups[0] == 16u);
    CHECK(d.shader == k.shader().gpu_address());
    CHECK(d.shader_units == 3u);
    CHECK(d.const_config == 0x140u);
    CHECK(d.context == q.context().id());
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("launch: private memory and a shader over 8 KiB reach the fake GPU as the reference encodes them") {
  for (auto enc : {register_encoding::freedreno, register_encoding::tinygrad}) {
    fake_kgsl fake;
    fake.kernel_model = add_model;
    testing::blob_spec bs = testing::add_kernel_spec();
    bs.name = "E_add";
    bs.pvtmem = 600;
    bs.code.assign(9000, 0xC3);
    const auto blob = testing::build_blob(bs);
    {
      fdevice dev(fake);
      queue_options o;
      o.dispatch.encoding = enc;
      fqueue q(dev, o);
      fkernel k = q.load(blob, "E_add");
      CHECK(k.layout().preload_units == 64u);
      auto a = filled(dev, 256, 1), b = filled(dev, 256, 2), out = dev.alloc(1024);
      q.wait(q.launch(k, {buffer_arg(a), buffer_arg(b), buffer_arg(out), scalar_arg<std::int32_t>(256)},
                      {{256, 1, 1}, {64, 1, 1}}));
      CHECK(static_cast<const float*>(out.data())[255] == 256.0f + 257.0f);
      REQUIRE(fake.dispatches.size() == 1);
      const auto& d = fake.dispatches[0];
      CHECK(d.pvt_per_fiber == 1024u);    // round_up(600, 512)
      CHECK(d.pvt_per_sp == 2048u * 1024);  // 2048 fibers each
      CHECK(d.pvt_size == 512u);
      CHECK(d.shader_units == 64u);       // the instruction cache
      CHECK(d.instr_size == 71u);         // ceil(9000 / 128)
    }
    CHECK(fake.problems() == "");
  }
}

TEST_CASE("launch: an uncapped preload of a shader over 8 KiB is what the fake GPU refuses") {
  fake_kgsl fake;
  testing::blob_spec bs = testing::add_kernel_spec();
  bs.name = "E_add";
  bs.code.assign(9000, 0xC3);
  const auto blob = testing::build_blob(bs);
  {
    fdevice dev(fake);
    queue_options o;
    o.dispatch.cap_preload = false;
    fqueue q(dev, o);
    fkernel k = q.load(blob, "E_add");
    auto a = dev.alloc(256);
    q.wait(q.launch(k, {buffer_arg(a), buffer_arg(a), buffer_arg(a), scalar_arg<std::int32_t>(0)}, {{64, 1, 1}, {64, 1, 1}}));
  }
  REQUIRE(fake.dispatches.size() == 1);
  CHECK(fake.dispatches[0].shader_units == 71u);
  CHECK(fake.problems() == "violation: shader preload of 71 units exceeds the 64-unit instruction cache\n");
}

TEST_CASE("launch: a chip the table does not know cannot load kernels, even past the open-time gate") {
  rig r;
  r.fake.chip_id = 0x06040001;  // A640: 8192 fibers per SP, not in the table
  {
    device_options o;
    o.check_chip = false;
    fdevice dev(r.fake, o);
    CHECK(error_of([&] { fkernel k(dev, r.blob, "E_add"); }).find("A640 (chip id 0x06040001) is not supported") !=
          std::string::npos);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("launch: many launches wrap the ring; CP_EXEC_CS kick works the same") {
  for (auto kick : {kick_packet::run_opencl, kick_packet::exec_cs}) {
    rig r;
    {
      fdevice dev(r.fake);
      queue_options o;
      o.ring_bytes = 64 * 1024;  // ~13 launches per lap
      o.dispatch.kick = kick;
      fqueue q(dev, o);
      fkernel k(dev, r.blob);
      auto a = filled(dev, 256, 0), b = filled(dev, 256, 1), out = dev.alloc(1024);
      submission last;
      for (int i = 0; i < 100; ++i)
        last = q.launch(k, {buffer_arg(a), buffer_arg(b), buffer_arg(out), scalar_arg(256)}, {{256, 1, 1}, {32, 1, 1}});
      q.synchronize();
      CHECK(last.value == 100u);
      CHECK(q.signal_value() == 100u);
      CHECK(static_cast<const float*>(out.data())[255] == 511.0f);
      CHECK(r.fake.dispatches.back().kick == (kick == kick_packet::exec_cs ? pm4::CP_EXEC_CS : pm4::CP_RUN_OPENCL));
    }
    CHECK(r.fake.problems() == "");
  }
}

TEST_CASE("launch: with a deferred GPU, ring reuse and max_in_flight wait for retirement") {
  rig r;
  r.fake.deferred = true;
  {
    fdevice dev(r.fake);
    queue_options o;
    o.ring_bytes = 64 * 1024;
    o.max_in_flight = 8;
    fqueue q(dev, o);
    fkernel k(dev, r.blob);
    auto a = filled(dev, 64, 0), b = filled(dev, 64, 0), out = dev.alloc(256);
    std::size_t most = 0;
    for (int i = 0; i < 60; ++i) {
      q.launch(k, {buffer_arg(a), buffer_arg(b), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}});
      most = std::max(most, r.fake.pending());
    }
    CHECK(most <= 8);
    CHECK(r.fake.pending() > 0);  // still in flight: nothing waited more than needed
    q.synchronize();
    CHECK(r.fake.pending() == 0);
    CHECK(r.fake.dispatches.size() == 60);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("wait: already done means no ioctl; EINTR is retried; timeouts re-read the signal") {
  rig r;
  r.fake.deferred = true;
  {
    fdevice dev(r.fake);
    queue_options o;
    o.timeout = std::chrono::milliseconds(50);
    fqueue q(dev, o);
    fkernel k(dev, r.blob);
    auto a = filled(dev, 64, 0), out = dev.alloc(256);
    const kernel_arg args[] = {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)};
    const launch_dims dims{{64, 1, 1}, {64, 1, 1}};

    auto s1 = q.launch(k, args, dims);
    r.fake.fail_ioctl(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, EINTR, 3);
    q.wait(s1);
    CHECK(r.fake.ioctl_count(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID) == 4);
    q.wait(s1);  // already reached: the signal is read, the driver is not asked
    CHECK(r.fake.ioctl_count(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID) == 4);

    r.fake.stuck = true;
    auto s2 = q.launch(k, args, dims);
    const std::string msg = error_of([&] { q.wait(s2); });
    CHECK(msg.find("IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID failed: ETIMEDOUT") == 0);
    CHECK(msg.find("timeline value 2") != std::string::npos);
    CHECK(msg.find("within 50 ms") != std::string::npos);
    CHECK(!q.lost());

    r.fake.complete_on_timeout = true;  // the work lands exactly as the deadline passes
    q.wait(s2);
    CHECK(q.done(s2));
    r.fake.stuck = false;
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("faults: a GPU hang turns into EDEADLK, the queue is lost, nothing leaks") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k(dev, r.blob);
    auto a = filled(dev, 64, 0), out = dev.alloc(256);
    const kernel_arg args[] = {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)};
    q.launch(k, args, {{64, 1, 1}, {64, 1, 1}});
    r.fake.hang_next_submit();
    auto s = q.launch(k, args, {{64, 1, 1}, {64, 1, 1}});
    const std::string msg = error_of([&] { q.wait(s); });
    CHECK(msg.find("IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID failed: EDEADLK") == 0);
    CHECK(msg.find("recreate the queue") != std::string::npos);
    CHECK(q.lost());
    CHECK(q.context().reset_status() == abi::KGSL_CTX_STAT_GUILTY_CONTEXT_RESET_EXT);
    CHECK(q.context().reset_status() == abi::KGSL_CTX_STAT_NO_ERROR);  // reported once
    CHECK(error_of([&] { q.launch(k, args, {{64, 1, 1}, {64, 1, 1}}); }).find("is lost") != std::string::npos);
    // A new queue on the same device works.
    fqueue q2(dev);
    q2.wait(q2.launch(k, args, {{64, 1, 1}, {64, 1, 1}}));
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("faults: EPROTO keeps the queued timestamp; a refused submit rolls back") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k(dev, r.blob);
    auto a = filled(dev, 64, 0), out = dev.alloc(256);
    const kernel_arg args[] = {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)};
    r.fake.eproto_next_submit();
    const std::string msg = error_of([&] { q.launch(k, args, {{64, 1, 1}, {64, 1, 1}}); });
    CHECK(msg.find("IOCTL_KGSL_GPU_COMMAND failed: EPROTO") == 0);
    CHECK(msg.find("timestamp 1 queued") != std::string::npos);
    CHECK(q.timeline_value() == 1u);
    CHECK(!q.lost());
    r.fake.fail_ioctl(abi::IOCTL_KGSL_GPU_COMMAND, EINVAL);
    CHECK(error_of([&] { q.launch(k, args, {{64, 1, 1}, {64, 1, 1}}); }).find("IOCTL_KGSL_GPU_COMMAND failed: EINVAL") == 0);
    CHECK(q.timeline_value() == 1u);  // not advanced: the next IB waits for value 1, not 2
    auto s = q.launch(k, args, {{64, 1, 1}, {64, 1, 1}});
    CHECK(s.value == 2u);
    CHECK(s.timestamp == 2u);
    q.wait(s);
    // Argument mistakes are caught before anything is submitted.
    const auto before = r.fake.submissions();
    CHECK(error_of([&] { q.launch(k, std::span(args, 3), {{64, 1, 1}, {64, 1, 1}}); }).find("takes 4 arguments") != std::string::npos);
    CHECK(r.fake.submissions() == before);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("timeline: re-based before it can wrap; timestamps compare wrap-aware") {
  CHECK(timestamp_reached(5, 0xFFFFFFF0u));
  CHECK(!timestamp_reached(0xFFFFFFF0u, 5));
  CHECK(timestamp_reached(7, 7));
  rig r;
  {
    fdevice dev(r.fake);
    queue_options o;
    o.rebase_at = 5;
    fqueue q(dev, o);
    fkernel k(dev, r.blob);
    auto a = filled(dev, 64, 0), out = dev.alloc(256);
    submission first{}, s{};
    for (int i = 0; i < 13; ++i) {
      s = q.launch(k, {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}});
      if (i == 0) first = s;
    }
    CHECK(s.epoch == 3u);
    CHECK(s.value == 1u);
    CHECK(s.timestamp == 13u);
    CHECK(q.done(first));  // an older epoch is complete by construction
    q.wait(s);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("memory: freeing a buffer that in-flight work uses defers the free to its timestamp") {
  rig r;
  r.fake.deferred = true;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k(dev, r.blob);
    auto out = dev.alloc(256);
    submission s;
    std::size_t objects = 0;
    {
      auto a = filled(dev, 64, 3);
      s = q.launch(k, {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}});
      objects = r.fake.live_objects();
    }  // a is released here, while the launch is still queued
    CHECK(r.fake.live_objects() == objects);  // kept alive until the timestamp retires
    CHECK(r.fake.live_mappings() < objects);
    q.wait(s);
    CHECK(r.fake.live_objects() == objects - 1);
    CHECK(static_cast<const float*>(out.data())[2] == 10.0f);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("batch: built once, patched in place, one GPU_COMMAND per submit") {
  rig r;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k(dev, r.blob, "E_add");
    auto a = filled(dev, 512, 1), b = filled(dev, 512, 2), c = dev.alloc(2048), d = dev.alloc(2048);
    fbatch batch(q);
    CHECK(batch.add(k, {buffer_arg(a), buffer_arg(b), buffer_arg(c), scalar_arg(512)}, {{512, 1, 1}, {64, 1, 1}}) == 0);
    CHECK(batch.add(k, {buffer_arg(c), buffer_arg(a), buffer_arg(d), scalar_arg(512)}, {{512, 1, 1}, {64, 1, 1}}) == 1);
    const auto commands_before = r.fake.ioctl_count(abi::IOCTL_KGSL_GPU_COMMAND);
    auto s = batch.submit();
    CHECK(r.fake.ioctl_count(abi::IOCTL_KGSL_GPU_COMMAND) == commands_before + 1);
    q.wait(s);
    const float* pd = static_cast<const float*>(d.data());
    CHECK(pd[10] == (11.0f + 12.0f) + 11.0f);

    // The stream: one wait, per launch invalidate -> dispatch -> flush, one signal; ends exactly.
    const auto cmds = batch.commands();
    int waits = 0, kicks = 0, invalidates = 0;
    std::size_t end = 0;
    for (const auto& p : pm4::packets(cmds)) {
      REQUIRE(p.kind != pm4::packet::invalid);
      waits += p.opcode == pm4::CP_WAIT_REG_MEM && p.kind == pm4::packet::type7_op;
      kicks += p.opcode == pm4::CP_RUN_OPENCL && p.kind == pm4::packet::type7_op;
      invalidates += p.kind == pm4::packet::type7_op && p.opcode == pm4::CP_EVENT_WRITE && p.payload[0] == pm4::CACHE_INVALIDATE;
      end = p.offset + 1 + p.count;
    }
    CHECK(end == cmds.size());
    CHECK(waits == 1);
    CHECK(kicks == 2);
    CHECK(invalidates == 2);

    // Patch: new arguments and a smaller size, then resubmit the same IB.
    batch.set_arg(1, 2, buffer_arg(c));
    batch.set_arg(0, 3, scalar_arg(256));
    batch.set_dims(0, {{256, 1, 1}, {32, 1, 1}});
    std::memset(c.data(), 0, 2048);
    q.wait(batch.submit());
    const float* pc = static_cast<const float*>(c.data());
    CHECK(pc[5] == 6.0f + 7.0f + 6.0f);  // launch 1 now writes c = c + a, after launch 0 wrote c
    CHECK(pc[300] == 301.0f);            // launch 0 covered 256 items only; launch 1 added a
    CHECK(r.fake.dispatches.back().global[0] == 512u);
    CHECK(r.fake.dispatches[r.fake.dispatches.size() - 2].global[0] == 256u);
    CHECK(r.fake.dispatches[r.fake.dispatches.size() - 2].local[0] == 32u);
    for (int i = 0; i < 20; ++i) batch.submit();
    q.synchronize();
    CHECK(batch.last().value == q.timeline_value());
    CHECK(error_of([&] { batch.add(k, {buffer_arg(a), buffer_arg(b), buffer_arg(c), scalar_arg(1)}, {{1, 1, 1}, {1, 1, 1}}); })
              .find("after the batch was built") != std::string::npos);
    CHECK(error_of([&] { batch.set_arg(2, 0, buffer_arg(a)); }).find("no launch 2") != std::string::npos);
    CHECK(error_of([&] { batch.set_arg(0, 4, buffer_arg(a)); }).find("no argument 4") != std::string::npos);
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("batch: patching waits for the batch's previous submission; a grown stack is re-patched") {
  rig r;
  r.fake.deferred = true;
  {
    fdevice dev(r.fake);
    fqueue q(dev);
    fkernel k(dev, r.blob);
    auto big_spec = testing::add_kernel_spec(0xB2);
    big_spec.pvtmem = 2048;  // needs a 16 MiB stack
    fkernel big(dev, testing::build_blob(big_spec));
    auto a = filled(dev, 64, 0), out = dev.alloc(256);
    fbatch batch(q);
    batch.add(k, {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}});
    batch.submit();
    CHECK(r.fake.pending() == 1);
    batch.set_arg(0, 3, scalar_arg(32));  // must not write while the GPU may read: waits first
    CHECK(r.fake.pending() == 0);
    q.launch(big, {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}});
    q.synchronize();
    batch.submit();  // the old stack is gone; the fake faults if the batch still points at it
    q.synchronize();
    CHECK(r.fake.dispatches.back().stack == r.fake.dispatches[r.fake.dispatches.size() - 2].stack);
    CHECK(r.fake.fault_reasons.empty());
  }
  CHECK(r.fake.problems() == "");
}

TEST_CASE("two queues on one device: separate contexts, frees wait for both") {
  rig r;
  r.fake.deferred = true;
  {
    fdevice dev(r.fake);
    fqueue q1(dev), q2(dev);
    CHECK(q1.context().id() != q2.context().id());
    fkernel k(dev, r.blob);
    auto out = dev.alloc(256);
    {
      auto a = filled(dev, 64, 1);
      q1.launch(k, {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}});
      q2.launch(k, {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)}, {{64, 1, 1}, {64, 1, 1}});
    }
    q1.synchronize();
    q2.synchronize();
    CHECK(static_cast<const float*>(out.data())[1] == 4.0f);
  }
  CHECK(r.fake.problems() == "");
}
