// Fault injection at every syscall of the bring-up/launch/teardown sequence (no leaks on any path,
// every failure names its call), and checks that the fake driver itself catches broken ABI use
// and broken command streams (so the clean runs elsewhere mean something).
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
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

namespace {
// The whole life of a program: open, context, memory, load, launch, wait, batch, teardown.
void scenario(fake_kgsl& fake, const std::vector<std::byte>& blob) {
  fdevice dev(fake);
  queue_options o;
  o.timeout = std::chrono::milliseconds(100);
  fqueue q(dev, o);
  fkernel k = q.load(blob);
  auto a = dev.alloc(4096), out = dev.alloc(4096);
  const kernel_arg args[] = {buffer_arg(a), buffer_arg(a), buffer_arg(out), scalar_arg(64)};
  q.wait(q.launch(k, args, {{64, 1, 1}, {64, 1, 1}}));
  fbatch b(q);
  b.add(k, args, {{64, 1, 1}, {64, 1, 1}});
  b.add(k, args, {{128, 1, 1}, {64, 1, 1}});
  q.wait(b.submit());
  b.set_arg(1, 3, scalar_arg(32));
  q.wait(b.submit());
  q.synchronize();
}
}  // namespace

namespace {
// Runs the scenario once per (syscall index, errno). With a deferred GPU the waits reach the driver
// too; there only errnos that do not claim a driver-side state change (EDEADLK would mean the
// driver invalidated the context, EPROTO that it queued the command) are injected.
void sweep(bool deferred, std::initializer_list<int> errnos) {
  const auto blob = testing::build_blob(testing::add_kernel_spec());
  long total = 0;
  {
    fake_kgsl fake;
    fake.deferred = deferred;
    scenario(fake, blob);
    REQUIRE(fake.problems() == "");
    if (deferred) REQUIRE(fake.ioctl_count(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID) > 0);
    total = fake.calls();
  }
  REQUIRE(total > 20);
  int errors = 0, recovered = 0;
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
      REQUIRE(!fake.last_injected.empty());  // the injection fired
      if (!msg.empty()) {
        ++errors;
        // Name the failing call, or (for waits that outlive a lost submission) the wait itself.
        const bool names_call = msg.find(fake.last_injected) != std::string::npos ||
                                (fake.last_injected == "open" && msg.find("cannot open") == 0) ||
                                msg.find("IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID") != std::string::npos ||
                                msg.find("KGSL wait") == 0 || msg.find("is lost") != std::string::npos;
        CHECK(names_call);
        if (msg.find(fake.last_injected) != std::string::npos) CHECK(msg.find(errno_name(e)) != std::string::npos);
      } else {
        ++recovered;  // failures the launcher may absorb: retried waits, best-effort hints, teardown
      }
      CHECK(fake.problems() == "");
    }
  }
  CHECK(errors > 0);
  CHECK(recovered > 0);
}
}  // namespace

TEST_CASE("every syscall of the sequence can fail: a named error or a clean recovery, never a leak") {
  sweep(false, {ENOMEM, EINVAL, EPROTO, ETIMEDOUT, EDEADLK, ENOENT});
}

TEST_CASE("the same with a GPU that runs work only when waited for") {
  sweep(true, {ENOMEM, EINVAL, ETIMEDOUT});
}

TEST_CASE("the fake refuses a request whose size or direction disagrees with the uapi header") {
  fake_kgsl fake;
  const int fd = fake.open("/dev/kgsl-3d0", 2);
  abi::kgsl_drawctxt_create c{abi::tinygrad_context_flags, 0};
  // _IOW instead of _IOWR: the context id would never come back.
  CHECK(fake.ioctl(fd, abi::iow<abi::kgsl_drawctxt_create>(0x13), &c) == -1);
  CHECK(errno == EINVAL);
  struct too_big {
    abi::kgsl_gpuobj_alloc a;
    std::uint64_t extra;
  } t{};
  CHECK(fake.ioctl(fd, abi::iowr<too_big>(0x45), &t) == -1);
  CHECK(fake.ioctl(fd, 0xC0085501, &c) == -1);  // another driver's type
  CHECK(errno == ENOTTY);
  CHECK(fake.violations.size() == 3);
  CHECK(fake.ioctl(fd, abi::IOCTL_KGSL_DRAWCTXT_CREATE, &c) == 0);
  CHECK(c.drawctxt_id == 1u);
  // Without PREAMBLE | NO_GMEM_ALLOC the driver refuses the context; output is not copied back.
  abi::kgsl_drawctxt_create bad{0x8000, 77};
  CHECK(fake.ioctl(fd, abi::IOCTL_KGSL_DRAWCTXT_CREATE, &bad) == -1);
  CHECK(bad.drawctxt_id == 77u);
  fake.close(fd);
  CHECK(fake.open_fds() == 0);
  CHECK(fake.live_contexts() == 0);
}

