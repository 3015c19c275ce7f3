// RAII objects over the KGSL driver: the device (open + GETPROPERTY), draw contexts
// (DRAWCTXT_CREATE/DESTROY, power constraint), GPU memory (GPUOBJ_ALLOC/FREE/INFO/SYNC + mmap) and
// submission/wait primitives (GPU_COMMAND, WAITTIMESTAMP_CTXTID, READTIMESTAMP_CTXTID).
//
// Every syscall goes through the policy `Sys` (see sys.hpp). Objects share the device's file
// descriptor through a reference-counted state, so a buffer or context may outlive the device
// object that created it; the descriptor closes when the last of them is gone.
// Not thread-safe: use one device (and everything made from it) from one thread at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chip.hpp"
#include "sys.hpp"

namespace uopcg::kgsl {

inline constexpr const char* default_device_path = "/dev/kgsl-3d0";

struct device_options {
  const char* path = default_device_path;
  bool check_chip = true;  // refuse chips missing from chip.hpp's table at open (off: only to inspect properties)
};

/// Options of a draw context. The defaults are tinygrad's flags (0x04008A12); tinygrad/runtime/ops_qcom.py, QCOMDevice.
struct context_options {
  std::uint32_t priority = 8;    // 0 (most urgent) .. 15
  bool power_constraint = true;  // keep the GPU at its top clock while this context submits
  bool fault_tolerance = false;  // false: NO_FAULT_TOLERANCE (no replay, no long-IB watchdog)
  std::uint32_t extra_flags = 0; // OR-ed in as is (e.g. KGSL_CONTEXT_NO_SNAPSHOT)

  constexpr std::uint32_t flags() const {
    using namespace abi;
    std::uint32_t f = KGSL_CONTEXT_PREAMBLE | KGSL_CONTEXT_NO_GMEM_ALLOC | context_priority(priority) |
                      context_preempt_style(KGSL_CONTEXT_PREEMPT_STYLE_FINEGRAIN) | extra_flags;
    if (power_constraint) f |= KGSL_CONTEXT_PWR_CONSTRAINT;
    if (!fault_tolerance) f |= KGSL_CONTEXT_NO_FAULT_TOLERANCE;
    return f;
  }
};
static_assert(context_options{}.flags() == abi::tinygrad_context_flags);

enum class cache_mode : std::uint8_t { write_combine = 0, uncached = 1, write_through = 2, write_back = 3 };

struct alloc_options {
  cache_mode cache = cache_mode::write_combine;
  bool io_coherent = false;    // with write_back: the GPU snoops CPU caches (where supported)
  bool gpu_read_only = false;
  bool cpu_map = true;         // USE_CPU_MAP: the CPU pointer is the GPU address
  std::uint32_t memtype = 0;   // debug usage tag (KGSL_MEMTYPE_*)
  std::string_view label{};    // debug label (<= 64 bytes), visible in the driver's debugfs

  constexpr std::uint64_t flags() const {
    using namespace abi;
    std::uint64_t f = memalign(12) | cachemode(static_cast<std::uint64_t>(cache)) |
                      ((std::uint64_t{memtype} << KGSL_MEMTYPE_SHIFT) & KGSL_MEMTYPE_MASK);
    if (cpu_map) f |= KGSL_MEMFLAGS_USE_CPU_MAP;
    if (gpu_read_only) f |= KGSL_MEMFLAGS_GPUREADONLY;
    if (io_coherent) f |= KGSL_MEMFLAGS_IOCOHERENT;
    return f;
  }
};
static_assert(alloc_options{}.flags() == abi::tinygrad_alloc_flags);

/// Wrap-aware timestamp order: is `a` at or after `b`?
constexpr bool timestamp_reached(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }

namespace detail {

/// What a queue tells the device about its outstanding work, so buffers can defer their free.
struct work_tracker {
  std::uint32_t context_id = 0;
  const std::uint32_t* signal = nullptr;  // GPU-written timeline value
  std::uint32_t submitted_value = 0;      // last value a submission will write
  std::uint32_t last_timestamp = 0;       // its KGSL timestamp
  bool lost = false;                      // context invalidated: nothing will retire
  bool pending() const {
    return !lost && signal && __atomic_load_n(signal, __ATOMIC_ACQUIRE) < submitted_value;
  }
};

template <class Sys>
struct device_state {
  Sys* sys = nullptr;
  int fd = -1;
  std::uint64_t page_size = 4096;
  abi::kgsl_devinfo info{};
  std::vector<work_tracker*> trackers;

