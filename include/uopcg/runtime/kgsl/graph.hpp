// Capture and replay of kernel sequences: the KGSL counterpart of tinygrad's HCQ graph
// (tinygrad/runtime/graph/hcq.py, HCQGraph, run on QCOM by ops_qcom.py's QCOMComputeQueue.bind).
//
// A sequence of launches is captured once, with the buffers it uses, into one command buffer and
// one kernel-argument area in GPU memory. Each replay is one GPU_COMMAND: before it, only what
// changed since the previous replay is rewritten in place: the address of a buffer rebound with
// bind() in every argument that uses it, the scalars that read a graph variable whose value
// changed, the launch sizes changed with set_dims(), and the two dwords of the timeline (the wait
// reference and the signal value). Patching waits for the previous replay first, since the GPU
// reads these bytes.
//
// Every buffer and kernel is tracked by its liveness (basic_buffer::liveness), so replaying a graph
// whose buffer or kernel was freed is a named error raised before anything is written or
// submitted; bind() a live buffer in its place and replay again. The graph must not outlive its
// queue.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "device.hpp"
#include "dispatch.hpp"
#include "queue.hpp"

namespace uopcg::kgsl {

/// One argument of a captured launch: a buffer (tracked, rebindable), a constant scalar, a graph
/// variable (a scalar whose value each replay supplies) or an image over a buffer.
struct graph_arg {
  enum class kind : std::uint8_t { buffer, scalar, variable, image } k = kind::scalar;
  std::uint8_t size = 4;                 // scalar / variable width in bytes
  std::uint64_t bits = 0;                // scalar bytes; buffer: byte offset into it
  std::uint32_t var = 0;                 // variable index
  image_view img{};                      // image: size and format (the address comes from the buffer)
  std::uint64_t address = 0, bytes = 0;  // the buffer at capture
  std::shared_ptr<const bool> alive;     // the buffer's liveness
};

template <class Sys>
graph_arg graph_buffer(const basic_buffer<Sys>& b, std::uint64_t byte_offset = 0) {
  graph_arg a;
  a.k = graph_arg::kind::buffer;
  a.size = 8;
  a.bits = byte_offset;
  a.address = b.gpu_address();
  a.bytes = b.size();
  a.alive = b.liveness();
  return a;
}
template <class T>
  requires(std::is_arithmetic_v<T> && sizeof(T) <= 8)
graph_arg graph_scalar(T v) {
  const kernel_arg s = scalar_arg(v);
  graph_arg a;
  a.size = s.size;
  a.bits = s.bits;
  return a;
}
/// A scalar argument read from graph variable `index` (`width` bytes, little-endian) at each replay.
inline graph_arg graph_var(std::uint32_t index, std::uint8_t width = 4) {
  graph_arg a;
  a.k = graph_arg::kind::variable;
  a.var = index;
  a.size = width;
  return a;
}
template <class Sys>
graph_arg graph_image(const basic_buffer<Sys>& b, std::uint32_t width, std::uint32_t height,
                      image_format f = image_format::rgba_f32) {
  graph_arg a = graph_buffer(b);
  a.k = graph_arg::kind::image;
  a.img = {b.gpu_address(), width, height, f};
  return a;
}

template <class Sys = real_sys>
class basic_graph {
 public:
  explicit basic_graph(basic_queue<Sys>& q) : q_(&q) {}
  basic_graph(const basic_graph&) = delete;
  basic_graph& operator=(const basic_graph&) = delete;
  /// Waits for the last replay: its command buffer is freed with the graph.
  ~basic_graph() {
    if (last_.value != 0 && !q_->lost() && !q_->done(last_)) {
      try {
        q_->wait(last_);
      } catch (const error&) {
        // A failed wait (the context was lost) is the queue's to report; the driver defers the free.
      }
    }
  }

  // --- capture -----------------------------------------------------------------------------------