namespace {
// Submits a hand-written IB through the launcher's own objects and reports what the fake saw.
struct stream_rig {
  fake_kgsl fake;
  std::vector<std::string> violations;
  std::vector<std::string> faults;
  std::uint64_t shader_bytes = 4096, stack_bytes = 16384;
  template <class F>
  void run(F&& write) {
    {
      fdevice dev(fake);
      auto ctx = dev.create_context();
      auto sig = dev.alloc(4096), ib = dev.alloc(4096), k = dev.alloc(8192), sh = dev.alloc(shader_bytes),
           stack = dev.alloc(stack_bytes);
      pm4::writer w(static_cast<std::uint32_t*>(ib.data()), 1024);
      write(w, sig.gpu_address(), k.gpu_address(), sh.gpu_address(), stack.gpu_address());
      const abi::kgsl_command_object cmd{0, ib.gpu_address(), w.size() * 4, abi::KGSL_CMDLIST_IB, 0};
      REQUIRE(ctx.submit(&cmd, 1).err == 0);
    }
    violations = fake.violations;
    faults = fake.fault_reasons;
  }
  bool saw(const std::string& what) const {
    for (const auto& v : violations)
      if (v.find(what) != std::string::npos) return true;
    for (const auto& v : faults)
      if (v.find(what) != std::string::npos) return true;
    return false;
  }
};

// A correct launch, with knobs to break it.
struct knobs {
  bool invalidate = true, flush = true, idle = true;
  std::uint32_t wait_ref = 0, instr_size = 1, const_units = 256, shader_units = 1, config = 0x100;
  std::uint32_t pvt_param = 0, pvt_size = 0;  // SP_CS_PVT_MEM_PARAM, SP_CS_PVT_MEM_SIZE
  std::uint64_t const_offset = 0;
  std::uint64_t shader_bytes = 4096, stack_bytes = 16384;  // sizes of the rig's objects
};
auto good_launch(knobs kn) {
  return [kn](pm4::writer& w, std::uint64_t sig, std::uint64_t k, std::uint64_t sh, std::uint64_t stack) {
    using namespace pm4;
    w.op(CP_WAIT_REG_MEM, {0x15, lo(sig), hi(sig), kn.wait_ref, 0xFFFFFFFF, 32});
    if (kn.invalidate) w.op(CP_EVENT_WRITE, {CACHE_INVALIDATE});
    w.reg(reg::SP_CS_NDRANGE_0, {3 | 63 << 2, 64, 0, 1, 0, 1, 0, 0x00CCC0CF, 0xFC, 1, 1, 1});
    w.reg(reg::SP_CS_CNTL_0, {0x180, 0x41, 0, 0, lo(sh), hi(sh), kn.pvt_param, lo(stack), hi(stack), kn.pvt_size});
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::constants, state_src::indirect, SB6_CS_SHADER, kn.const_units),
                               lo(k + kn.const_offset), hi(k + kn.const_offset)});
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::shader, state_src::indirect, SB6_CS_SHADER, kn.shader_units),
                               lo(sh), hi(sh)});
    w.reg(reg::SP_CS_INSTR_SIZE, {kn.instr_size});
    w.reg(reg::SP_CS_CONFIG, {kn.config});
    w.op(CP_RUN_OPENCL, {0});
    if (kn.flush) w.op(CP_EVENT_WRITE, {CACHE_FLUSH_TS, lo(sig + 64), hi(sig + 64), 0});
    if (kn.idle) w.op(CP_WAIT_FOR_IDLE);
    w.op(CP_EVENT_WRITE, {CACHE_FLUSH_TS, lo(sig), hi(sig), 1});
  };
}
}  // namespace