  device_state() = default;
  device_state(const device_state&) = delete;
  device_state& operator=(const device_state&) = delete;
  ~device_state() {
    if (fd >= 0) sys->close(fd);
  }

  /// The timestamp event a buffer free must wait for, if any queue still has work in flight.
  /// With work pending on several contexts, all but the newest are waited for here (a free can
  /// carry one event only).
  std::optional<abi::kgsl_gpu_event_timestamp> pending_event() noexcept {
    work_tracker* last = nullptr;
    for (work_tracker* t : trackers) {
      if (!t->pending()) continue;
      if (last) {
        abi::kgsl_device_waittimestamp_ctxtid w{last->context_id, last->last_timestamp, 10000};
        (void)ioctl_errno(*sys, fd, abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, &w);
      }
      last = t;
    }
    if (!last) return std::nullopt;
    return abi::kgsl_gpu_event_timestamp{last->context_id, last->last_timestamp};
  }
};

}  // namespace detail

template <class Sys>
class basic_device;

/// A GPU memory object (GPUOBJ_ALLOC) mapped into this process. Move-only; unmapped and freed on
/// destruction, deferred to the retirement of in-flight work when some queue still has any.
template <class Sys = real_sys>
class basic_buffer {
 public:
  basic_buffer() = default;
  basic_buffer(basic_buffer&& o) noexcept { swap(o); }
  basic_buffer& operator=(basic_buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  ~basic_buffer() { release(); }

  explicit operator bool() const { return state_ != nullptr; }
  void* data() const { return cpu_; }
  std::byte* bytes() const { return static_cast<std::byte*>(cpu_); }
  std::uint64_t gpu_address() const { return gpu_; }
  std::uint64_t size() const { return size_; }          // page-rounded size the driver allocated
  std::uint64_t mmap_size() const { return mmapsize_; }
  std::uint32_t id() const { return id_; }
  std::uint64_t flags() const { return flags_; }        // effective flags echoed by the driver
  /// True until this buffer is freed (destroyed or assigned over); shared with whoever keeps the
  /// buffer's address beyond a call, such as a captured graph, so a freed buffer is noticed.
  std::shared_ptr<const bool> liveness() const { return alive_; }

  /// Whether CPU writes need an explicit clean (and GPU writes an invalidate) to be coherent.
  bool needs_cache_maintenance() const {
    const auto mode = (flags_ & abi::KGSL_CACHEMODE_MASK) >> abi::KGSL_CACHEMODE_SHIFT;
    return mode == abi::KGSL_CACHEMODE_WRITEBACK && !(flags_ & abi::KGSL_MEMFLAGS_IOCOHERENT);
  }
  /// GPUOBJ_SYNC over [offset, offset+length) with KGSL_GPUMEM_CACHE_CLEAN / _INV / _FLUSH.
  void sync(std::uint32_t op, std::uint64_t offset = 0, std::uint64_t length = ~0ull) {
    if (length == ~0ull) length = size_ - offset;
    abi::kgsl_gpuobj_sync_obj obj{offset, length, id_, op};
    abi::kgsl_gpuobj_sync s{reinterpret_cast<std::uint64_t>(&obj), sizeof obj, 1};
    detail::ioctl_or_fail(*state_->sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_SYNC, &s);
  }
  /// Before the GPU reads what the CPU wrote (no-op for write-combined/coherent memory).
  void flush_for_gpu() {
    if (needs_cache_maintenance()) sync(abi::KGSL_GPUMEM_CACHE_CLEAN);
  }
  /// Before the CPU reads what the GPU wrote (no-op for write-combined/coherent memory).
  void invalidate_for_cpu() {
    if (needs_cache_maintenance()) sync(abi::KGSL_GPUMEM_CACHE_INV);
  }
  /// GPUOBJ_INFO: the driver's view of this object.
  abi::kgsl_gpuobj_info info() const {
    abi::kgsl_gpuobj_info i{};
    i.id = id_;
    detail::ioctl_or_fail(*state_->sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_INFO, &i);
    return i;
  }

 private:
  friend class basic_device<Sys>;
  void swap(basic_buffer& o) noexcept {
    std::swap(state_, o.state_);
    std::swap(cpu_, o.cpu_);
    std::swap(gpu_, o.gpu_);
    std::swap(size_, o.size_);
    std::swap(mmapsize_, o.mmapsize_);
    std::swap(flags_, o.flags_);
    std::swap(id_, o.id_);
    std::swap(alive_, o.alive_);
  }
  void release() noexcept {
    if (!state_) return;
    Sys& sys = *state_->sys;
    abi::kgsl_gpuobj_free f{};
    f.id = id_;
    const auto event = state_->pending_event();
    if (event) {
      f.flags = abi::KGSL_GPUOBJ_FREE_ON_EVENT;
      f.priv = reinterpret_cast<std::uint64_t>(&*event);
      f.type = abi::KGSL_GPU_EVENT_TIMESTAMP;
      f.len = sizeof *event;
    }
    // Failures cannot be reported from a destructor; closing the fd reclaims the object anyway.
    (void)detail::ioctl_errno(sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_FREE, &f);
    if (cpu_) sys.munmap(cpu_, mmapsize_);
    state_.reset();
    cpu_ = nullptr;
    if (alive_) *alive_ = false;
    alive_.reset();
  }

  std::shared_ptr<detail::device_state<Sys>> state_;
  std::shared_ptr<bool> alive_;
  void* cpu_ = nullptr;
  std::uint64_t gpu_ = 0, size_ = 0, mmapsize_ = 0, flags_ = 0;
  std::uint32_t id_ = 0;
};

/// Result of a GPU_COMMAND: err 0, or EPROTO with a recovered timestamp (the command was queued but
/// the context had faulted before), or another errno (nothing queued).
struct submit_result {
  int err = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t reset_status = abi::KGSL_CTX_STAT_NO_ERROR;  // from GPU_RESET_STAT after EPROTO
};

/// A KGSL draw context (DRAWCTXT_CREATE). Move-only; destroyed on destruction.
template <class Sys = real_sys>
class basic_context {
 public:
  basic_context() = default;
  basic_context(basic_context&& o) noexcept
      : state_(std::move(o.state_)), id_(std::exchange(o.id_, 0)), flags_(o.flags_) {}
  basic_context& operator=(basic_context&& o) noexcept {
    if (this != &o) {
      destroy();
      state_ = std::move(o.state_);
      id_ = std::exchange(o.id_, 0);
      flags_ = o.flags_;
    }
    return *this;
  }
  ~basic_context() { destroy(); }