  /// Captures one launch (before the first replay). Arguments in the program's parameter order, as
  /// for basic_queue::launch. Returns the launch's index.
  std::size_t launch(const basic_kernel<Sys>& k, std::span<const graph_arg> args, const launch_dims& d) {
    if (built_) fail_runtime("KGSL graph: cannot capture launches after the first replay");
    if (!k.shader()) fail_runtime("KGSL graph: capture of a kernel that was moved from");
    const std::size_t n = launches_.size();
    const auto slots = k.slots();
    if (args.size() != slots.size())
      fail_runtime("KGSL graph: launch " + std::to_string(n) + " of kernel '" + k.name() + "' takes " +
                   std::to_string(slots.size()) + " arguments, " + std::to_string(args.size()) + " given");
    launch_rec r;
    r.info = k.info();
    r.info.image.clear();  // the code lives in the kernel's shader buffer; the graph keeps what it patches with
    r.layout = k.layout();
    r.slots.assign(slots.begin(), slots.end());
    r.geometry = geometry_of(r.info, r.layout, d);
    r.shader = k.shader().gpu_address();
    r.shader_alive = k.shader().liveness();
    const std::size_t known_buffers = buffers_.size();
    try {
      capture_args(r, n, slots, args);
    } catch (const error&) {
      buffers_.resize(known_buffers);  // a refused capture leaves no trace
      throw;
    }
    // Registered only once the whole launch is accepted.
    for (std::size_t i = 0; i < r.args.size(); ++i) {
      const arg_rec& c = r.args[i];
      const use u{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(i)};
      if (c.k == graph_arg::kind::variable) {
        if (c.index >= vars_.size()) vars_.resize(c.index + 1);
        vars_[c.index].uses.push_back(u);
      } else if (c.k != graph_arg::kind::scalar) {
        buffers_[c.index].uses.push_back(u);
      }
    }
    launches_.push_back(std::move(r));
    return n;
  }
  std::size_t launch(const basic_kernel<Sys>& k, std::initializer_list<graph_arg> args, const launch_dims& d) {
    return launch(k, std::span<const graph_arg>(args.begin(), args.size()), d);
  }

  // --- between replays ---------------------------------------------------------------------------

  /// Distinct buffers captured, in order of first use; bind() takes these indices.
  std::size_t buffer_count() const { return buffers_.size(); }
  /// Variables the captured launches read (the highest index used + 1); replay() takes this many.
  std::size_t var_count() const { return vars_.size(); }
  std::size_t size() const { return launches_.size(); }
  /// The index of a captured buffer (it must be live: a freed buffer has no identity left to look up).
  std::size_t buffer_index(const basic_buffer<Sys>& b) const {
    const auto live = b.liveness();
    for (std::size_t i = 0; i < buffers_.size(); ++i)
      if (live && buffers_[i].alive == live) return i;
    fail_runtime("KGSL graph: the buffer at " + hex(b.gpu_address()) + " is not bound in this graph");
  }

  /// Binds graph buffer `index` to `b` for the next replays: every argument that used the old buffer
  /// uses `b` from then on (at the same byte offset). This is how a reallocated buffer, or a new input
  /// per replay, enters the graph; only the addresses that change are rewritten.
  void bind(std::size_t index, const basic_buffer<Sys>& b) {
    if (index >= buffers_.size())
      fail_runtime("KGSL graph: no buffer " + std::to_string(index) + " (the graph has " + std::to_string(buffers_.size()) + ")");
    if (!b) fail_runtime("KGSL graph: bind of buffer " + std::to_string(index) + " to an empty buffer");
    buffer_rec& r = buffers_[index];
    for (const use& u : r.uses) {
      const arg_rec& a = launches_[u.launch].args[u.arg];
      if (a.bits > b.size() || (a.k == graph_arg::kind::image && image_bytes(a.img) > b.size()))
        fail_runtime(where(u.launch, u.arg, launches_[u.launch].info.name) + " needs " +
                     std::to_string(a.k == graph_arg::kind::image ? image_bytes(a.img) : a.bits) + " bytes of buffer " +
                     std::to_string(index) + "; the buffer bound has " + std::to_string(b.size()));
    }
    r.alive = b.liveness();
    r.address = b.gpu_address();
    r.bytes = b.size();
  }
  /// Changes the launch size of launch `launch` for the next replays.
  void set_dims(std::size_t launch, const launch_dims& d) {
    launch_rec& r = at(launch);
    const geometry_regs g = geometry_of(r.info, r.layout, d);  // refused sizes leave the graph as it was
    r.geometry = g;
    r.dims_dirty = true;
  }

