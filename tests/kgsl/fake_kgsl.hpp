// A faithful in-process fake of the KGSL driver (kgsl.md §12), used as the syscall policy of the
// launcher in tests and benchmarks.
//
// - Request numbers are checked against its own golden table (kgsl.md §2.1), not the launcher's
//   header; arguments are copied in/out min(user, kernel) bytes, and not copied out on error.
// - GPU memory is backed by memfd pages: the user mapping and the fake GPU's view share them, and a
//   USE_CPU_MAP object's GPU address is its mapping's address, as on the device.
// - GPU_COMMAND decodes the IB with a PM4 interpreter that enforces the invariants of §12.3 and
//   records every dispatch; an optional host "kernel model" computes results. The interpreter's
//   packet framing, opcodes, registers and field layouts (namespace hw) are typed in from
//   freedreno's register database, not taken from the launcher's pm4.hpp, so a wrong constant or
//   shift there is caught instead of mirrored; so are the chip facts that bound private memory and
//   the shader preload.
// - Fault injection: the n-th syscall, the next calls of one ioctl, GPU hangs (EDEADLK), EPROTO,
//   stuck GPUs (ETIMEDOUT), late completion.
// - Accounting of open fds, live user mappings, objects and contexts for leak checks.
#pragma once

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uopcg/runtime/kgsl/abi.hpp"

namespace uopcg::kgsl::testing {

/// What the fake GPU knows about the hardware: type-4/type-7 packet framing, opcodes and events
/// (adreno_pm4.xml), the compute registers and their fields with a6xx.xml's shifts, and the
/// CP_LOAD_STATE6 control dword.
namespace hw {
inline constexpr std::uint32_t register_file = 0x40000;

inline constexpr std::uint32_t CP_NOP = 0x10, CP_WAIT_MEM_WRITES = 0x12, CP_WAIT_FOR_IDLE = 0x26,
                               CP_RUN_OPENCL = 0x31, CP_EXEC_CS = 0x33, CP_LOAD_STATE6_FRAG = 0x34,
                               CP_WAIT_REG_MEM = 0x3C, CP_REG_TO_MEM = 0x3E, CP_EVENT_WRITE = 0x46,
                               CP_SET_MARKER = 0x65;
inline constexpr std::uint32_t CACHE_FLUSH_TS = 4, CACHE_INVALIDATE = 0x31;
inline constexpr std::uint32_t WAIT_GE_ON_MEMORY = 5 | 1 << 4;  // function WRITE_GE, POLL_MEMORY

inline constexpr std::uint32_t SP_CS_CNTL_0 = 0xA9B0, SP_CS_CNTL_1 = 0xA9B1, SP_CS_PROGRAM_COUNTER_OFFSET = 0xA9B3,
                               SP_CS_BASE = 0xA9B4, SP_CS_PVT_MEM_PARAM = 0xA9B6, SP_CS_PVT_MEM_BASE = 0xA9B7,
                               SP_CS_PVT_MEM_SIZE = 0xA9B9, SP_CS_CONFIG = 0xA9BB, SP_CS_INSTR_SIZE = 0xA9BC,
                               SP_CS_PVT_MEM_STACK_OFFSET = 0xA9BD, SP_CS_SAMPLER_BASE = 0xA9E2,
                               SP_CS_TEXMEMOBJ_BASE = 0xA9E6, SP_CS_UAV_BASE = 0xA9F2,
                               TPL1_CS_BORDER_COLOR_BASE = 0xB180, SP_CS_CONST_CONFIG = 0xB987,
                               SP_CS_NDRANGE_0 = 0xB990, SP_CS_CONST_CONFIG_0 = 0xB997, SP_CS_WGE_CNTL = 0xB998,
                               SP_CS_KERNEL_GROUP_X = 0xB999;
constexpr std::uint32_t global_size_reg(std::uint32_t dim) { return 0xB991 + 2 * dim; }  // NDRANGE_1/3/5
constexpr std::uint32_t global_off_reg(std::uint32_t dim) { return 0xB992 + 2 * dim; }   // NDRANGE_2/4/6

/// A register field: bits [low, high] hold the quantity shifted right by `shr` (a6xx.xml's shr).
struct field {
  std::uint32_t low, high, shr;
  constexpr std::uint32_t mask() const { return static_cast<std::uint32_t>(((1ull << (high - low + 1)) - 1) << low); }
  constexpr std::uint64_t get(std::uint32_t dword) const { return std::uint64_t{(dword & mask()) >> low} << shr; }
};
inline constexpr field MEMSIZEPERITEM{0, 7, 9};     // SP_CS_PVT_MEM_PARAM: private bytes per fiber
inline constexpr field HWSTACKSIZEPERTHREAD{24, 31, 0};
inline constexpr field TOTALPVTMEMSIZE{0, 17, 12};  // SP_CS_PVT_MEM_SIZE: private bytes per shader processor
inline constexpr std::uint32_t PERWAVEMEMLAYOUT = 1u << 31;

/// CP_LOAD_STATE6 control dword.
struct load_state {
  std::uint32_t dst_off, type, src, block, num_unit;
};
constexpr load_state decode_load_state(std::uint32_t c) {
  return {c & 0x3FFF, (c >> 14) & 3, (c >> 16) & 3, (c >> 18) & 0xF, (c >> 22) & 0x3FF};
}
inline constexpr std::uint32_t ST6_SHADER = 0, ST6_CONSTANTS = 1, ST6_UAV = 3;
inline constexpr std::uint32_t SS6_INDIRECT = 2, SB6_CS_TEX = 5, SB6_CS_SHADER = 13;
/// Bytes per NUM_UNIT of the compute loads; 0 for any other combination.
constexpr std::uint32_t unit_bytes(std::uint32_t type, std::uint32_t block) {
  if (block == SB6_CS_SHADER) return type == ST6_SHADER ? 128 : type == ST6_CONSTANTS ? 16 : type == ST6_UAV ? 64 : 0;
  if (block == SB6_CS_TEX) return type == ST6_SHADER ? 16 : type == ST6_CONSTANTS ? 64 : 0;
  return 0;
}

/// One packet of a stream; `end` is the index just past it (the stream's end for an invalid one).
struct packet {
  bool valid = false, type7 = false;
  std::uint32_t reg = 0, opcode = 0, count = 0;
  std::size_t offset = 0, end = 0;
  const std::uint32_t* payload = nullptr;
  std::string error;
};
// The parity bit makes a field plus the bit hold an odd number of ones.
constexpr bool parity_ok(std::uint32_t field_value, std::uint32_t bit) { return (std::popcount(field_value) + bit) % 2 == 1; }
inline std::string hex32(std::uint32_t v) {
  static constexpr char d[] = "0123456789ABCDEF";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += d[(v >> shift) & 0xF];
  return s;
}
inline packet decode(std::span<const std::uint32_t> s, std::size_t at) {
  packet p;
  p.offset = at;
  p.end = s.size();
  const std::uint32_t h = s[at];
  if (h >> 28 == 4) {
    p.count = h & 0x7F;
    p.reg = (h >> 8) & 0x3FFFF;
    if (!parity_ok(p.count, (h >> 7) & 1) || !parity_ok(p.reg, (h >> 27) & 1) || (h >> 26 & 1))
      return p.error = "bad type-4 header " + hex32(h), p;
  } else if (h >> 28 == 7) {
    p.type7 = true;
    p.count = h & 0x3FFF;
    p.opcode = (h >> 16) & 0x7F;
    if (!parity_ok(p.count, (h >> 15) & 1) || !parity_ok(p.opcode, (h >> 23) & 1) || (h >> 14 & 1) || (h >> 24 & 0xF))
      return p.error = "bad type-7 header " + hex32(h), p;
  } else {
    return p.error = "packet type " + std::to_string(h >> 28) + " is neither 4 nor 7", p;
  }
  if (p.count > s.size() - at - 1) return p.error = "packet payload runs past the end of the IB", p;
  p.valid = true;
  p.payload = s.data() + at + 1;
  p.end = at + 1 + p.count;
  return p;
}

/// Per-chip facts the fake checks against, keyed by core.major.minor. A630 (mesa
/// src/freedreno/common/a6xx_gpu.py): fibers_per_sp 128 * 16, num_ccu 2 (one shader processor per
/// CCU), instr_cache_size 64 of its a6xx_gen1 template.
struct chip_facts {
  std::uint32_t core_major_minor, fibers_per_sp, shader_processors, instr_cache_units;
};
inline constexpr chip_facts chips[] = {{0x060300, 2048, 2, 64}};
}  // namespace hw

/// What the fake GPU saw at one CP_RUN_OPENCL / CP_EXEC_CS.
struct dispatch_info {
  std::uint32_t kick = 0;  // opcode
  std::uint32_t ndrange0 = 0;
  std::uint32_t local[3]{}, global[3]{}, groups[3]{};
  std::uint64_t shader = 0, kernargs = 0, stack = 0;
  std::uint32_t shader_units = 0;            // preloaded by CP_LOAD_STATE6
  std::uint32_t instr_size = 0;              // SP_CS_INSTR_SIZE: the whole shader, in 128-byte units
  std::uint64_t pvt_per_fiber = 0, pvt_per_sp = 0;  // private memory in bytes, decoded with a6xx.xml's shifts
  std::uint32_t cs_cntl_0 = 0, cs_cntl_1 = 0, entry = 0, pvt_param = 0, pvt_size = 0, stack_offset = 0;
  std::uint32_t const_config = 0, config = 0, wge_cntl = 0, const_config_0 = 0;
  std::uint32_t ntex_loaded = 0, nsamp_loaded = 0, nibo_loaded = 0;
  std::uint32_t context = 0, timestamp = 0;
};

class fake_kgsl {
 public:
  // --- configuration ---
  std::uint32_t chip_id = 0x06030001;  // A630
  std::uint64_t gmem_bytes = 1u << 20;
  long page = 4096;
  bool deferred = false;        // run IBs when someone waits, not at submission
  bool drop_cpu_map = false;    // ignore USE_CPU_MAP (GPU addresses then come from GPUOBJ_INFO)
  bool reject_power_constraint = false;
  bool record_dispatches = true;
  std::uint64_t memory_limit = 256ull << 20;  // ENOMEM beyond this many live bytes
  std::function<void(fake_kgsl&, const dispatch_info&)> kernel_model;

