// The launch API: kernels loaded from Qualcomm program binaries, a queue that launches them on one
// KGSL context with a memory timeline signal, and batches that build their command buffer once and
// are patched in place between submissions (the low-overhead path for repeated graphs).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "device.hpp"
#include "dispatch.hpp"
#include "pm4.hpp"
#include "program.hpp"

namespace uopcg::kgsl {

/// A kernel argument naming a GPU buffer (its address goes into the constant file).
template <class Sys>
kernel_arg buffer_arg(const basic_buffer<Sys>& b, std::uint64_t byte_offset = 0) {
  return buffer_arg(b.gpu_address() + byte_offset);
}

/// A parsed program with its machine code uploaded to GPU memory.
template <class Sys = real_sys>
class basic_kernel {
 public:
  /// `name`: the kernel's function name if known (see parse_program).
  basic_kernel(basic_device<Sys>& dev, std::span<const std::byte> blob, std::string_view name = {})
      : info_(parse_program(blob, name)), layout_(layout_of(info_, dev.traits())), slots_(arg_slots(info_, layout_)) {
    alloc_options o;
    o.gpu_read_only = true;
    o.label = "uopcg-kgsl-shader";
    // The GPU reads whole 128-byte units (preloaded or fetched); a page-rounded allocation covers them.
    shader_ = dev.alloc(std::uint64_t{layout_.instr_units} * 128, o);
    std::memcpy(shader_.data(), info_.image.data(), info_.image.size());
    shader_.flush_for_gpu();
  }
  basic_kernel(basic_device<Sys>& dev, std::span<const std::uint8_t> blob, std::string_view name = {})
      : basic_kernel(dev, std::as_bytes(blob), name) {}

  const program_info& info() const { return info_; }
  const program_layout& layout() const { return layout_; }
  std::span<const arg_slot> slots() const { return slots_; }
  const basic_buffer<Sys>& shader() const { return shader_; }
  const std::string& name() const { return info_.name; }

 private:
  program_info info_;
  program_layout layout_;
  std::vector<arg_slot> slots_;
  basic_buffer<Sys> shader_;
};

struct queue_options {
  context_options context{};
  dispatch_options dispatch{};
  std::uint32_t ring_bytes = 1u << 20;          // command + kernarg ring of single launches
  std::chrono::milliseconds timeout{30000};     // per wait; 0 waits forever
  std::uint32_t max_in_flight = 32;             // submissions outstanding (driver limit 49)
  std::uint32_t rebase_at = 1u << 31;           // timeline re-base point (the GPU compares 32 bits)
};

/// Identifies one submission: the timeline value its IB writes and the KGSL timestamp.
struct submission {
  std::uint32_t value = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t epoch = 0;  // timeline re-base generation
};

template <class Sys>
class basic_batch;
template <class Sys>
class basic_graph;

/// Launches kernels in order on one KGSL context. Each IB waits for the previous one's timeline
/// value, flushes/invalidates caches around the dispatch and writes its own value last (as
/// tinygrad/runtime/ops_qcom.py's QCOMComputeQueue does); the host waits on that memory signal and sleeps in WAITTIMESTAMP_CTXTID meanwhile.
/// Kernels, buffers and batches used with a queue must outlive their in-flight work; the queue
/// waits for everything it submitted before it is destroyed.
template <class Sys = real_sys>
class basic_queue {
 public:
  explicit basic_queue(basic_device<Sys>& dev, const queue_options& o = {})
      : dev_(dev), opts_(o), ctx_(dev_.create_context(o.context)) {
    if (opts_.max_in_flight == 0 || opts_.max_in_flight >= abi::max_inflight_per_context)
      fail_runtime("KGSL queue: max_in_flight must be 1..48");
    if (opts_.rebase_at < 2 || opts_.rebase_at > (1u << 31)) fail_runtime("KGSL queue: rebase_at must be 2..2^31");
    alloc_options a;
    a.label = "uopcg-kgsl-signal";
    signal_ = dev_.alloc(4096, a);  // {timeline value, counter} at 0, flush-event sink at 64
    std::memset(signal_.data(), 0, 128);
    a.label = "uopcg-kgsl-ring";
    ring_ = dev_.alloc(std::max<std::uint32_t>(o.ring_bytes, 64 * 1024), a);
    tracker_.context_id = ctx_.id();
    tracker_.signal = static_cast<const std::uint32_t*>(signal_.data());
    registration_.add(dev_.state_.get(), &tracker_);
    ensure_stack(16 * 1024);
  }
  basic_queue(const basic_queue&) = delete;
  basic_queue& operator=(const basic_queue&) = delete;
  ~basic_queue() {
    if (!lost_ && timeline_ != 0 && wait_core(timeline_, ts_of(timeline_)) == 0) tracker_.submitted_value = 0;
  }