  /// Runs the captured sequence once: one GPU_COMMAND. `vars` holds one value per graph variable.
  /// The first replay builds the command buffer. Returns without waiting.
  submission replay(std::span<const std::uint64_t> vars = {}) {
    basic_queue<Sys>& q = *q_;
    q.check_usable();
    if (launches_.empty()) fail_runtime("KGSL graph: nothing captured");
    if (vars.size() != vars_.size())
      fail_runtime("KGSL graph: replay with " + std::to_string(vars.size()) + " variable values; the graph reads " +
                   std::to_string(vars_.size()));
    check_live();
    if (!built_) {
      build(vars);
    } else {
      make_idle();
      patch(vars);
    }
    if (stack_generation_ != q.stack_generation_) {  // a later launch grew the queue's private stack
      const std::uint64_t p = q.stack_.gpu_address();
      for (launch_rec& r : launches_) {
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
    kernargs_.flush_for_gpu();
    ib_.flush_for_gpu();
    last_ = q.submit_ib(ib_.gpu_address(), ndwords_, v, nullptr);
    return last_;
  }
  submission replay(std::initializer_list<std::uint64_t> vars) {
    return replay(std::span<const std::uint64_t>(vars.begin(), vars.size()));
  }

  bool built() const { return built_; }
  const submission& last() const { return last_; }
  /// The built command buffer (for inspection and tests).
  std::span<const std::uint32_t> commands() const {
    return built_ ? std::span<const std::uint32_t>(ib(), ndwords_) : std::span<const std::uint32_t>{};
  }

 private:
  static constexpr std::uint32_t max_vars = 1u << 16;
  struct use {
    std::uint32_t launch, arg;
  };
  struct buffer_rec {
    std::shared_ptr<const bool> alive;
    std::uint64_t address = 0, bytes = 0;
    std::uint64_t written = 0;  // the address the kernel-argument area holds now
    std::vector<use> uses;
  };
  struct var_rec {
    std::uint64_t written = 0;
    std::vector<use> uses;
  };
  struct arg_rec {
    graph_arg::kind k;
    std::uint8_t size;
    std::uint64_t bits;
    std::uint32_t index;  // variable index, or buffer-table index of a buffer or image
    image_view img;
  };
  struct launch_rec {
    program_info info;  // without the machine code
    program_layout layout;
    std::vector<arg_slot> slots;
    std::vector<arg_rec> args;
    geometry_regs geometry{};
    bool dims_dirty = false;
    std::uint64_t shader = 0;
    std::shared_ptr<const bool> shader_alive;
    std::uint32_t kernarg_off = 0;
    dispatch_patch patch;
  };

  static std::string hex(std::uint64_t v) {
    static constexpr char d[] = "0123456789abcdef";
    std::string s;
    do s.insert(s.begin(), d[v & 0xF]); while (v >>= 4);
    return "0x" + s;
  }
  static std::string where(std::size_t launch, std::size_t arg, const std::string& kernel) {
    return "KGSL graph: launch " + std::to_string(launch) + " ('" + kernel + "') argument " + std::to_string(arg);
  }
  static std::uint64_t image_bytes(const image_view& v) {
    return std::uint64_t{v.width} * v.height * 4 * (v.format == image_format::rgba_f32 ? 4 : 2);
  }
  launch_rec& at(std::size_t i) {
    if (i >= launches_.size())
      fail_runtime("KGSL graph: no launch " + std::to_string(i) + " (the graph has " + std::to_string(launches_.size()) + ")");
    return launches_[i];
  }
  // Buffers are told apart by their liveness flag (one per allocation), not by address: a freed
  // buffer's address may be handed out again.
  std::size_t buffer_index_of(const graph_arg& a) {
    for (std::size_t i = 0; i < buffers_.size(); ++i)
      if (buffers_[i].alive == a.alive) return i;
    buffers_.push_back({a.alive, a.address, a.bytes, a.address, {}});
    return buffers_.size() - 1;
  }
  std::uint32_t* ib() const { return static_cast<std::uint32_t*>(ib_.data()); }
  void make_idle() {
    if (last_.value != 0 && !q_->done(last_)) q_->wait(last_);
  }

  // Everything the command buffer points to must still exist; checked before anything is written.
  void check_live() const {
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const buffer_rec& b = buffers_[i];
      if (b.alive && *b.alive) continue;
      const use& u = b.uses.front();
      fail_runtime("KGSL graph: buffer " + std::to_string(i) + " (" + hex(b.address) + ", " + std::to_string(b.bytes) +
                   " bytes), argument " + std::to_string(u.arg) + " of launch " + std::to_string(u.launch) + " ('" +
                   launches_[u.launch].info.name + "'), was freed; bind() a live buffer to it before replaying");
    }
    for (std::size_t i = 0; i < launches_.size(); ++i)
      if (!*launches_[i].shader_alive)
        fail_runtime("KGSL graph: the kernel '" + launches_[i].info.name + "' of launch " + std::to_string(i) +
                     " was destroyed; kernels must outlive the graphs that captured them");
  }

  // The kernel-argument bytes of argument `i` of launch `r`, with the current bindings and `vars`.
  kernel_arg current(const launch_rec& r, std::size_t i, std::span<const std::uint64_t> vars) const {
    const arg_rec& a = r.args[i];
    switch (a.k) {
      case graph_arg::kind::buffer: return buffer_arg(buffers_[a.index].address + a.bits);
      case graph_arg::kind::image: {
        image_view v = a.img;
        v.address = buffers_[a.index].address;
        return image_arg(v);
      }
      case graph_arg::kind::variable: return {kernel_arg::kind::scalar, a.size, vars[a.index], {}};
      case graph_arg::kind::scalar: break;
    }
    return {kernel_arg::kind::scalar, a.size, a.bits, {}};
  }

  void capture_args(launch_rec& r, std::size_t n, std::span<const arg_slot> slots, std::span<const graph_arg> args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const graph_arg& a = args[i];
      const bool image = a.k == graph_arg::kind::image;
      if (image != (slots[i].kind != arg_kind::value))
        fail_runtime(where(n, i, r.info.name) + " is " + (image ? "an image" : "not an image") + " but the parameter " +
                     (image ? "is not" : "is"));
      arg_rec c{a.k, a.size, a.bits, a.var, a.img};
      if (a.k == graph_arg::kind::buffer || image) {
        if (!a.alive || !*a.alive) fail_runtime(where(n, i, r.info.name) + ": the buffer is empty or freed");
        const std::uint64_t need = image ? image_bytes(a.img) : a.bits;
        if (need > a.bytes)
          fail_runtime(where(n, i, r.info.name) + " needs " + std::to_string(need) + " bytes of a " + std::to_string(a.bytes) + "-byte buffer");
        c.index = static_cast<std::uint32_t>(buffer_index_of(a));
      } else {
        if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
          fail_runtime(where(n, i, r.info.name) + " has width " + std::to_string(a.size));
        if (a.k == graph_arg::kind::variable && a.var >= max_vars)
          fail_runtime(where(n, i, r.info.name) + ": variable index " + std::to_string(a.var) + " is too large");
      }
      r.args.push_back(c);
    }
  }