  // --- fault injection ---
  /// The n-th counted syscall from now (open, ioctl, mmap; 0 = the next one) fails with `err`.
  void fail_call(long n, int err) {
    fail_at_ = calls_ + n;
    fail_errno_ = err;
  }
  /// The next `times` calls of ioctl `request` fail with `err` before reaching the handler.
  void fail_ioctl(std::uint32_t request, int err, int times = 1) {
    for (int i = 0; i < times; ++i) ioctl_faults_[abi::ioc_nr(request)].push_back(err);
  }
  void hang_next_submit() { hang_next_ = true; }      // the next IB faults the GPU when it runs
  void eproto_next_submit() { eproto_next_ = true; }  // queued, but reported as EPROTO
  bool stuck = false;               // pending IBs never run; waits time out
  bool complete_on_timeout = false; // with stuck: the work lands just as a wait times out

  // --- accounting ---
  std::vector<std::string> violations;
  std::vector<dispatch_info> dispatches;
  std::string last_injected;  // name of the call the last injection failed
  long calls() const { return calls_; }
  int open_fds() const { return static_cast<int>(fds_.size()); }
  std::size_t live_mappings() const { return user_maps_.size(); }
  std::size_t live_objects() const { return objects_.size(); }
  std::size_t live_contexts() const { return contexts_.size(); }
  std::size_t ioctl_count(std::uint32_t request) const {
    auto it = ioctl_counts_.find(abi::ioc_nr(request));
    return it == ioctl_counts_.end() ? 0 : it->second;
  }
  std::size_t submissions() const { return submissions_; }
  std::uint32_t power_level(std::uint32_t ctx) const {
    auto it = contexts_.find(ctx);
    return it == contexts_.end() ? ~0u : it->second.pwr_level;
  }
  std::uint32_t context_flags(std::uint32_t ctx) const {
    auto it = contexts_.find(ctx);
    return it == contexts_.end() ? 0 : it->second.flags;
  }
  /// "" when nothing leaked and no invariant was violated; otherwise what went wrong.
  std::string problems() const {
    std::string s;
    for (const auto& v : violations) s += "violation: " + v + "\n";
    if (!fds_.empty()) s += std::to_string(fds_.size()) + " fd(s) open\n";
    if (!user_maps_.empty()) s += std::to_string(user_maps_.size()) + " mapping(s) live\n";
    if (!objects_.empty()) s += std::to_string(objects_.size()) + " GPU object(s) live\n";
    if (!contexts_.empty()) s += std::to_string(contexts_.size()) + " context(s) live\n";
    return s;
  }

  fake_kgsl() : regs_(hw::register_file) {}
  fake_kgsl(const fake_kgsl&) = delete;
  fake_kgsl& operator=(const fake_kgsl&) = delete;
  ~fake_kgsl() {
    for (auto& [id, o] : objects_) release_backing(o);
  }

  /// Host pointer for `bytes` at GPU address `addr`, or nullptr (and a GPU fault) if unmapped.
  template <class T = std::byte>
  T* gpu_ptr(std::uint64_t addr, std::uint64_t bytes) {
    std::byte* p = translate(addr, bytes);
    if (!p) fault("kernel model accessed unmapped GPU address " + hex(addr));
    return reinterpret_cast<T*>(p);
  }
  /// Pending (queued, not executed) submissions of all contexts.
  std::size_t pending() const {
    std::size_t n = 0;
    for (const auto& [id, c] : contexts_) n += c.queue.size();
    return n;
  }
  /// Runs every pending submission (what the GPU would do eventually).
  void run_all() {
    for (auto& [id, c] : contexts_) run_until(c, c.queued);
  }