  std::uint32_t id() const { return id_; }
  std::uint32_t flags() const { return flags_; }  // as applied by the driver
  explicit operator bool() const { return state_ != nullptr; }

  /// IOCTL_KGSL_GPU_COMMAND over the given IBs. Never throws; see submit_result.
  submit_result submit(const abi::kgsl_command_object* cmds, std::uint32_t count) noexcept {
    abi::kgsl_gpu_command c{};
    c.cmdlist = reinterpret_cast<std::uint64_t>(cmds);
    c.cmdsize = sizeof(abi::kgsl_command_object);
    c.numcmds = count;
    c.context_id = id_;
    submit_result r;
    r.err = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_GPU_COMMAND, &c);
    if (r.err == 0) {
      r.timestamp = c.timestamp;
    } else if (r.err == EPROTO) {
      // Queued, but the driver did not copy the timestamp back (the driver's kgsl.c): recover it.
      abi::kgsl_cmdstream_readtimestamp_ctxtid t{id_, abi::KGSL_TIMESTAMP_QUEUED, 0};
      if (detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID, &t) == 0)
        r.timestamp = t.timestamp;
      r.reset_status = reset_status_nothrow();
    }
    return r;
  }
  /// WAITTIMESTAMP_CTXTID; returns 0 or the errno (EINTR/EAGAIN are returned, not retried, so the
  /// caller can recompute its remaining timeout).
  int wait_timestamp(std::uint32_t timestamp, std::uint32_t timeout_ms) noexcept {
    abi::kgsl_device_waittimestamp_ctxtid w{id_, timestamp, timeout_ms};
    if (state_->sys->ioctl(state_->fd, abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, &w) == 0) return 0;
    return errno != 0 ? errno : EIO;
  }
  /// READTIMESTAMP_CTXTID of type KGSL_TIMESTAMP_RETIRED / _QUEUED / _CONSUMED.
  std::uint32_t read_timestamp(std::uint32_t type = abi::KGSL_TIMESTAMP_RETIRED) const {
    abi::kgsl_cmdstream_readtimestamp_ctxtid t{id_, type, 0};
    detail::ioctl_or_fail(*state_->sys, state_->fd, abi::IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID, &t);
    return t.timestamp;
  }
  /// GETPROPERTY(GPU_RESET_STAT): KGSL_CTX_STAT_*; the driver reports a reset once, then NO_ERROR.
  std::uint32_t reset_status() const {
    std::uint32_t v = id_;
    get_reset_status(v, true);
    return v;
  }