TEST_CASE("the fake checks the stream invariants of kgsl.md 12.3") {
  {
    stream_rig r;
    r.run(good_launch({}));
    CHECK(r.violations.empty());
    CHECK(r.faults.empty());
    CHECK(r.fake.dispatches.size() == 1);
  }
  struct broken {
    knobs k;
    const char* expect;
  };
  knobs no_inval, no_flush, no_idle, bad_ref, bad_instr, short_const, outside, bad_config, huge_shader;
  no_inval.invalidate = false;
  no_flush.flush = false;
  no_idle.idle = false;
  bad_ref.wait_ref = 3;
  bad_instr.instr_size = 2;
  short_const.const_units = 128;
  outside.const_offset = 4096 + 2048;  // 4096 bytes from here run past the 8 KiB object
  bad_config.config = 0x100 | 1 << 9;  // claims a texture that was never loaded
  huge_shader.shader_units = 40;       // 5120 bytes from a 4 KiB object
  huge_shader.instr_size = 40;
  const broken cases[] = {
      {no_inval, "without a CACHE_INVALIDATE"},
      {no_flush, "not flushed"},
      {no_idle, "without CP_WAIT_FOR_IDLE"},
      {bad_ref, "wait reference 3 differs"},
      {bad_instr, "shader preload of 1 units != min(SP_CS_INSTR_SIZE 2, instruction cache 64)"},
      {short_const, "constant load of 128 vec4"},
      {outside, "outside any live GPU object"},
      {bad_config, "NTEX differs"},
      {huge_shader, "outside any live GPU object"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.expect);
    stream_rig r;
    r.run(good_launch(c.k));
    CHECK(r.saw(c.expect));
  }
}

// These streams are what the launcher sent before the private-memory and preload fixes: the fake
// decodes SP_CS_PVT_MEM_* with the register database's shifts and knows A630's 2048 fibers per shader
// processor and 64-unit instruction cache, so it no longer accepts them.
TEST_CASE("the fake checks private memory and the shader preload against the chip") {
  auto run = [](const knobs& k) {
    auto r = std::make_unique<stream_rig>();  // the fake is neither copyable nor movable
    r->shader_bytes = k.shader_bytes;
    r->stack_bytes = k.stack_bytes;
    r->run(good_launch(k));
    return r;
  };
  knobs pvt;  // 600 bytes per item: 1024 per fiber (MEMSIZEPERITEM 2), 2 MiB per SP (TOTALPVTMEMSIZE 512)
  pvt.pvt_param = 2;
  pvt.pvt_size = 512;
  pvt.stack_bytes = 4u << 20;  // both SPs' regions
  knobs big;                   // a 9000-byte shader: 71 units, 64 preloaded
  big.shader_bytes = 9088;
  big.instr_size = 71;
  big.shader_units = 64;
  const auto good_pvt = run(pvt), good_big = run(big);
  for (const stream_rig* r : {good_pvt.get(), good_big.get()}) {
    CHECK(r->violations.empty());
    CHECK(r->faults.empty());
    REQUIRE(r->fake.dispatches.size() == 1);
  }
  CHECK(good_pvt->fake.dispatches[0].pvt_per_fiber == 1024u);
  CHECK(good_pvt->fake.dispatches[0].pvt_per_sp == 2u << 20);
  CHECK(good_big->fake.dispatches[0].shader_units == 64u);
  CHECK(good_big->fake.dispatches[0].instr_size == 71u);

  struct broken {
    knobs k;
    const char* expect;
  };
  knobs twice = pvt, raw = pvt, small = pvt, over = big, under = big, unmapped = big;
  twice.pvt_size = 1;                  // per-SP bytes shifted by 12 a second time
  raw.pvt_size = 2u << 20;             // bytes where 4 KiB units belong
  small.stack_bytes = 2u << 20;        // one SP's region only
  over.shader_units = 71;              // the whole shader preloaded: past the instruction cache
  under.shader_units = 32;             // neither the whole shader nor the whole cache
  unmapped.shader_bytes = 8192;        // 71 units do not fit: fetching the rest would fault
  const broken cases[] = {
      {twice, "gives each shader processor 4096 bytes, but its 2048 fibers need 2097152 (1024 each): the regions overlap"},
      {raw, "sets bits outside TOTALPVTMEMSIZE"},
      {small, "private memory of 2 shader processors x 2097152 bytes"},
      {over, "shader preload of 71 units exceeds the 64-unit instruction cache"},
      {under, "shader preload of 32 units != min(SP_CS_INSTR_SIZE 71, instruction cache 64)"},
      {unmapped, "shader of 71 units"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.expect);
    CHECK(run(c.k)->saw(c.expect));
  }
  // Malformed PM4 and unknown opcodes.
  {
    stream_rig r;
    r.run([](pm4::writer& w, std::uint64_t sig, auto...) {
      w.op(pm4::CP_WAIT_REG_MEM, {0x15, pm4::lo(sig), pm4::hi(sig), 0, 0xFFFFFFFF, 32});
      w.op(0x7E, {1});
    });
    CHECK(r.saw("unknown PM4 opcode"));
  }
  {
    stream_rig r;
    r.run([](pm4::writer& w, auto...) {
      w.op(pm4::CP_NOP);
      w.reg(0x0100, {1});  // not a compute register
    });
    CHECK(r.saw("outside the A6xx compute register block"));
  }
}