  // --- the syscall policy ---
  int open(const char* path, int flags) {
    if (inject("open")) return -1;
    if (std::string(path) != "/dev/kgsl-3d0") return set_errno(ENOENT);
    if ((flags & 3) != O_RDWR_) return set_errno(EACCES);
    const int fd = next_fd_++;
    fds_.insert(fd);
    return fd;
  }
  int close(int fd) {
    if (!fds_.count(fd)) {
      violations.push_back("close of unknown fd " + std::to_string(fd));
      return set_errno(EBADF);
    }
    // Closing the file releases everything it owns, like the driver's release().
    for (auto it = contexts_.begin(); it != contexts_.end();) {
      if (it->second.fd == fd) {
        destroy_context_events(it->first);
        it = contexts_.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<std::uint32_t> ids;
    for (auto& [id, o] : objects_)
      if (o.fd == fd) ids.push_back(id);
    for (std::uint32_t id : ids) {
      objects_[id].freed = true;
      maybe_destroy(id);
    }
    fds_.erase(fd);
    return 0;
  }
  int ioctl(int fd, std::uint32_t request, void* arg) {
    const char* name = golden_name(abi::ioc_nr(request));
    if (inject(name && *name ? name : "ioctl")) return -1;
    if (!fds_.count(fd)) return set_errno(EBADF);
    const golden* g = find_golden(request);
    if (abi::ioc_type(request) != abi::KGSL_IOC_TYPE || !g) {
      violations.push_back("unknown ioctl request " + hex(request));
      return set_errno(ENOTTY);
    }
    if (request != g->request) {
      violations.push_back(std::string(g->name) + " sent as " + hex(request) + ", the uapi header says " + hex(g->request) +
                           " (size or direction differs)");
      return set_errno(EINVAL);
    }
    ++ioctl_counts_[g->nr];
    if (auto it = ioctl_faults_.find(g->nr); it != ioctl_faults_.end() && !it->second.empty()) {
      const int e = it->second.front();
      it->second.erase(it->second.begin());
      last_injected = g->name;
      return set_errno(e);
    }
    // Copy in/out like the driver: min(user size, kernel size), copy-out only on success.
    alignas(8) unsigned char k[128] = {};
    const std::uint32_t usize = abi::ioc_size(request), dir = abi::ioc_dir(request);
    const std::uint32_t n = std::min<std::uint32_t>(usize, g->size);
    if (dir & abi::IOC_WRITE) std::memcpy(k, arg, n);
    const int err = dispatch(fd, g->nr, k);
    if (err) return set_errno(err);
    if (dir & abi::IOC_READ) std::memcpy(arg, k, n);
    return 0;
  }
  void* mmap(void* addr, std::size_t len, int prot, int flags, int fd, std::int64_t offset) {
    if (inject("mmap")) return MAP_FAILED;
    if (!fds_.count(fd)) return fail_map(EBADF);
    if (addr != nullptr || !(flags & MAP_SHARED) || (prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE))
      violations.push_back("unexpected mmap arguments");
    if (offset % page != 0) return fail_map(EINVAL);
    const auto id = static_cast<std::uint32_t>(offset / page);
    auto it = objects_.find(id);
    if (it == objects_.end() || it->second.fd != fd || it->second.freed) return fail_map(EINVAL);
    object& o = it->second;
    if (o.user_map) return fail_map(EBUSY);
    if (o.cpu_map() && len != o.mmapsize) return fail_map(ERANGE);
    if (len == 0 || len > o.mmapsize) return fail_map(EINVAL);
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, o.memfd, 0);
    if (p == MAP_FAILED) return p;
    o.user_map = p;
    o.user_len = len;
    o.user_mapped = true;
    user_maps_[p] = id;
    if (o.cpu_map()) {
      o.gpuaddr = reinterpret_cast<std::uint64_t>(p);
      index_gpu(o.gpuaddr, id, o.size);
    }
    return p;
  }
  int munmap(void* addr, std::size_t len) {
    auto it = user_maps_.find(addr);
    if (it == user_maps_.end()) {
      violations.push_back("munmap of an address the fake never mapped");
      return set_errno(EINVAL);
    }
    object& o = objects_.at(it->second);
    if (len != o.user_len) violations.push_back("munmap length " + std::to_string(len) + " != mapping length " + std::to_string(o.user_len));
    user_maps_.erase(it);
    // The pages stay reserved until the object dies, so a new mapping can never take this GPU
    // address while the object is still referenced (as KGSL keeps the SVM range).
    o.user_mapped = false;
    maybe_destroy(o.id);
    return 0;
  }
  long page_size() { return page; }
  std::int64_t now_ns() { return clock_ns_ += 1000; }

 private:
  static constexpr int O_RDWR_ = 2;
  struct golden {
    std::uint32_t nr, request, size;
    const char* name;
  };
  // kgsl.md §2.1, typed in independently of the launcher's header.
  static constexpr golden goldens_[] = {
      {0x02, 0xC0180902, 24, "IOCTL_KGSL_DEVICE_GETPROPERTY"},
      {0x06, 0x40080906, 8, "IOCTL_KGSL_DEVICE_WAITTIMESTAMP"},
      {0x07, 0x400C0907, 12, "IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID"},
      {0x11, 0xC0080911, 8, "IOCTL_KGSL_CMDSTREAM_READTIMESTAMP"},
      {0x13, 0xC0080913, 8, "IOCTL_KGSL_DRAWCTXT_CREATE"},
      {0x14, 0x40040914, 4, "IOCTL_KGSL_DRAWCTXT_DESTROY"},
      {0x15, 0xC0300915, 48, "IOCTL_KGSL_MAP_USER_MEM"},
      {0x16, 0xC00C0916, 12, "IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID"},
      {0x21, 0x40080921, 8, "IOCTL_KGSL_SHAREDMEM_FREE"},
      {0x32, 0x40180932, 24, "IOCTL_KGSL_SETPROPERTY"},
      {0x33, 0xC0200933, 32, "IOCTL_KGSL_TIMESTAMP_EVENT"},
      {0x34, 0xC0300934, 48, "IOCTL_KGSL_GPUMEM_ALLOC_ID"},
      {0x35, 0xC0080935, 8, "IOCTL_KGSL_GPUMEM_FREE_ID"},
      {0x36, 0xC0480936, 72, "IOCTL_KGSL_GPUMEM_GET_INFO"},
      {0x37, 0x40200937, 32, "IOCTL_KGSL_GPUMEM_SYNC_CACHE"},
      {0x3B, 0xC018093B, 24, "IOCTL_KGSL_PERFCOUNTER_READ"},
      {0x3D, 0xC038093D, 56, "IOCTL_KGSL_SUBMIT_COMMANDS"},
      {0x45, 0xC0300945, 48, "IOCTL_KGSL_GPUOBJ_ALLOC"},
      {0x46, 0x40200946, 32, "IOCTL_KGSL_GPUOBJ_FREE"},
      {0x47, 0xC0300947, 48, "IOCTL_KGSL_GPUOBJ_INFO"},
      {0x48, 0xC0200948, 32, "IOCTL_KGSL_GPUOBJ_IMPORT"},
      {0x49, 0x40100949, 16, "IOCTL_KGSL_GPUOBJ_SYNC"},
      {0x4A, 0xC040094A, 64, "IOCTL_KGSL_GPU_COMMAND"},
  };
  static const golden* find_golden(std::uint32_t request) {
    for (const auto& g : goldens_)
      if (g.nr == abi::ioc_nr(request)) return &g;
    return nullptr;
  }
  static const char* golden_name(std::uint32_t nr) {
    for (const auto& g : goldens_)
      if (g.nr == nr) return g.name;
    return "";
  }

  struct object {
    std::uint32_t id = 0;
    int fd = -1;
    std::uint64_t size = 0, mmapsize = 0, flags = 0, gpuaddr = 0;
    int memfd = -1;
    std::byte* kview = nullptr;  // the fake GPU's view of the pages
    void* user_map = nullptr;
    std::uint64_t user_len = 0;
    bool user_mapped = false;
    bool freed = false;
    bool cpu_map() const { return flags & abi::KGSL_MEMFLAGS_USE_CPU_MAP; }
  };
  struct submission {
    std::uint32_t ts = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ibs;  // gpuaddr, bytes
    std::set<std::uint32_t> objects;                           // referenced objects (for the free check)
    bool hang = false;
  };
  struct context {
    std::uint32_t id = 0;
    int fd = -1;
    std::uint32_t flags = 0;
    std::uint32_t queued = 0, retired = 0;
    std::uint32_t pwr_level = ~0u;
    std::uint32_t reset_status = abi::KGSL_CTX_STAT_NO_ERROR;
    bool invalid = false;
    std::vector<submission> queue;
  };
  struct deferred_free {
    std::uint32_t id, ctx, ts;
  };

  static std::string hex(std::uint64_t v) {
    static constexpr char d[] = "0123456789ABCDEF";
    std::string s;
    do s.insert(s.begin(), d[v & 0xF]); while (v >>= 4);
    return "0x" + s;
  }
  static int set_errno(int e) {
    errno = e;
    return -1;
  }
  static void* fail_map(int e) {
    errno = e;
    return MAP_FAILED;
  }
  bool inject(const char* name) {
    const long n = calls_++;
    if (n != fail_at_) return false;
    last_injected = name;
    fail_at_ = -1;
    errno = fail_errno_;
    return true;
  }

  // --- memory ---
  void index_gpu(std::uint64_t addr, std::uint32_t id, std::uint64_t size) {
    by_gpu_[addr] = id;
    gpu_lo_ = std::min(gpu_lo_, addr);
    gpu_hi_ = std::max(gpu_hi_, addr + size);
  }
  // Most constant-file words are small scalars or zero: reject them before the map lookup.
  bool maybe_gpu(std::uint64_t addr) const { return addr >= gpu_lo_ && addr < gpu_hi_; }
  std::byte* translate(std::uint64_t addr, std::uint64_t bytes) {
    if (!maybe_gpu(addr)) return nullptr;
    auto it = by_gpu_.upper_bound(addr);
    if (it == by_gpu_.begin()) return nullptr;
    --it;
    const object& o = objects_.at(it->second);
    if (addr - o.gpuaddr > o.size || bytes > o.size - (addr - o.gpuaddr)) return nullptr;
    return o.kview + (addr - o.gpuaddr);
  }
  const object* object_at(std::uint64_t addr) const {
    if (!maybe_gpu(addr)) return nullptr;
    auto it = by_gpu_.upper_bound(addr);
    if (it == by_gpu_.begin()) return nullptr;
    --it;
    const object& o = objects_.at(it->second);
    return addr - o.gpuaddr < o.size ? &o : nullptr;
  }
  void release_backing(object& o) {
    if (o.user_map) ::munmap(o.user_map, o.user_len);
    if (o.kview) ::munmap(o.kview, o.mmapsize);
    if (o.memfd >= 0) ::close(o.memfd);
    o.user_map = nullptr;
    o.kview = nullptr;
    o.memfd = -1;
  }
  void maybe_destroy(std::uint32_t id) {
    auto it = objects_.find(id);
    if (it == objects_.end()) return;
    object& o = it->second;
    if (!o.freed || o.user_mapped) return;
    for (const auto& d : deferred_)
      if (d.id == id) return;
    if (o.gpuaddr) {
      by_gpu_.erase(o.gpuaddr);
      freed_ranges_.emplace_back(o.gpuaddr, o.size);
    }
    live_bytes_ -= o.size;
    release_backing(o);
    objects_.erase(it);
  }
  void fire_deferred(std::uint32_t ctx_id) {
    const context& c = contexts_.at(ctx_id);
    std::vector<std::uint32_t> ids;
    std::erase_if(deferred_, [&](const deferred_free& d) {
      if (d.ctx != ctx_id || !timestamp_at_or_after(c.retired, d.ts)) return false;
      ids.push_back(d.id);
      return true;
    });
    for (auto id : ids) maybe_destroy(id);
  }
  void destroy_context_events(std::uint32_t ctx_id) {
    // The driver cancels the context's events on destroy; deferred frees then happen at once.
    std::vector<std::uint32_t> ids;
    std::erase_if(deferred_, [&](const deferred_free& d) {
      if (d.ctx != ctx_id) return false;
      ids.push_back(d.id);
      return true;
    });
    for (auto id : ids) maybe_destroy(id);
  }
  static bool timestamp_at_or_after(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }

  // --- ioctl handlers ---
  int dispatch(int fd, std::uint32_t nr, unsigned char* k) {
    switch (nr) {
      case 0x02: return getproperty(fd, *reinterpret_cast<abi::kgsl_device_getproperty*>(k));
      case 0x32: return setproperty(fd, *reinterpret_cast<abi::kgsl_device_getproperty*>(k));
      case 0x13: return drawctxt_create(fd, *reinterpret_cast<abi::kgsl_drawctxt_create*>(k));
      case 0x14: return drawctxt_destroy(fd, *reinterpret_cast<abi::kgsl_drawctxt_destroy*>(k));
      case 0x45: return gpuobj_alloc(fd, *reinterpret_cast<abi::kgsl_gpuobj_alloc*>(k));
      case 0x46: return gpuobj_free(fd, *reinterpret_cast<abi::kgsl_gpuobj_free*>(k));
      case 0x47: return gpuobj_info(fd, *reinterpret_cast<abi::kgsl_gpuobj_info*>(k));
      case 0x49: return gpuobj_sync(fd, *reinterpret_cast<abi::kgsl_gpuobj_sync*>(k));
      case 0x4A: return gpu_command(fd, *reinterpret_cast<abi::kgsl_gpu_command*>(k));
      case 0x07: return waittimestamp(fd, *reinterpret_cast<abi::kgsl_device_waittimestamp_ctxtid*>(k));
      case 0x16: return readtimestamp(fd, *reinterpret_cast<abi::kgsl_cmdstream_readtimestamp_ctxtid*>(k));
      case 0x06:
      case 0x11: return ENOTTY;  // legacy, not wired in current KGSL
      default:
        violations.push_back(std::string("the fake does not implement ") + golden_name(nr));
        return EINVAL;
    }
  }
  context* find_context(int fd, std::uint32_t id) {
    auto it = contexts_.find(id);
    return it == contexts_.end() || it->second.fd != fd ? nullptr : &it->second;
  }
  int getproperty(int fd, abi::kgsl_device_getproperty& g) {
    if (g.type == abi::KGSL_PROP_DEVICE_INFO) {
      abi::kgsl_devinfo d{};
      d.device_id = 1;
      d.chip_id = chip_id;
      d.mmu_enabled = 1;
      d.gmem_sizebytes = gmem_bytes;
      std::memcpy(reinterpret_cast<void*>(g.value), &d, std::min<std::uint64_t>(g.sizebytes, sizeof d));
      return 0;
    }
    if (g.type == abi::KGSL_PROP_GPU_RESET_STAT) {
      if (g.sizebytes != 4) return EINVAL;
      std::uint32_t id = 0;
      std::memcpy(&id, reinterpret_cast<void*>(g.value), 4);
      context* c = find_context(fd, id);
      if (!c) return EINVAL;
      std::memcpy(reinterpret_cast<void*>(g.value), &c->reset_status, 4);
      c->reset_status = abi::KGSL_CTX_STAT_NO_ERROR;  // reported once
      return 0;
    }
    return EINVAL;
  }
  int setproperty(int fd, abi::kgsl_device_getproperty& g) {
    if (g.type != abi::KGSL_PROP_PWR_CONSTRAINT || g.sizebytes != sizeof(abi::kgsl_device_constraint)) return EINVAL;
    if (reject_power_constraint) return EINVAL;
    abi::kgsl_device_constraint k{};
    std::memcpy(&k, reinterpret_cast<void*>(g.value), sizeof k);
    context* c = find_context(fd, k.context_id);
    if (!c) return EINVAL;
    if (k.type == abi::KGSL_CONSTRAINT_NONE) {
      c->pwr_level = ~0u;
      return 0;
    }
    if (k.type != abi::KGSL_CONSTRAINT_PWRLEVEL || k.size != 4) return EINVAL;
    std::uint32_t level = 0;
    std::memcpy(&level, reinterpret_cast<void*>(k.data), 4);
    if (level > abi::KGSL_CONSTRAINT_PWR_MAX) return EINVAL;
    c->pwr_level = level;
    return 0;
  }
  int drawctxt_create(int fd, abi::kgsl_drawctxt_create& d) {
    using namespace abi;
    if (!(d.flags & KGSL_CONTEXT_PREAMBLE) || !(d.flags & KGSL_CONTEXT_NO_GMEM_ALLOC)) return EINVAL;
    if (d.flags & (KGSL_CONTEXT_SECURE | KGSL_CONTEXT_LPAC)) return EOPNOTSUPP;
    if (contexts_.size() >= 200) return ENOSPC;
    constexpr std::uint32_t accepted =
        KGSL_CONTEXT_SAVE_GMEM | KGSL_CONTEXT_NO_GMEM_ALLOC | KGSL_CONTEXT_CTX_SWITCH | KGSL_CONTEXT_PREAMBLE |
        KGSL_CONTEXT_PER_CONTEXT_TS | KGSL_CONTEXT_USER_GENERATED_TS | KGSL_CONTEXT_NO_FAULT_TOLERANCE |
        KGSL_CONTEXT_PWR_CONSTRAINT | KGSL_CONTEXT_PRIORITY_MASK | KGSL_CONTEXT_IFH_NOP | KGSL_CONTEXT_NO_SNAPSHOT |
        KGSL_CONTEXT_TYPE_MASK | KGSL_CONTEXT_PREEMPT_STYLE_MASK | KGSL_CONTEXT_INVALIDATE_ON_FAULT |
        KGSL_CONTEXT_FAULT_INFO;
    std::uint32_t f = (d.flags & accepted) | KGSL_CONTEXT_PER_CONTEXT_TS;
    if (!(f & KGSL_CONTEXT_PRIORITY_MASK)) f |= context_priority(8);
    context c;
    c.id = next_ctx_++;
    c.fd = fd;
    c.flags = f;
    contexts_[c.id] = c;
    d.flags = f;
    d.drawctxt_id = c.id;
    return 0;
  }
  int drawctxt_destroy(int fd, abi::kgsl_drawctxt_destroy& d) {
    context* c = find_context(fd, d.drawctxt_id);
    if (!c) return EINVAL;
    if (!c->queue.empty()) violations.push_back("context " + std::to_string(c->id) + " destroyed with " +
                                                std::to_string(c->queue.size()) + " submission(s) pending");
    destroy_context_events(c->id);
    contexts_.erase(d.drawctxt_id);
    return 0;
  }
  int gpuobj_alloc(int fd, abi::kgsl_gpuobj_alloc& a) {
    using namespace abi;
    if (a.size == 0 || a.size > 0xFFFFFFFFull) return EINVAL;
    if (a.metadata_len > 64) return EINVAL;
    if (a.flags & KGSL_MEMFLAGS_SECURE) return EOPNOTSUPP;
    const std::uint64_t size = (a.size + static_cast<std::uint64_t>(page) - 1) / static_cast<std::uint64_t>(page) *
                               static_cast<std::uint64_t>(page);
    if (live_bytes_ + size > memory_limit) return ENOMEM;
    constexpr std::uint64_t accepted = KGSL_MEMTYPE_MASK | KGSL_MEMALIGN_MASK | KGSL_MEMFLAGS_GPUREADONLY |
                                       KGSL_CACHEMODE_MASK | KGSL_MEMFLAGS_USE_CPU_MAP | KGSL_MEMFLAGS_IOCOHERENT |
                                       KGSL_MEMFLAGS_FORCE_32BIT | KGSL_MEMFLAGS_GUARD_PAGE;
    object o;
    o.id = next_id_++;
    o.fd = fd;
    o.size = size;
    o.mmapsize = size;
    o.flags = a.flags & accepted;
    if (drop_cpu_map) o.flags &= ~KGSL_MEMFLAGS_USE_CPU_MAP;
    o.memfd = static_cast<int>(::syscall(SYS_memfd_create, "fake-kgsl", 1u /* MFD_CLOEXEC */));
    if (o.memfd < 0 || ::ftruncate(o.memfd, static_cast<off_t>(size)) != 0) return ENOMEM;
    void* k = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, o.memfd, 0);
    if (k == MAP_FAILED) {
      ::close(o.memfd);
      return ENOMEM;
    }
    o.kview = static_cast<std::byte*>(k);
    if (!o.cpu_map()) {  // the GPU address is assigned now, in a range no CPU pointer uses
      o.gpuaddr = next_va_;
      next_va_ += size + static_cast<std::uint64_t>(page);
      index_gpu(o.gpuaddr, o.id, size);
    }
    live_bytes_ += size;
    a.size = size;
    a.mmapsize = size;
    a.flags = o.flags;
    a.id = o.id;
    objects_[o.id] = o;
    return 0;
  }
  int gpuobj_free(int fd, abi::kgsl_gpuobj_free& f) {
    auto it = objects_.find(f.id);
    if (it == objects_.end() || it->second.fd != fd || it->second.freed) return EINVAL;
    if (f.flags & abi::KGSL_GPUOBJ_FREE_ON_EVENT) {
      if (f.type != abi::KGSL_GPU_EVENT_TIMESTAMP || f.len != sizeof(abi::kgsl_gpu_event_timestamp)) return EINVAL;
      abi::kgsl_gpu_event_timestamp ev{};
      std::memcpy(&ev, reinterpret_cast<void*>(f.priv), sizeof ev);
      context* c = find_context(fd, ev.context_id);
      if (!c) return EINVAL;
      it->second.freed = true;
      if (!timestamp_at_or_after(c->retired, ev.timestamp)) deferred_.push_back({f.id, ev.context_id, ev.timestamp});
      maybe_destroy(f.id);
      return 0;
    }
    if (f.flags != 0) return EINVAL;
    for (const auto& [cid, c] : contexts_)
      for (const auto& s : c.queue)
        if (s.objects.count(f.id))
          violations.push_back("GPUOBJ_FREE of object " + std::to_string(f.id) + " still used by timestamp " +
                               std::to_string(s.ts) + " of context " + std::to_string(cid));
    it->second.freed = true;
    maybe_destroy(f.id);
    return 0;
  }
  int gpuobj_info(int fd, abi::kgsl_gpuobj_info& i) {
    if (i.id == 0) return EINVAL;
    auto it = objects_.find(i.id);
    if (it == objects_.end() || it->second.fd != fd || it->second.freed) return EINVAL;
    const object& o = it->second;
    i.gpuaddr = o.gpuaddr;
    i.flags = o.flags;
    i.size = o.size;
    i.va_len = o.mmapsize;
    i.va_addr = 0;
    return 0;
  }
  int gpuobj_sync(int fd, abi::kgsl_gpuobj_sync& s) {
    if (s.obj_len != sizeof(abi::kgsl_gpuobj_sync_obj) || s.count == 0) return EINVAL;
    for (std::uint32_t i = 0; i < s.count; ++i) {
      abi::kgsl_gpuobj_sync_obj o{};
      std::memcpy(&o, reinterpret_cast<const unsigned char*>(s.objs) + i * sizeof o, sizeof o);
      auto it = objects_.find(o.id);
      if (it == objects_.end() || it->second.fd != fd) return EINVAL;
      if (o.op < 1 || o.op > 3 || o.offset > it->second.size || o.length > it->second.size - o.offset) return EINVAL;
    }
    return 0;
  }
  int gpu_command(int fd, abi::kgsl_gpu_command& c) {
    using namespace abi;
    context* ctx = find_context(fd, c.context_id);
    if (!ctx) return EINVAL;
    if (ctx->invalid) return EDEADLK;
    auto triple = [](std::uint64_t list, std::uint32_t size, std::uint32_t n, std::uint32_t expect) {
      if (!list && !size && !n) return true;
      return list && size == expect && n && n <= max_list_entries;
    };
    if (!triple(c.cmdlist, c.cmdsize, c.numcmds, sizeof(kgsl_command_object)) ||
        !triple(c.objlist, c.objsize, c.numobjs, sizeof(kgsl_command_object)) ||
        !triple(c.synclist, c.syncsize, c.numsyncs, sizeof(kgsl_command_syncpoint)) || c.numsyncs > 32)
      return EINVAL;
    submission s;
    for (std::uint32_t i = 0; i < c.numcmds; ++i) {
      kgsl_command_object o{};
      std::memcpy(&o, reinterpret_cast<const unsigned char*>(c.cmdlist) + i * sizeof o, sizeof o);
      if (!(o.flags & (KGSL_CMDLIST_IB | KGSL_CMDLIST_CTXTSWITCH_PREAMBLE | KGSL_CMDLIST_IB_PREAMBLE))) return EINVAL;
      if (o.size == 0 || o.size % 4 || o.size / 4 > max_ib_dwords || o.gpuaddr % 4) return EINVAL;
      if (!translate(o.gpuaddr, o.size)) return EINVAL;
      s.ibs.emplace_back(o.gpuaddr, o.size);
    }
    if (ctx->queued - ctx->retired >= max_inflight_per_context) {
      violations.push_back("more than 48 submissions outstanding on context " + std::to_string(ctx->id));
      return ETIMEDOUT;
    }
    // Only work that stays queued can be freed under the GPU's feet; scan just that.
    if (deferred || stuck)
      for (const auto& [addr, bytes] : s.ibs) prescan(addr, bytes, s.objects);
    s.ts = ++ctx->queued;
    s.hang = std::exchange(hang_next_, false);
    ++submissions_;
    c.timestamp = s.ts;
    ctx->queue.push_back(std::move(s));
    if (!deferred && !stuck) run_until(*ctx, ctx->queued);
    if (std::exchange(eproto_next_, false)) return EPROTO;
    return 0;
  }
  int waittimestamp(int fd, abi::kgsl_device_waittimestamp_ctxtid& w) {
    context* c = find_context(fd, w.context_id);
    if (!c) return EINVAL;
    if (!timestamp_at_or_after(c->queued, w.timestamp)) return EINVAL;
    if (c->invalid) return EDEADLK;
    if (timestamp_at_or_after(c->retired, w.timestamp)) return 0;
    if (stuck) {
      if (w.timeout == 0) {
        violations.push_back("infinite wait on a GPU that never finishes");
        return ETIMEDOUT;
      }
      clock_ns_ += std::int64_t{w.timeout} * 1000000;
      if (complete_on_timeout) {
        stuck = false;
        run_until(*c, c->queued);
        stuck = true;
      }
      return ETIMEDOUT;
    }
    run_until(*c, w.timestamp);
    if (c->invalid) return EDEADLK;
    return 0;
  }
  int readtimestamp(int fd, abi::kgsl_cmdstream_readtimestamp_ctxtid& r) {
    context* c = find_context(fd, r.context_id);
    if (!c) return EINVAL;
    if (r.type == abi::KGSL_TIMESTAMP_CONSUMED || r.type == abi::KGSL_TIMESTAMP_RETIRED) r.timestamp = c->retired;
    else if (r.type == abi::KGSL_TIMESTAMP_QUEUED) r.timestamp = c->queued;
    else return EINVAL;
    return 0;
  }