  /// Parses a program binary and uploads its machine code.
  basic_kernel<Sys> load(std::span<const std::byte> blob, std::string_view name = {}) {
    return basic_kernel<Sys>(dev_, blob, name);
  }

  /// One launch: arguments in the program's parameter order (buffers, then scalars, as uopcg
  /// renders them), sizes in work-items. Returns without waiting.
  submission launch(const basic_kernel<Sys>& k, std::span<const kernel_arg> args, const launch_dims& d) {
    check_usable();
    const program_info& p = k.info();
    const program_layout& l = k.layout();
    const geometry_regs g = geometry_of(p, l, d);
    check_args(k, args);
    prepare(l);
    maybe_rebase();
    throttle();
    const std::uint32_t v = timeline_ + 1;
    const std::uint32_t kres = round_up(std::max(l.kernarg_size, constant_file_bytes), 256);
    const std::uint32_t prev_head = head_;
    const std::uint32_t off = ring_alloc(kres + static_cast<std::uint32_t>(max_launch_dwords * 4), v);
    ring_guard guard(*this, prev_head);
    std::byte* base = ring_.bytes() + off;
    const std::uint64_t gbase = ring_.gpu_address() + off;
    fill_kernargs(base, p, l, k.slots(), args);
    pm4::writer w(reinterpret_cast<std::uint32_t*>(base + kres), max_launch_dwords);
    emit_wait(w, signal_address(), timeline_);
    emit_barrier(w, dummy_address());
    emit_dispatch(w, p, l, {gbase, k.shader().gpu_address(), stack_.gpu_address(), border_address()}, g,
                  dummy_address(), opts_.dispatch);
    emit_signal(w, signal_address(), dummy_address(), v);
    ring_.flush_for_gpu();
    return submit_ib(gbase + kres, w.size(), v, &guard);
  }
  submission launch(const basic_kernel<Sys>& k, std::initializer_list<kernel_arg> args, const launch_dims& d) {
    return launch(k, std::span<const kernel_arg>(args.begin(), args.size()), d);
  }

  bool done(const submission& s) const { return s.epoch != epoch_ || signal_value() >= s.value; }
  /// Blocks until `s` completed; throws on timeout or a GPU fault (context reset).
  void wait(const submission& s) {
    if (done(s)) return;
    check(wait_core(s.value, s.timestamp), s.value, s.timestamp);
  }
  /// Waits for everything submitted so far.
  void synchronize() {
    if (timeline_ == 0 || signal_value() >= timeline_) return;
    check(wait_core(timeline_, ts_of(timeline_)), timeline_, ts_of(timeline_));
  }

  std::uint32_t signal_value() const {
    return __atomic_load_n(static_cast<const std::uint32_t*>(signal_.data()), __ATOMIC_ACQUIRE);
  }
  std::uint32_t timeline_value() const { return timeline_; }
  std::uint32_t last_timestamp() const { return ts_of(timeline_); }
  bool lost() const { return lost_; }
  basic_context<Sys>& context() { return ctx_; }
  basic_device<Sys>& device() { return dev_; }
  const queue_options& options() const { return opts_; }
  std::uint64_t signal_address() const { return signal_.gpu_address(); }
  std::uint64_t dummy_address() const { return signal_.gpu_address() + 64; }

