// Device, context and memory objects against the fake driver.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "kgsl/fake_kgsl.hpp"
#include "uopcg/runtime/kgsl.hpp"

using namespace uopcg::kgsl;
using testing::fake_kgsl;
using fdevice = basic_device<fake_kgsl>;

namespace {
std::string error_of(auto&& f) {
  try {
    f();
  } catch (const uopcg::error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("device: opens, reads DEVICE_INFO, decodes the chip id") {
  fake_kgsl fake;
  {
    fdevice dev(fake);
    CHECK(dev.chip().raw == 0x06030001u);
    CHECK(dev.chip().name() == "A630");
    CHECK(dev.chip().core() == 6u);
    CHECK(dev.gmem_size() == (1u << 20));
    CHECK(dev.info().mmu_enabled == 1u);
    CHECK(fake.open_fds() == 1);
    CHECK(fake.ioctl_count(abi::IOCTL_KGSL_DEVICE_GETPROPERTY) == 1);
  }
  CHECK(fake.problems() == "");
}

TEST_CASE("device: the chip gate accepts only chips whose fiber count is known") {
  CHECK(unsupported_chip_reason({0x06030001}).empty());
  CHECK(unsupported_chip_reason({0x06030002}).empty());  // any patch level
  CHECK(unsupported_chip_reason({0x06010800}).empty());  // A618, A630's sub-generation
  CHECK(&chip_traits_of({0x06030001}) == find_chip_traits({0x060300FF}));
  CHECK(chip_traits_of({0x06030001}).fibers_per_sp == 2048u);
  CHECK(chip_traits_of({0x06030001}).instr_cache_units == 64u);
  // Other A6xx parts have other fiber counts (A640 8192, A650 4096): refused, naming the chip id.
  for (std::uint32_t chip : {0x06040001u, 0x06050002u, 0x06030500u, 0x06060000u}) {
    const std::string why = unsupported_chip_reason({chip});
    CAPTURE(why);
    CHECK(why.find("fibers per shader processor") != std::string::npos);
    CHECK(why.find("A630") != std::string::npos);  // the known list
  }
  CHECK(unsupported_chip_reason({0x06040001}).find("A640 (chip id 0x06040001)") != std::string::npos);
  CHECK(unsupported_chip_reason({0x06030500}).find("A635 (chip id 0x06030500)") != std::string::npos);
  CHECK(unsupported_chip_reason({0x07030001}).find("A730") != std::string::npos);
  CHECK(unsupported_chip_reason({0x43050a01}).find("0x43050A01") != std::string::npos);  // A740
  CHECK(unsupported_chip_reason({0x05040001}).find("A540") != std::string::npos);
  CHECK(unsupported_chip_reason({0x06011000}).find("chip 0x06011000") != std::string::npos);  // minor 16: not a digit
  CHECK_THROWS_WITH_AS((void)chip_traits_of({0x06040001}), doctest::Contains("0x06040001"), uopcg::error);
  for (std::uint32_t chip : {0x06040001u, 0x07030001u, 0x43050a01u, 0x44050000u}) {
    fake_kgsl fake;
    fake.chip_id = chip;
    CHECK(error_of([&] { fdevice dev(fake); }).find("not supported") != std::string::npos);
    CHECK(fake.problems() == "");  // the fd was closed on the error path
    device_options o;
    o.check_chip = false;
    fdevice dev(fake, o);
    CHECK(dev.chip().raw == chip);
    // Opened without the gate, the device still cannot size a kernel's private memory.
    CHECK(error_of([&] { (void)dev.traits(); }).find("is not supported") != std::string::npos);
  }
}

TEST_CASE("device: a missing node is reported, and available() probes without throwing") {
  fake_kgsl fake;
  device_options o;
  o.path = "/dev/kgsl-0";
  CHECK(error_of([&] { fdevice dev(fake, o); }).find("cannot open /dev/kgsl-0: ENOENT") != std::string::npos);
  CHECK(!fdevice::available(fake, "/dev/nope"));
  CHECK(fdevice::available(fake));
  CHECK(fake.problems() == "");
}

TEST_CASE("context: tinygrad's flags, power constraint on by default, opt-out") {
  fake_kgsl fake;
  {
    fdevice dev(fake);
    auto ctx = dev.create_context();
    CHECK(ctx.id() == 1u);
    CHECK(fake.context_flags(ctx.id()) == (0x04008A12u | abi::KGSL_CONTEXT_PER_CONTEXT_TS));
    CHECK(ctx.flags() == fake.context_flags(ctx.id()));  // written back by the driver
    CHECK(fake.power_level(ctx.id()) == abi::KGSL_CONSTRAINT_PWR_MAX);
    context_options o;
    o.power_constraint = false;
    o.priority = 2;
    auto quiet = dev.create_context(o);
    CHECK(quiet.id() == 2u);
    CHECK((fake.context_flags(quiet.id()) & abi::KGSL_CONTEXT_PWR_CONSTRAINT) == 0u);
    CHECK((fake.context_flags(quiet.id()) & abi::KGSL_CONTEXT_PRIORITY_MASK) == 0x2000u);
    CHECK(fake.power_level(quiet.id()) == ~0u);
    CHECK(fake.ioctl_count(abi::IOCTL_KGSL_SETPROPERTY) == 1);
    CHECK(fake.live_contexts() == 2);
    CHECK(ctx.read_timestamp(abi::KGSL_TIMESTAMP_QUEUED) == 0u);
    CHECK(ctx.reset_status() == abi::KGSL_CTX_STAT_NO_ERROR);
    // Moving keeps one owner.
    auto moved = std::move(ctx);
    CHECK(moved.id() == 1u);
  }
  CHECK(fake.problems() == "");
}

TEST_CASE("context: a refused power constraint is only a hint; a refused context is an error") {
  fake_kgsl fake;
  fake.reject_power_constraint = true;
  {
    fdevice dev(fake);
    auto ctx = dev.create_context();
    CHECK(ctx.id() != 0u);
    context_options bad;
    bad.extra_flags = abi::KGSL_CONTEXT_SECURE;
    const auto msg = error_of([&] { (void)dev.create_context(bad); });
    CHECK(msg.find("IOCTL_KGSL_DRAWCTXT_CREATE failed: EOPNOTSUPP") == 0);
  }
  CHECK(fake.problems() == "");
}

TEST_CASE("memory: page rounding, mmap offset id * page size, CPU pointer is the GPU address") {
  for (long page : {4096L, 16384L}) {
    CAPTURE(page);
    fake_kgsl fake;
    fake.page = page;
    {
      fdevice dev(fake);
      CHECK(dev.page_size() == static_cast<std::uint64_t>(page));
      auto a = dev.alloc(100);
      auto b = dev.alloc(static_cast<std::uint64_t>(page) + 1);
      CHECK(a.size() == static_cast<std::uint64_t>(page));
      CHECK(b.size() == 2 * static_cast<std::uint64_t>(page));
      CHECK(a.mmap_size() == a.size());
      CHECK(a.flags() == abi::tinygrad_alloc_flags);
      CHECK(a.gpu_address() == reinterpret_cast<std::uint64_t>(a.data()));
      CHECK(a.id() != b.id());
      std::memset(a.data(), 0x5A, 100);
      CHECK(*fake.gpu_ptr<unsigned char>(a.gpu_address() + 99, 1) == 0x5A);  // same pages as the GPU sees
      CHECK(a.info().size == a.size());
      CHECK(fake.live_mappings() == 2);
      auto c = std::move(a);
      CHECK(!a);
      CHECK(fake.live_objects() == 2);
    }
    CHECK(fake.problems() == "");
  }
}

TEST_CASE("memory: without USE_CPU_MAP the GPU address comes from GPUOBJ_INFO") {
  fake_kgsl fake;
  fake.drop_cpu_map = true;
  {
    fdevice dev(fake);
    auto a = dev.alloc(8192);
    CHECK((a.flags() & abi::KGSL_MEMFLAGS_USE_CPU_MAP) == 0u);
    CHECK(a.gpu_address() != reinterpret_cast<std::uint64_t>(a.data()));
    static_cast<int*>(a.data())[5] = 1234;
    CHECK(*fake.gpu_ptr<int>(a.gpu_address() + 20, 4) == 1234);
    CHECK(fake.ioctl_count(abi::IOCTL_KGSL_GPUOBJ_INFO) == 1);
  }
  CHECK(fake.problems() == "");
}

TEST_CASE("memory: cache maintenance only where the mapping is cached") {
  fake_kgsl fake;
  {
    fdevice dev(fake);
    auto wc = dev.alloc(4096);
    wc.flush_for_gpu();
    wc.invalidate_for_cpu();
    CHECK(fake.ioctl_count(abi::IOCTL_KGSL_GPUOBJ_SYNC) == 0);
    alloc_options o;
    o.cache = cache_mode::write_back;
    auto wb = dev.alloc(4096, o);
    CHECK(wb.needs_cache_maintenance());
    wb.flush_for_gpu();
    wb.invalidate_for_cpu();
    wb.sync(abi::KGSL_GPUMEM_CACHE_FLUSH, 64, 128);
    CHECK(fake.ioctl_count(abi::IOCTL_KGSL_GPUOBJ_SYNC) == 3);
    CHECK(error_of([&] { wb.sync(abi::KGSL_GPUMEM_CACHE_CLEAN, 0, 1 << 20); }).find("IOCTL_KGSL_GPUOBJ_SYNC failed: EINVAL") == 0);
    o.io_coherent = true;
    CHECK(!dev.alloc(4096, o).needs_cache_maintenance());
  }
  CHECK(fake.problems() == "");
}

TEST_CASE("memory: failing ioctls and mmap become errors naming the call, and leak nothing") {
  fake_kgsl fake;
  {
    fdevice dev(fake);
    fake.memory_limit = 1 << 20;
    CHECK(error_of([&] { (void)dev.alloc(2 << 20); }) ==
          "IOCTL_KGSL_GPUOBJ_ALLOC failed: ENOMEM (" + std::string(std::strerror(ENOMEM)) + "): 2097152 bytes");
    CHECK(error_of([&] { (void)dev.alloc(0); }).find("0-byte") != std::string::npos);
    fake.fail_call(1, ENOMEM);  // the mmap after the next GPUOBJ_ALLOC
    CHECK(error_of([&] { (void)dev.alloc(4096); }).find("mmap of KGSL GPU object") == 0);
    CHECK(fake.live_objects() == 0);  // freed on the error path
    fake.fail_ioctl(abi::IOCTL_KGSL_GPUOBJ_ALLOC, EINTR, 2);  // interrupted calls are retried
    auto ok = dev.alloc(4096);
    CHECK(ok.size() == 4096u);
  }
  CHECK(fake.problems() == "");
}