  // --- the GPU ---
  void run_until(context& c, std::uint32_t ts) {
    while (!c.queue.empty() && timestamp_at_or_after(ts, c.queue.front().ts) && !c.invalid) {
      submission s = std::move(c.queue.front());
      c.queue.erase(c.queue.begin());
      current_ctx_ = &c;
      current_ts_ = s.ts;
      faulted_ = s.hang;
      for (const auto& [addr, bytes] : s.ibs) {
        if (faulted_) break;
        execute(addr, bytes);
      }
      if (faulted_) {
        // Like the driver after a fault: invalidate, drop the queue, retire everything.
        c.invalid = true;
        c.reset_status = abi::KGSL_CTX_STAT_GUILTY_CONTEXT_RESET_EXT;
        c.queue.clear();
        c.retired = c.queued;
      } else {
        c.retired = s.ts;
      }
      fire_deferred(c.id);
    }
    current_ctx_ = nullptr;
  }
  void fault(const std::string& why) {
    if (!faulted_) fault_reasons.push_back(why);
    faulted_ = true;
  }

 public:
  std::vector<std::string> fault_reasons;  // GPU faults the fake raised (not the injected hangs)

 private:
  void violation(const std::string& what) { violations.push_back(what); }

  // Collects the objects an IB references, for the immediate-free check.
  void prescan(std::uint64_t addr, std::uint64_t bytes, std::set<std::uint32_t>& out) {
    const auto* ib = reinterpret_cast<const std::uint32_t*>(translate(addr, bytes));
    if (!ib) return;
    auto add = [&](std::uint64_t a) {
      if (const object* o = object_at(a)) out.insert(o->id);
    };
    add(addr);
    const std::span<const std::uint32_t> s(ib, bytes / 4);
    for (std::size_t at = 0; at < s.size();) {
      const hw::packet p = hw::decode(s, at);
      if (!p.valid) return;
      at = p.end;
      if (p.type7) {
        if (p.opcode == hw::CP_WAIT_REG_MEM && p.count == 6) add(addr64(p.payload[1], p.payload[2]));
        if (p.opcode == hw::CP_EVENT_WRITE && p.count == 4) add(addr64(p.payload[1], p.payload[2]));
        if (p.opcode == hw::CP_LOAD_STATE6_FRAG && p.count == 3) {
          const std::uint64_t src = addr64(p.payload[1], p.payload[2]);
          add(src);
          const auto f = hw::decode_load_state(p.payload[0]);
          if (f.type == hw::ST6_CONSTANTS && f.block == hw::SB6_CS_SHADER)  // buffer pointers live here
            if (const auto* k = reinterpret_cast<const std::uint64_t*>(translate(src, 2048)))
              for (int i = 0; i < 256; ++i) add(k[i]);
        }
      } else {
        for (std::uint32_t i = 0; i + 1 < p.count; ++i) {
          const std::uint32_t r = p.reg + i;
          if (r == hw::SP_CS_BASE || r == hw::SP_CS_PVT_MEM_BASE) add(addr64(p.payload[i], p.payload[i + 1]));
        }
      }
    }
  }
  static std::uint64_t addr64(std::uint32_t lo, std::uint32_t hi) { return std::uint64_t{hi} << 32 | lo; }
  std::uint64_t reg64(std::uint32_t r) const { return addr64(regs_[r], regs_[r + 1]); }
  std::uint32_t* mem32(std::uint64_t addr, const char* what) {
    if (addr % 4) {
      fault(std::string(what) + " at unaligned address " + hex(addr));
      return nullptr;
    }
    auto* p = reinterpret_cast<std::uint32_t*>(translate(addr, 4));
    if (!p) fault(std::string(what) + " at unmapped address " + hex(addr));
    return p;
  }