  void build(std::span<const std::uint64_t> vars) {
    basic_queue<Sys>& q = *q_;
    std::uint32_t kernarg_total = 0;
    for (launch_rec& r : launches_) {
      q.prepare(r.layout);
      r.kernarg_off = kernarg_total;
      kernarg_total += round_up(r.layout.kernarg_size, 256);
    }
    const std::size_t bound = wait_dwords + launches_.size() * (barrier_dwords + max_dispatch_dwords) + signal_dwords;
    if (bound > abi::max_ib_dwords)
      fail_runtime("KGSL graph: " + std::to_string(launches_.size()) + " launches exceed one IB's 0xFFFFF dwords");
    alloc_options a;
    a.label = "uopcg-kgsl-graph-kernargs";
    basic_buffer<Sys> kernargs = q.dev_.alloc(std::uint64_t{kernarg_total} + constant_file_bytes, a);  // last block + 4 KiB readable
    a.label = "uopcg-kgsl-graph-ib";
    basic_buffer<Sys> ibuf = q.dev_.alloc(bound * 4, a);
    std::vector<kernel_arg> args;
    for (launch_rec& r : launches_) {
      args.clear();
      for (std::size_t i = 0; i < r.args.size(); ++i) args.push_back(current(r, i, vars));
      fill_kernargs(kernargs.bytes() + r.kernarg_off, r.info, r.layout, r.slots, args);
    }
    pm4::writer w(static_cast<std::uint32_t*>(ibuf.data()), bound);
    wait_ref_ = emit_wait(w, q.signal_address(), 0);
    for (launch_rec& r : launches_) {
      emit_barrier(w, q.dummy_address());
      r.patch = emit_dispatch(w, r.info, r.layout,
                              {kernargs.gpu_address() + r.kernarg_off, r.shader, q.stack_.gpu_address(), q.border_address()},
                              r.geometry, q.dummy_address(), q.opts_.dispatch);
      r.dims_dirty = false;
    }
    signal_at_ = emit_signal(w, q.signal_address(), q.dummy_address(), 0);
    ndwords_ = w.size();
    kernargs_ = std::move(kernargs);
    ib_ = std::move(ibuf);
    for (buffer_rec& b : buffers_) b.written = b.address;
    for (std::size_t i = 0; i < vars_.size(); ++i) vars_[i].written = vars[i];
    stack_generation_ = q.stack_generation_;
    built_ = true;
  }