 private:
  friend class basic_batch<Sys>;
  friend class basic_graph<Sys>;
  struct ring_entry {
    std::uint32_t begin, end, value;
  };
  // Undoes a ring allocation when the launch fails before the driver queued it.
  struct ring_guard {
    basic_queue& q;
    std::uint32_t head;  // the head before the allocation
    bool armed = true;
    ring_guard(basic_queue& queue, std::uint32_t prev_head) : q(queue), head(prev_head) {}
    ring_guard(const ring_guard&) = delete;
    ring_guard& operator=(const ring_guard&) = delete;
    ~ring_guard() {
      if (armed) {
        q.ring_used_.pop_back();
        q.head_ = head;
      }
    }
  };
  // Registers the work tracker with the device for deferred frees; unregisters on destruction.
  struct registration {
    detail::device_state<Sys>* state = nullptr;
    detail::work_tracker* t = nullptr;
    void add(detail::device_state<Sys>* s, detail::work_tracker* tr) {
      state = s;
      t = tr;
      s->trackers.push_back(tr);
    }
    ~registration() {
      if (state) std::erase(state->trackers, t);
    }
  };

  std::uint64_t border_address() const { return border_ ? border_.gpu_address() : 0; }
  std::uint32_t ts_of(std::uint32_t value) const { return ts_ring_[value % ts_ring_.size()]; }

  void check_usable() const {
    if (lost_)
      fail_runtime("KGSL queue on context " + std::to_string(ctx_.id()) +
                   " is lost after a GPU fault or hang (EDEADLK); create a new queue");
  }
  static void check_args(const basic_kernel<Sys>& k, std::span<const kernel_arg> args) {
    const auto slots = k.slots();
    if (args.size() != slots.size())
      fail_runtime("KGSL kernel '" + k.name() + "' takes " + std::to_string(slots.size()) + " arguments, " +
                   std::to_string(args.size()) + " given");
    for (std::size_t i = 0; i < args.size(); ++i)
      if ((args[i].k == kernel_arg::kind::image) != (slots[i].kind != arg_kind::value))
        fail_runtime("KGSL kernel '" + k.name() + "': argument " + std::to_string(i) + " is a " +
                     detail::kind_name(args[i].k) + " but the parameter is a " + detail::kind_name(slots[i].kind));
  }
  // Private stack and border-colour table the program needs (grown only while idle).
  void prepare(const program_layout& l) {
    ensure_stack(l.stack_bytes);
    if (l.sampler_slots && !border_) {
      alloc_options a;
      a.label = "uopcg-kgsl-border-color";
      border_ = dev_.alloc(4096, a);
      std::memset(border_.data(), 0, 4096);
    }
  }
  void ensure_stack(std::uint32_t bytes) {
    if (stack_ && stack_.size() >= bytes) return;
    synchronize();
    alloc_options a;
    a.label = "uopcg-kgsl-private-stack";
    a.memtype = static_cast<std::uint32_t>(abi::KGSL_MEMTYPE_CL_KERNEL_STACK);
    basic_buffer<Sys> fresh = dev_.alloc(bytes, a);
    stack_ = std::move(fresh);
    ++stack_generation_;
  }
  // The GPU's wait compares 32-bit values unsigned: restart the timeline long before it wraps.
  void maybe_rebase() {
    if (timeline_ + 1 < opts_.rebase_at) return;
    synchronize();
    __atomic_store_n(static_cast<std::uint32_t*>(signal_.data()), 0u, __ATOMIC_RELEASE);
    signal_.flush_for_gpu();
    timeline_ = 0;
    tracker_.submitted_value = 0;
    ++epoch_;
    ring_used_.clear();
    head_ = 0;
  }
  // Keeps at most max_in_flight submissions outstanding (the driver blocks at 49, then fails).
  void throttle() {
    if (timeline_ < opts_.max_in_flight) return;
    const std::uint32_t v = timeline_ - opts_.max_in_flight + 1;
    if (signal_value() < v) check(wait_core(v, ts_of(v)), v, ts_of(v));
  }
  // Claims [head, head+bytes) of the ring for the submission that will write `value`, waiting for
  // the retirement of whatever used that space before. FIFO order means the oldest entries are
  // always the ones just ahead of the head.
  std::uint32_t ring_alloc(std::uint32_t bytes, std::uint32_t value) {
    bytes = round_up(bytes, 256);
    const auto cap = static_cast<std::uint32_t>(ring_.size());
    if (bytes > cap) fail_runtime("KGSL queue: a launch needs " + std::to_string(bytes) + " ring bytes, ring has " + std::to_string(cap));
    std::uint32_t need = 0;
    auto claim = [&](std::uint32_t b, std::uint32_t e) {
      const std::uint32_t sig = signal_value();
      while (!ring_used_.empty()) {
        const ring_entry f = ring_used_.front();
        if (f.value <= sig) {
          ring_used_.pop_front();
          continue;
        }
        if (!(f.begin < e && b < f.end)) break;
        need = std::max(need, f.value);
        ring_used_.pop_front();
      }
    };
    if (head_ + bytes > cap) {
      claim(head_, cap);  // the skipped tail counts as used by this launch
      head_ = 0;
    }
    claim(head_, head_ + bytes);
    if (need && signal_value() < need) check(wait_core(need, ts_of(need)), need, ts_of(need));
    const std::uint32_t at = head_;
    ring_used_.push_back({at, at + bytes, value});
    head_ = at + bytes;
    return at;
  }
  // Submits one IB that writes `value`; on success (or EPROTO, where it was queued anyway) the
  // timeline advances.
  submission submit_ib(std::uint64_t gpu, std::size_t ndwords, std::uint32_t value, ring_guard* guard) {
    const abi::kgsl_command_object cmd{0, gpu, ndwords * 4, abi::KGSL_CMDLIST_IB, 0};
    const submit_result r = ctx_.submit(&cmd, 1);
    if (r.err != 0 && r.err != EPROTO) {
      if (r.err == EDEADLK) lost_ = tracker_.lost = true;
      detail::fail_ioctl(abi::IOCTL_KGSL_GPU_COMMAND, r.err, "context " + std::to_string(ctx_.id()));
    }
    if (guard) guard->armed = false;
    timeline_ = value;
    ts_ring_[value % ts_ring_.size()] = r.timestamp;
    tracker_.submitted_value = value;
    tracker_.last_timestamp = r.timestamp;
    if (r.err == EPROTO) {
      const bool guilty = r.reset_status == abi::KGSL_CTX_STAT_GUILTY_CONTEXT_RESET_EXT ||
                          r.reset_status == abi::KGSL_CTX_STAT_UNKNOWN_CONTEXT_RESET_EXT;
      if (guilty) lost_ = tracker_.lost = true;
      detail::fail_ioctl(abi::IOCTL_KGSL_GPU_COMMAND, EPROTO,
                         "timestamp " + std::to_string(r.timestamp) + " queued on context " + std::to_string(ctx_.id()) +
                             ", reset status " + std::to_string(r.reset_status) + (guilty ? " (guilty: queue lost)" : ""));
    }
    return {value, r.timestamp, epoch_};
  }