  // Per-IB state of the invariant checks.
  struct ib_state {
    bool first_packet = true;
    std::uint64_t signal = 0;       // address of the IB's opening CP_WAIT_REG_MEM
    bool invalidated = false;       // CACHE_INVALIDATE since the last dispatch
    bool unflushed = false;         // a dispatch not yet followed by CACHE_FLUSH_TS
    bool idle_since_dispatch = true;
    std::uint32_t shader_units = 0, const_loads = 0, ntex = 0, nsamp = 0, nibo = 0;
    std::uint64_t shader_src = 0, const_src = 0, tex_src = 0, samp_src = 0, ibo_src = 0;
  };

  void execute(std::uint64_t addr, std::uint64_t bytes) {
    const auto* ib = reinterpret_cast<const std::uint32_t*>(translate(addr, bytes));
    if (!ib) return fault("IB at unmapped address " + hex(addr));
    const std::span<const std::uint32_t> s(ib, bytes / 4);
    ib_state st;
    for (std::size_t at = 0; at < s.size();) {
      if (faulted_) return;
      const hw::packet p = hw::decode(s, at);
      if (!p.valid) {
        violation("malformed PM4 at dword " + std::to_string(p.offset) + ": " + p.error);
        return fault("malformed PM4");
      }
      at = p.end;
      if (!p.type7) {
        if (p.count == 0 || std::uint64_t{p.reg} + p.count > hw::register_file) {
          violation("register write " + hex(p.reg) + " x" + std::to_string(p.count) + " out of range");
          continue;
        }
        // Compute state lives in the SP/HLSQ/TPL1 block; anything else is a stray write.
        if (p.reg < 0xA800 || p.reg + p.count > 0xBC00)
          violation("register write " + hex(p.reg) + " outside the A6xx compute register block");
        for (std::uint32_t i = 0; i < p.count; ++i) regs_[p.reg + i] = p.payload[i];
      } else {
        op7(p, st);
      }
      st.first_packet = false;
    }
    if (st.unflushed) violation("dispatch not followed by a CACHE_FLUSH_TS before the end of the IB");
  }