 private:
  friend class basic_device<Sys>;
  std::uint32_t reset_status_nothrow() const noexcept {
    std::uint32_t v = id_;
    return get_reset_status(v, false) == 0 ? v : abi::KGSL_CTX_STAT_UNKNOWN_CONTEXT_RESET_EXT;
  }
  int get_reset_status(std::uint32_t& v, bool throw_on_error) const {
    abi::kgsl_device_getproperty g{abi::KGSL_PROP_GPU_RESET_STAT, reinterpret_cast<std::uint64_t>(&v), sizeof v};
    const int e = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DEVICE_GETPROPERTY, &g);
    if (e && throw_on_error) detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_GETPROPERTY, e, "property GPU_RESET_STAT");
    return e;
  }
  void destroy() noexcept {
    if (!state_) return;
    abi::kgsl_drawctxt_destroy d{id_};
    (void)detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DRAWCTXT_DESTROY, &d);
    state_.reset();
  }

  std::shared_ptr<detail::device_state<Sys>> state_;
  std::uint32_t id_ = 0;
  std::uint32_t flags_ = 0;
};

/// An open /dev/kgsl-3d0 with its device info, gated on the supported chips (chip.hpp).
template <class Sys = real_sys>
class basic_device {
 public:
  explicit basic_device(Sys& sys, const device_options& o = {}) : state_(std::make_shared<detail::device_state<Sys>>()) {
    state_->sys = &sys;
    const long ps = sys.page_size();
    if (ps <= 0 || (ps & (ps - 1)) != 0) fail_runtime("KGSL: sysconf(_SC_PAGESIZE) returned " + std::to_string(ps));
    state_->page_size = static_cast<std::uint64_t>(ps);
    state_->fd = sys.open(o.path, O_RDWR);
    if (state_->fd < 0) {
      const int e = errno;
      fail_runtime(std::string("cannot open ") + o.path + ": " + errno_text(e) +
                   (e == ENOENT ? " -- no KGSL GPU driver on this system"
                                : e == EACCES ? " -- check the device node's mode and groups" : ""));
    }
    get_property(abi::KGSL_PROP_DEVICE_INFO, &state_->info, sizeof state_->info, "DEVICE_INFO");
    if (o.check_chip) {
      if (const std::string why = unsupported_chip_reason(chip()); !why.empty()) fail_runtime(why);
    }
  }
  explicit basic_device(const device_options& o = {})
    requires std::same_as<Sys, real_sys>
      : basic_device(real_sys::instance(), o) {}

  /// Whether the device node can be opened (the probe the example and tools use); never throws.
  static bool available(Sys& sys, const char* path = default_device_path) noexcept {
    const int fd = sys.open(path, O_RDWR);
    if (fd < 0) return false;
    sys.close(fd);
    return true;
  }

  const abi::kgsl_devinfo& info() const { return state_->info; }
  chip_id chip() const { return {state_->info.chip_id}; }
  /// The chip's fiber count and instruction cache; an error naming the chip if it is not supported
  /// (reachable only when the device was opened with check_chip = false).
  const chip_traits& traits() const { return chip_traits_of(chip()); }
  std::uint64_t gmem_size() const { return state_->info.gmem_sizebytes; }
  std::uint64_t page_size() const { return state_->page_size; }
  int fd() const { return state_->fd; }
  Sys& sys() const { return *state_->sys; }