  static constexpr int unsignaled = -1;
  // Waits until the signal reaches `value`: read the signal, sleep in the driver on `ts`, retry on
  // EINTR/EAGAIN/short timeouts with the remaining time; at the deadline read the signal once more
  // before reporting ETIMEDOUT (the write may land just as time runs out). Returns 0 or an errno.
  int wait_core(std::uint32_t value, std::uint32_t ts) noexcept {
    if (signal_value() >= value) return 0;
    if (lost_) return EDEADLK;
    Sys& sys = dev_.sys();
    const std::int64_t timeout_ns = static_cast<std::int64_t>(opts_.timeout.count()) * 1000000;
    const std::int64_t deadline = timeout_ns > 0 ? sys.now_ns() + timeout_ns : INT64_MAX;
    for (;;) {
      const std::int64_t now = sys.now_ns();
      if (now >= deadline) return signal_value() >= value ? 0 : ETIMEDOUT;
      std::uint32_t ms = 0;  // 0: the driver waits forever
      if (timeout_ns > 0) ms = static_cast<std::uint32_t>(std::clamp<std::int64_t>((deadline - now + 999999) / 1000000, 1, 0x7FFFFFFF));
      const int e = ctx_.wait_timestamp(ts, ms);
      if (signal_value() >= value) return 0;
      if (e == 0) return unsignaled;
      if (e == EINTR || e == EAGAIN || e == ETIMEDOUT) continue;
      if (e == EDEADLK) lost_ = tracker_.lost = true;
      return e;
    }
  }
  void check(int e, std::uint32_t value, std::uint32_t ts) {
    if (e == 0) return;
    const std::string what = "timeline value " + std::to_string(value) + " (timestamp " + std::to_string(ts) +
                             ", context " + std::to_string(ctx_.id()) + "), signal at " + std::to_string(signal_value());
    if (e == unsignaled)
      fail_runtime("KGSL wait: timestamp retired but the signal was not written: " + what +
                   " -- the command stream did not run to the end");
    if (e == ETIMEDOUT)
      detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, e,
                         what + " not reached within " + std::to_string(opts_.timeout.count()) + " ms");
    detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, e, what);
  }

  // Member order is destruction order reversed: the tracker stays registered while the ring and
  // stack are freed (so they are freed on the last timestamp if work is still in flight), and the
  // context is destroyed after all of the queue's memory.
  basic_device<Sys> dev_;
  queue_options opts_;
  basic_context<Sys> ctx_;
  basic_buffer<Sys> signal_;
  detail::work_tracker tracker_;
  registration registration_;
  basic_buffer<Sys> ring_, stack_, border_;
  std::deque<ring_entry> ring_used_;
  std::uint32_t head_ = 0;
  std::uint32_t timeline_ = 0;
  std::uint32_t epoch_ = 0;
  std::uint32_t stack_generation_ = 0;
  std::array<std::uint32_t, 64> ts_ring_{};
  bool lost_ = false;
};