  void expect_count(const hw::packet& p, std::initializer_list<std::uint32_t> ok, const char* name) {
    for (auto n : ok)
      if (p.count == n) return;
    violation(std::string(name) + " with " + std::to_string(p.count) + " payload dwords");
  }

  void op7(const hw::packet& p, ib_state& st) {
    using namespace hw;
    switch (p.opcode) {
      case CP_NOP: return;
      case CP_WAIT_MEM_WRITES: return expect_count(p, {0}, "CP_WAIT_MEM_WRITES");
      case CP_WAIT_FOR_IDLE:
        st.idle_since_dispatch = true;
        return expect_count(p, {0}, "CP_WAIT_FOR_IDLE");
      case CP_SET_MARKER: return expect_count(p, {1}, "CP_SET_MARKER");
      case CP_WAIT_REG_MEM: {
        if (p.count != 6) return expect_count(p, {6}, "CP_WAIT_REG_MEM");
        if (p.payload[0] != WAIT_GE_ON_MEMORY || p.payload[4] != 0xFFFFFFFF)
          violation("CP_WAIT_REG_MEM mode " + hex(p.payload[0]) + " mask " + hex(p.payload[4]) + " is not a >= poll");
        const std::uint64_t a = addr64(p.payload[1], p.payload[2]);
        const std::uint32_t* m = mem32(a, "CP_WAIT_REG_MEM");
        if (!m) return;
        const std::uint32_t ref = p.payload[3];
        if (st.first_packet) {
          st.signal = a;
          // §12.3-7: the wait reference is the value the previous launch wrote (or 0 after a re-base).
          if (ref != *m) violation("wait reference " + std::to_string(ref) + " differs from the signal's value " + std::to_string(*m));
        }
        if (*m < ref) violation("CP_WAIT_REG_MEM deadlock: memory " + std::to_string(*m) + " < reference " + std::to_string(ref));
        return;
      }
      case CP_EVENT_WRITE: {
        if (p.count != 1 && p.count != 4) return expect_count(p, {1, 4}, "CP_EVENT_WRITE");
        const std::uint32_t ev = p.payload[0] & 0xFF;
        if (ev == CACHE_INVALIDATE) st.invalidated = true;
        if (p.count == 4) {
          const std::uint64_t a = addr64(p.payload[1], p.payload[2]);
          if (a == st.signal && st.signal) {
            if (st.unflushed) violation("signal written while a dispatch's results were not flushed");
            if (!st.idle_since_dispatch) violation("signal written without CP_WAIT_FOR_IDLE after the dispatch");
            if (ev != CACHE_FLUSH_TS) violation("signal written by event " + hex(ev) + ", not CACHE_FLUSH_TS");
          }
          if (std::uint32_t* m = mem32(a, "CP_EVENT_WRITE")) __atomic_store_n(m, p.payload[3], __ATOMIC_RELEASE);
        }
        if (ev == CACHE_FLUSH_TS) st.unflushed = false;
        return;
      }
      case CP_REG_TO_MEM: {
        if (p.count != 3) return expect_count(p, {3}, "CP_REG_TO_MEM");
        const std::uint64_t a = addr64(p.payload[1], p.payload[2]);
        if (auto* m = reinterpret_cast<std::uint64_t*>(translate(a, 8))) *m = static_cast<std::uint64_t>(clock_ns_) / 52;
        else fault("CP_REG_TO_MEM to unmapped address " + hex(a));
        return;
      }
      case CP_LOAD_STATE6_FRAG: return load_state(p, st);
      case CP_RUN_OPENCL:
      case CP_EXEC_CS: return run_dispatch(p, st);
      default: violation("unknown PM4 opcode " + hex(p.opcode)); fault("unknown opcode");
    }
  }