  /// GETPROPERTY into `out` (copies min(size, property size) bytes).
  void get_property(std::uint32_t prop, void* out, std::size_t size, const char* prop_name = nullptr) const {
    abi::kgsl_device_getproperty g{prop, reinterpret_cast<std::uint64_t>(out), size};
    if (const int e = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DEVICE_GETPROPERTY, &g))
      detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_GETPROPERTY, e,
                         prop_name ? std::string("property ") + prop_name : "property " + std::to_string(prop));
  }

  /// DRAWCTXT_CREATE, then (by default) SETPROPERTY(PWR_CONSTRAINT, max level) as a best-effort hint.
  basic_context<Sys> create_context(const context_options& o = {}) {
    abi::kgsl_drawctxt_create c{o.flags(), 0};
    if (const int e = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DRAWCTXT_CREATE, &c))
      detail::fail_ioctl(abi::IOCTL_KGSL_DRAWCTXT_CREATE, e, "flags 0x" + hex(o.flags()));
    basic_context<Sys> ctx;
    ctx.state_ = state_;
    ctx.id_ = c.drawctxt_id;
    ctx.flags_ = c.flags;
    if (o.power_constraint) {
      abi::kgsl_device_constraint_pwrlevel level{abi::KGSL_CONSTRAINT_PWR_MAX};
      abi::kgsl_device_constraint k{abi::KGSL_CONSTRAINT_PWRLEVEL, c.drawctxt_id,
                                    reinterpret_cast<std::uint64_t>(&level), sizeof level};
      abi::kgsl_device_getproperty s{abi::KGSL_PROP_PWR_CONSTRAINT, reinterpret_cast<std::uint64_t>(&k), sizeof k};
      // Only a performance hint: older kernels refuse it (EINVAL), which must not stop a launch.
      (void)detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_SETPROPERTY, &s);
    }
    return ctx;
  }

  /// GPUOBJ_ALLOC of `bytes` (rounded up to pages) and mmap at offset id * page size. With
  /// USE_CPU_MAP (the default) the mapping's address is the GPU address; if the driver drops the
  /// flag, the GPU address comes from GPUOBJ_INFO.
  basic_buffer<Sys> alloc(std::uint64_t bytes, const alloc_options& o = {}) {
    Sys& sys = *state_->sys;
    const std::uint64_t ps = state_->page_size;
    if (bytes == 0) fail_runtime("KGSL: cannot allocate a 0-byte GPU buffer");
    abi::kgsl_gpuobj_alloc a{};
    a.size = (bytes + ps - 1) / ps * ps;
    a.flags = o.flags();
    if (!o.label.empty()) {
      a.metadata = reinterpret_cast<std::uint64_t>(o.label.data());
      a.metadata_len = static_cast<std::uint32_t>(std::min<std::size_t>(o.label.size(), 64));
    }
    if (const int e = detail::ioctl_errno(sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_ALLOC, &a))
      detail::fail_ioctl(abi::IOCTL_KGSL_GPUOBJ_ALLOC, e, std::to_string(a.size) + " bytes");
    basic_buffer<Sys> b;  // owns the id from here on: any failure below frees it
    b.state_ = state_;
    b.alive_ = std::make_shared<bool>(true);
    b.id_ = a.id;
    b.size_ = a.size;
    b.mmapsize_ = a.mmapsize ? a.mmapsize : a.size;
    b.flags_ = a.flags;
    void* p = sys.mmap(nullptr, b.mmapsize_, PROT_READ | PROT_WRITE, MAP_SHARED, state_->fd,
                       static_cast<std::int64_t>(std::uint64_t{a.id} * ps));
    if (p == MAP_FAILED) {
      const int e = errno;
      fail_runtime("mmap of KGSL GPU object " + std::to_string(a.id) + " (" + std::to_string(b.mmapsize_) +
                   " bytes) failed: " + errno_text(e));
    }
    b.cpu_ = p;
    if (a.flags & abi::KGSL_MEMFLAGS_USE_CPU_MAP) {
      b.gpu_ = reinterpret_cast<std::uint64_t>(p);
    } else {
      b.gpu_ = b.info().gpuaddr;
    }
    return b;
  }

 private:
  static std::string hex(std::uint64_t v) {
    std::string s;
    abi::detail::append_hex32(s, static_cast<std::uint32_t>(v));
    return s.substr(2);
  }
  template <class>
  friend class basic_queue;
  std::shared_ptr<detail::device_state<Sys>> state_;
};

using device = basic_device<real_sys>;
using context = basic_context<real_sys>;
using buffer = basic_buffer<real_sys>;

}  // namespace uopcg::kgsl