/// A fixed sequence of launches whose command buffer and kernarg blocks are built once, in GPU
/// memory, and patched in place: set_arg()/set_dims() rewrite a few bytes, submit() rewrites two
/// dwords (the wait reference and the signal value) and makes one GPU_COMMAND for all launches.
/// Patching waits for the batch's previous submission first, since the GPU reads these bytes.
/// The batch must not outlive its queue; its kernels and buffers must outlive its submissions.
template <class Sys = real_sys>
class basic_batch {
 public:
  explicit basic_batch(basic_queue<Sys>& q) : q_(&q) {}

  /// Appends a launch (before the first submit). Returns its index.
  std::size_t add(const basic_kernel<Sys>& k, std::span<const kernel_arg> args, const launch_dims& d) {
    if (built_) fail_runtime("KGSL batch: cannot add launches after the batch was built");
    basic_queue<Sys>::check_args(k, args);
    const geometry_regs g = geometry_of(k.info(), k.layout(), d);
    launches_.push_back({&k, std::vector<kernel_arg>(args.begin(), args.end()), g, 0, {}});
    return launches_.size() - 1;
  }
  std::size_t add(const basic_kernel<Sys>& k, std::initializer_list<kernel_arg> args, const launch_dims& d) {
    return add(k, std::span<const kernel_arg>(args.begin(), args.size()), d);
  }

  /// Replaces argument `index` of launch `launch`.
  void set_arg(std::size_t launch, std::size_t index, const kernel_arg& a) {
    launch_rec& r = at(launch);
    const auto slots = r.k->slots();
    if (index >= slots.size())
      fail_runtime("KGSL batch: kernel '" + r.k->name() + "' has no argument " + std::to_string(index));
    if (!built_) {
      r.args[index] = a;
      return;
    }
    make_idle();
    write_arg(kernargs_.bytes() + r.kernarg_off, r.k->info(), slots[index], index, a);
  }
  /// Replaces the launch size of launch `launch`.
  void set_dims(std::size_t launch, const launch_dims& d) {
    launch_rec& r = at(launch);
    r.geometry = geometry_of(r.k->info(), r.k->layout(), d);
    if (!built_) return;
    make_idle();
    patch_geometry(ib(), r.patch, r.geometry);
  }