  void load_state(const hw::packet& p, ib_state& st) {
    using namespace hw;
    if (p.count != 3) return expect_count(p, {3}, "CP_LOAD_STATE6_FRAG");
    const auto f = decode_load_state(p.payload[0]);
    const std::uint64_t src = addr64(p.payload[1], p.payload[2]);
    const std::uint32_t unit = unit_bytes(f.type, f.block);
    if (f.src != SS6_INDIRECT) return violation("CP_LOAD_STATE6 with a non-indirect source");
    if (!unit) return violation("CP_LOAD_STATE6 of type " + std::to_string(f.type) + " block " + std::to_string(f.block));
    if (f.num_unit == 0) return violation("CP_LOAD_STATE6 of zero units");
    if (src % 4) return violation("CP_LOAD_STATE6 source " + hex(src) + " not 4-byte aligned");
    // The whole source range must lie inside one live object.
    if (!translate(src, std::uint64_t{f.num_unit} * unit))
      return fault("CP_LOAD_STATE6 reads " + std::to_string(f.num_unit * unit) + " bytes at " + hex(src) +
                   " outside any live GPU object");
    if (f.block == SB6_CS_SHADER && f.type == ST6_SHADER) {
      st.shader_units = f.num_unit;
      st.shader_src = src;
    } else if (f.block == SB6_CS_SHADER && f.type == ST6_CONSTANTS) {
      if (f.num_unit != 256) violation("constant load of " + std::to_string(f.num_unit) + " vec4 (expected 256)");
      ++st.const_loads;
      st.const_src = src;
    } else if (f.block == SB6_CS_SHADER && f.type == ST6_UAV) {
      st.nibo = f.num_unit;
      st.ibo_src = src;
    } else if (f.type == ST6_CONSTANTS) {
      st.ntex = f.num_unit;
      st.tex_src = src;
    } else {
      st.nsamp = f.num_unit;
      st.samp_src = src;
    }
  }

  const hw::chip_facts* facts() const {
    for (const auto& c : hw::chips)
      if (c.core_major_minor == chip_id >> 8) return &c;
    return nullptr;
  }

  // The shader: the preload must fit the instruction cache (turnip caps it there; more may hang)
  // and be all of the shader or all of the cache; the hardware fetches the rest on demand, so the
  // whole SP_CS_INSTR_SIZE must be mapped.
  void check_shader(const dispatch_info& d, const hw::chip_facts& chip) {
    if (!d.shader_units) return violation("dispatch without a shader load");
    if (d.shader_units > chip.instr_cache_units)
      violation("shader preload of " + std::to_string(d.shader_units) + " units exceeds the " +
                std::to_string(chip.instr_cache_units) + "-unit instruction cache");
    else if (d.shader_units != std::min(d.instr_size, chip.instr_cache_units))
      violation("shader preload of " + std::to_string(d.shader_units) + " units != min(SP_CS_INSTR_SIZE " +
                std::to_string(d.instr_size) + ", instruction cache " + std::to_string(chip.instr_cache_units) + ")");
    if (d.instr_size == 0) violation("SP_CS_INSTR_SIZE is 0");
    else if (!translate(d.shader, std::uint64_t{d.instr_size} * 128))
      fault("shader of " + std::to_string(d.instr_size) + " units at " + hex(d.shader) + " runs outside any live GPU object");
  }

  // Private memory: each shader processor gets TOTALPVTMEMSIZE bytes from SP_CS_PVT_MEM_BASE on, shared
  // by its fibers at MEMSIZEPERITEM bytes each; fewer bytes than fibers × share means the SPs'
  // regions overlap and kernels that spill or use private arrays corrupt each other's data.
  void check_private_memory(const dispatch_info& d, const hw::chip_facts& chip) {
    if (d.pvt_size & ~(hw::TOTALPVTMEMSIZE.mask() | hw::PERWAVEMEMLAYOUT))
      violation("SP_CS_PVT_MEM_SIZE " + hex(d.pvt_size) + " sets bits outside TOTALPVTMEMSIZE and PERWAVEMEMLAYOUT");
    if (d.pvt_param & ~(hw::MEMSIZEPERITEM.mask() | hw::HWSTACKSIZEPERTHREAD.mask()))
      violation("SP_CS_PVT_MEM_PARAM " + hex(d.pvt_param) + " sets bits outside MEMSIZEPERITEM and HWSTACKSIZEPERTHREAD");
    if (!d.pvt_per_fiber) return;
    const std::uint64_t need = d.pvt_per_fiber * chip.fibers_per_sp;
    if (d.pvt_per_sp < need)
      violation("private memory: SP_CS_PVT_MEM_SIZE gives each shader processor " + std::to_string(d.pvt_per_sp) +
                " bytes, but its " + std::to_string(chip.fibers_per_sp) + " fibers need " + std::to_string(need) +
                " (" + std::to_string(d.pvt_per_fiber) + " each): the regions overlap");
    const std::uint64_t total = d.pvt_per_sp * chip.shader_processors;
    if (!translate(d.stack, total))
      fault("private memory of " + std::to_string(chip.shader_processors) + " shader processors x " +
            std::to_string(d.pvt_per_sp) + " bytes at " + hex(d.stack) + " runs outside any live GPU object");
  }