  // Rewrites what changed since the previous replay.
  void patch(std::span<const std::uint64_t> vars) {
    std::byte* k = kernargs_.bytes();
    for (buffer_rec& b : buffers_) {
      if (b.written == b.address) continue;
      for (const use& u : b.uses) {
        const launch_rec& r = launches_[u.launch];
        write_arg(k + r.kernarg_off, r.info, r.slots[u.arg], u.arg, current(r, u.arg, vars));
      }
      b.written = b.address;
    }
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      var_rec& v = vars_[i];
      if (v.written == vars[i]) continue;
      for (const use& u : v.uses) {
        const launch_rec& r = launches_[u.launch];
        write_arg(k + r.kernarg_off, r.info, r.slots[u.arg], u.arg, current(r, u.arg, vars));
      }
      v.written = vars[i];
    }
    for (launch_rec& r : launches_) {
      if (!r.dims_dirty) continue;
      patch_geometry(ib(), r.patch, r.geometry);
      r.dims_dirty = false;
    }
  }

  basic_queue<Sys>* q_;
  std::vector<launch_rec> launches_;
  std::vector<buffer_rec> buffers_;
  std::vector<var_rec> vars_;
  basic_buffer<Sys> kernargs_, ib_;
  std::size_t ndwords_ = 0, wait_ref_ = 0, signal_at_ = 0;
  std::uint32_t stack_generation_ = 0;
  submission last_{};
  bool built_ = false;
};

using graph = basic_graph<real_sys>;

}  // namespace uopcg::kgsl