  /// Builds the command buffer and kernarg blocks in GPU memory (done by the first submit).
  void build() {
    if (built_) return;
    if (launches_.empty()) fail_runtime("KGSL batch: nothing to submit");
    basic_queue<Sys>& q = *q_;
    std::uint32_t kernarg_total = 0;
    for (auto& r : launches_) {
      q.prepare(r.k->layout());
      r.kernarg_off = kernarg_total;
      kernarg_total += round_up(r.k->layout().kernarg_size, 256);
    }
    const std::size_t bound = wait_dwords + launches_.size() * (barrier_dwords + max_dispatch_dwords) + signal_dwords;
    if (bound > abi::max_ib_dwords)
      fail_runtime("KGSL batch: " + std::to_string(launches_.size()) + " launches exceed one IB's 0xFFFFF dwords");
    alloc_options a;
    a.label = "uopcg-kgsl-batch-kernargs";
    kernargs_ = q.dev_.alloc(std::uint64_t{kernarg_total} + constant_file_bytes, a);  // last block + 4 KiB readable
    a.label = "uopcg-kgsl-batch-ib";
    ib_ = q.dev_.alloc(bound * 4, a);
    for (auto& r : launches_)
      fill_kernargs(kernargs_.bytes() + r.kernarg_off, r.k->info(), r.k->layout(), r.k->slots(), r.args);
    pm4::writer w(ib(), bound);
    wait_ref_ = emit_wait(w, q.signal_address(), 0);
    for (auto& r : launches_) {
      emit_barrier(w, q.dummy_address());
      r.patch = emit_dispatch(w, r.k->info(), r.k->layout(),
                              {kernargs_.gpu_address() + r.kernarg_off, r.k->shader().gpu_address(),
                               q.stack_.gpu_address(), q.border_address()},
                              r.geometry, q.dummy_address(), q.opts_.dispatch);
    }
    signal_at_ = emit_signal(w, q.signal_address(), q.dummy_address(), 0);
    ndwords_ = w.size();
    stack_generation_ = q.stack_generation_;
    kernargs_.flush_for_gpu();
    built_ = true;
  }

  /// Submits all launches as one IB. Returns without waiting.
  submission submit() {
    build();
    basic_queue<Sys>& q = *q_;
    q.check_usable();
    make_idle();
    if (stack_generation_ != q.stack_generation_) {  // a later launch grew the queue's stack
      const std::uint64_t p = q.stack_.gpu_address();
      for (auto& r : launches_) {
        ib()[r.patch.cs_cntl + 7] = pm4::lo(p);
        ib()[r.patch.cs_cntl + 8] = pm4::hi(p);
      }
      stack_generation_ = q.stack_generation_;
    }
    q.maybe_rebase();
    q.throttle();
    const std::uint32_t v = q.timeline_ + 1;
    ib()[wait_ref_] = q.timeline_;
    ib()[signal_at_] = v;
    ib_.flush_for_gpu();
    last_ = q.submit_ib(ib_.gpu_address(), ndwords_, v, nullptr);
    return last_;
  }

  std::size_t size() const { return launches_.size(); }
  bool built() const { return built_; }
  const submission& last() const { return last_; }
  /// The built command buffer (for inspection and tests).
  std::span<const std::uint32_t> commands() const {
    return built_ ? std::span<const std::uint32_t>(static_cast<const std::uint32_t*>(ib_.data()), ndwords_)
                  : std::span<const std::uint32_t>{};
  }

 private:
  struct launch_rec {
    const basic_kernel<Sys>* k;
    std::vector<kernel_arg> args;
    geometry_regs geometry;
    std::uint32_t kernarg_off;
    dispatch_patch patch;
  };
  launch_rec& at(std::size_t i) {
    if (i >= launches_.size())
      fail_runtime("KGSL batch: no launch " + std::to_string(i) + " (batch has " + std::to_string(launches_.size()) + ")");
    return launches_[i];
  }
  std::uint32_t* ib() const { return static_cast<std::uint32_t*>(ib_.data()); }
  void make_idle() {
    if (last_.value != 0 && !q_->done(last_)) q_->wait(last_);
  }

  basic_queue<Sys>* q_;
  std::vector<launch_rec> launches_;
  basic_buffer<Sys> kernargs_, ib_;
  std::size_t ndwords_ = 0, wait_ref_ = 0, signal_at_ = 0;
  std::uint32_t stack_generation_ = 0;
  submission last_{};
  bool built_ = false;
};

using kernel = basic_kernel<real_sys>;
using queue = basic_queue<real_sys>;
using batch = basic_batch<real_sys>;

}  // namespace uopcg::kgsl