  void run_dispatch(const hw::packet& p, ib_state& st) {
    using namespace hw;
    const bool exec_cs = p.opcode == CP_EXEC_CS;
    expect_count(p, {exec_cs ? 4u : 1u}, exec_cs ? "CP_EXEC_CS" : "CP_RUN_OPENCL");
    if (p.count < 1) return;
    if (!st.invalidated) violation("dispatch without a CACHE_INVALIDATE since the previous one");
    if (st.unflushed) violation("dispatch while the previous dispatch was not flushed");
    dispatch_info d;
    d.kick = p.opcode;
    d.ndrange0 = regs_[SP_CS_NDRANGE_0];
    if ((d.ndrange0 & 3) != 3) violation("NDRANGE_0 KERNELDIM is not 3");
    d.local[0] = ((d.ndrange0 >> 2) & 0x3FF) + 1;
    d.local[1] = ((d.ndrange0 >> 12) & 0x3FF) + 1;
    d.local[2] = ((d.ndrange0 >> 22) & 0x3FF) + 1;
    for (std::uint32_t i = 0; i < 3; ++i) {
      d.global[i] = regs_[global_size_reg(i)];
      d.groups[i] = regs_[SP_CS_KERNEL_GROUP_X + i];
      if (regs_[global_off_reg(i)] != 0) violation("non-zero GLOBALOFF");
      if (d.global[i] == 0) violation("GLOBALSIZE is 0");
      else if (d.groups[i] != (d.global[i] + d.local[i] - 1) / d.local[i])
        violation("KERNEL_GROUP " + std::to_string(d.groups[i]) + " != ceil(global / local) in dimension " + std::to_string(i));
      if (exec_cs && p.count == 4 && p.payload[1 + i] != d.groups[i]) violation("CP_EXEC_CS group count differs from KERNEL_GROUP");
    }
    d.cs_cntl_0 = regs_[SP_CS_CNTL_0];
    d.cs_cntl_1 = regs_[SP_CS_CNTL_1];
    d.entry = regs_[SP_CS_PROGRAM_COUNTER_OFFSET];
    d.shader = reg64(SP_CS_BASE);
    d.pvt_param = regs_[SP_CS_PVT_MEM_PARAM];
    d.stack = reg64(SP_CS_PVT_MEM_BASE);
    d.pvt_size = regs_[SP_CS_PVT_MEM_SIZE];
    d.pvt_per_fiber = MEMSIZEPERITEM.get(d.pvt_param);
    d.pvt_per_sp = TOTALPVTMEMSIZE.get(d.pvt_size);
    d.stack_offset = regs_[SP_CS_PVT_MEM_STACK_OFFSET];
    d.const_config = regs_[SP_CS_CONST_CONFIG];
    d.const_config_0 = regs_[SP_CS_CONST_CONFIG_0];
    d.wge_cntl = regs_[SP_CS_WGE_CNTL];
    d.config = regs_[SP_CS_CONFIG];
    d.shader_units = st.shader_units;
    d.instr_size = regs_[SP_CS_INSTR_SIZE];
    d.kernargs = st.const_src;
    d.ntex_loaded = st.ntex;
    d.nsamp_loaded = st.nsamp;
    d.nibo_loaded = st.nibo;
    d.context = current_ctx_ ? current_ctx_->id : 0;
    d.timestamp = current_ts_;
    // §12.3-6 launch-state checks.
    if (((d.cs_cntl_0 >> 20) & 1) != ((d.wge_cntl >> 9) & 1)) violation("THREADSIZE differs between SP_CS_CNTL_0 and SP_CS_WGE_CNTL");
    if (const hw::chip_facts* chip = facts()) {
      check_shader(d, *chip);
      check_private_memory(d, *chip);
    } else {
      violation("the fake knows no fiber count or instruction cache for chip " + hex(chip_id));
    }
    if (st.shader_src != d.shader) violation("shader load source differs from SP_CS_BASE");
    if (!st.const_loads) violation("dispatch without a constant load");
    if (!(d.config & 0x100)) violation("SP_CS_CONFIG.ENABLED not set");
    if (((d.config >> 9) & 0xFF) != st.ntex) violation("SP_CS_CONFIG.NTEX differs from the texture descriptors loaded");
    if (((d.config >> 17) & 0x1F) != st.nsamp) violation("SP_CS_CONFIG.NSAMP differs from the samplers loaded");
    if (((d.config >> 22) & 0x7F) != st.nibo) violation("SP_CS_CONFIG.NUAV differs from the UAV descriptors loaded");
    if (st.ntex && reg64(SP_CS_TEXMEMOBJ_BASE) != st.tex_src) violation("SP_CS_TEXMEMOBJ_BASE differs from the texture load");
    if (st.nibo && reg64(SP_CS_UAV_BASE) != st.ibo_src) violation("SP_CS_UAV_BASE differs from the UAV load");
    if (st.nsamp) {
      if (reg64(SP_CS_SAMPLER_BASE) != st.samp_src) violation("SP_CS_SAMPLER_BASE differs from the sampler load");
      if (!object_at(reg64(TPL1_CS_BORDER_COLOR_BASE))) fault("border colour table not mapped");
    }
    if (!object_at(d.stack)) fault("private stack " + hex(d.stack) + " not mapped");
    // Arguments pointing into freed objects would fault on the device.
    const auto* k = freed_ranges_.empty() ? nullptr : reinterpret_cast<const std::uint64_t*>(translate(st.const_src, 2048));
    if (k)
      for (int i = 0; i < 256; ++i)
        for (const auto& [a, n] : freed_ranges_)
          if (k[i] >= a && k[i] - a < n && !object_at(k[i]))
            violation("kernel argument at constant byte " + std::to_string(8 * i) + " points into a freed GPU object");
    st.idle_since_dispatch = false;
    st.unflushed = true;
    st.invalidated = false;
    st.shader_units = st.const_loads = st.ntex = st.nsamp = st.nibo = 0;
    if (record_dispatches) dispatches.push_back(d);
    if (kernel_model) kernel_model(*this, d);
  }

  std::vector<std::uint32_t> regs_;
  std::set<int> fds_;
  std::map<std::uint32_t, object> objects_;
  std::map<std::uint64_t, std::uint32_t> by_gpu_;
  std::uint64_t gpu_lo_ = ~0ull, gpu_hi_ = 0;
  std::map<void*, std::uint32_t> user_maps_;
  std::map<std::uint32_t, context> contexts_;
  std::map<std::uint32_t, std::size_t> ioctl_counts_;
  std::map<std::uint32_t, std::vector<int>> ioctl_faults_;
  std::vector<deferred_free> deferred_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> freed_ranges_;
  context* current_ctx_ = nullptr;
  std::uint32_t current_ts_ = 0;
  bool faulted_ = false, hang_next_ = false, eproto_next_ = false;
  int next_fd_ = 1000;
  std::uint32_t next_id_ = 1, next_ctx_ = 1;
  std::uint64_t next_va_ = 0x7000000000ull;  // fake VA window for non-CPU-map objects
  std::uint64_t live_bytes_ = 0;
  std::size_t submissions_ = 0;
  long calls_ = 0, fail_at_ = -1;
  int fail_errno_ = 0;
  std::int64_t clock_ns_ = 1000000000;
};

}  // namespace uopcg::kgsl::testing
