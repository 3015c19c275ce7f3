// uopcg single header runtime/beam_search.hpp: the optional header include/uopcg/runtime/beam_search.hpp (its comment says what it needs).
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/uopcg.hpp.
// Includes single_include/uopcg/runtime/beam_cache.hpp.
// Includes single_include/uopcg/runtime/opencl.hpp.
// Includes single_include/uopcg/runtime/thread_pool.hpp.
// Inlined, in order: 1 headers from include/
//   uopcg/runtime/beam_search.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/runtime/beam_search.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_BEAM_SEARCH_HPP
#define UOPCG_SINGLE_RUNTIME_BEAM_SEARCH_HPP
// BEAM search on an OpenCL device (tinygrad/codegen/opt/search.py: beam_search, _try_compile,
// _time_program): codegen/opt/beam.hpp's search with a timer that compiles each round's candidates
// on a thread pool (uopcg's back half and emitter, then the OpenCL build), leaves out programs
// already timed, and times the others one at a time with profiling events: up to `runs` launches,
// shrunk to at most 65536 work-groups (the time scaled back up), cut short once a run is slower than
// three times the best so far; a candidate's time is its fastest run.
//
// Unlike tinygrad (which times on uninitialized buffers and checks nothing), every candidate first
// runs once, full size, on the same random inputs as the starting kernel, and one whose outputs
// differ from the starting kernel's is left out with a warning. Results are kept in the persistent
// cache (beam_cache.hpp), keyed by the kernel, the search's knobs, the target and the device.
//
// The back half comes in as a ProgramCompiler (codegen::to_program, or a wrapper), so that this
// header does not pull every stage's rule sets into each file that includes it.

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include "../uopcg.hpp"  // single_include/uopcg/uopcg.hpp
#include "beam_cache.hpp"  // single_include/uopcg/runtime/beam_cache.hpp
#include "opencl.hpp"  // single_include/uopcg/runtime/opencl.hpp
#include "thread_pool.hpp"  // single_include/uopcg/runtime/thread_pool.hpp

namespace uopcg::opencl {

/// The back half for one kernel: its post-opts graph to the linearized program (in the graph's
/// arena). Called from the pool's threads, each candidate in an arena of its own.
using ProgramCompiler = std::function<std::vector<UOp>(UOp post_opts, const Target& target)>;

struct BeamSearchOptions {
  codegen::opt::BeamOptions beam;  // width, the action knobs, the seed of the random inputs
  double budget_s = 0;             // wall-clock limit, 0: none; a search stopped by it is not cached
  std::size_t threads = 0;         // codegen and build threads, 0: hardware_concurrency
  int runs = 3;                    // launches timed per candidate (tinygrad's cnt)
  bool test_size = true;           // BEAM_ESTIMATE: time a launch of at most max_test_groups work-groups
  std::int64_t max_test_groups = 65536;
  std::size_t uops_max = 3000;     // BEAM_UOPS_MAX: longer programs are left out
  bool verify = true;              // compare each candidate's outputs with the starting kernel's
  double rtol = 1e-3, atol = 1e-3; // float32 and float64 outputs (16-bit floats: 1e-2 both)
  bool cache = true;               // read and write the persistent cache
  std::optional<std::filesystem::path> cache_dir;  // default: BeamCache::default_dir()
  bool progress = true;            // a progress line on stderr, when stderr is a terminal
  std::FILE* warnings = stderr;    // wrong outputs, compile failures, cache problems (nullptr: none)
};

struct BeamSearchStats {
  std::size_t rounds = 0, candidates = 0;  // kernels the actions gave
  std::size_t compiled = 0;                // through the back half
  std::size_t duplicates = 0;              // the same program as one built before
  std::size_t over_limits = 0;             // too many uops, or 1000x the least compute
  std::size_t built = 0, timed = 0;
  std::size_t wrong = 0;                   // outputs differ from the starting kernel's
  std::size_t failed = 0;                  // codegen, build or launch errors
  std::string first_failure;               // the first of those: its opts and message
  double wall_s = 0;
  double codegen_s = 0, build_s = 0, time_s = 0;  // wall time of each phase (build_s: build and check)
  bool from_cache = false;
  bool stopped = false;  // the budget ran out
};

struct BeamSearchResult {
  codegen::opt::Scheduler best;  // the starting kernel with the opts found
  double best_us = std::numeric_limits<double>::infinity();
  BeamSearchStats stats;
};

namespace detail::beam {

using clock = std::chrono::steady_clock;

inline double seconds_since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }

/// The value type of a buffer parameter (half for an emulated half buffer stored as ushort).
inline DType value_dtype(const render::KernelParam& p) { return p.logical_dtype ? *p.logical_dtype : p.dtype; }

inline std::uint16_t half_bits(float f) {  // exact for the normal values random_bytes makes
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  if ((x & 0x7fffffffu) == 0) return static_cast<std::uint16_t>(sign);
  const std::int32_t exp = static_cast<std::int32_t>((x >> 23) & 0xff) - 127 + 15;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exp) << 10) | ((x >> 13) & 0x3ffu));
}
inline double half_value(std::uint16_t h) {
  const int exp = (h >> 10) & 31, mant = h & 1023;
  double v = exp == 0 ? std::ldexp(mant, -24) : exp == 31 ? (mant ? std::nan("") : INFINITY) : std::ldexp(mant + 1024, exp - 25);
  return (h >> 15) ? -v : v;
}

/// Random contents for a buffer parameter: floats k/1024 in [-1, 1) (exact in every float type),
/// integers in [-8, 8) ([0, 16) unsigned), booleans 0/1.
inline std::vector<std::byte> random_bytes(const render::KernelParam& p, std::mt19937_64& rng) {
  const DType dt = value_dtype(p);
  const auto count = static_cast<std::size_t>(p.size), itemsize = static_cast<std::size_t>(p.itemsize);
  std::vector<std::byte> out(count * itemsize);
  std::uniform_int_distribution<int> k(-1024, 1023), small(-8, 7), nibble(0, 15), bit(0, 1);
  for (std::size_t i = 0; i < count; ++i) {
    std::byte* p = out.data() + i * itemsize;
    auto put = [&](auto v) { std::memcpy(p, &v, std::min(sizeof v, itemsize)); };
    const float f = static_cast<float>(k(rng)) / 1024.0f;
    switch (dt) {
      case DType::float32: put(f); break;
      case DType::float64: put(static_cast<double>(f)); break;
      case DType::float16: put(half_bits(f)); break;
      case DType::bfloat16: put(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16)); break;
      case DType::bool_: put(static_cast<std::uint8_t>(bit(rng))); break;
      case DType::int8: case DType::int16: case DType::int32: case DType::int64:
        put(static_cast<std::int64_t>(small(rng)));  // little-endian: the low bytes hold the value
        break;
      default: put(static_cast<std::uint64_t>(nibble(rng))); break;
    }
  }
  return out;
}

/// Element i of a float buffer, as a double.
inline double float_at(const std::vector<std::byte>& b, DType dt, std::size_t i) {
  switch (dt) {
    case DType::float32: { float f; std::memcpy(&f, b.data() + 4 * i, 4); return f; }
    case DType::float64: { double d; std::memcpy(&d, b.data() + 8 * i, 8); return d; }
    case DType::float16: { std::uint16_t h; std::memcpy(&h, b.data() + 2 * i, 2); return half_value(h); }
    default: {  // bfloat16: the high half of a float
      std::uint16_t h;
      std::memcpy(&h, b.data() + 2 * i, 2);
      return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
    }
  }
}

/// The first element where `got` differs from `want` (floats within rtol/atol), described.
inline std::optional<std::string> first_difference(const std::vector<std::byte>& got, const std::vector<std::byte>& want,
                                                   DType dt, std::size_t itemsize, double rtol, double atol) {
  if (got.size() != want.size()) return "the buffers differ in size";
  const bool is_f = dt == DType::float32 || dt == DType::float64 || dt == DType::float16 || dt == DType::bfloat16;
  if (dt == DType::float16 || dt == DType::bfloat16) rtol = atol = 1e-2;
  for (std::size_t i = 0; i * itemsize < got.size(); ++i) {
    if (!is_f) {
      if (std::memcmp(got.data() + i * itemsize, want.data() + i * itemsize, itemsize) != 0)
        return "element " + std::to_string(i) + " differs";
      continue;
    }
    const double g = float_at(got, dt, i), w = float_at(want, dt, i);
    if ((std::isnan(g) && std::isnan(w)) || g == w || std::abs(g - w) <= atol + rtol * std::abs(w)) continue;
    return "element " + std::to_string(i) + ": " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return std::nullopt;
}

/// tinygrad's Estimates.ops, roughly: ALU operations times the trip counts of the loops and launch
/// dimensions around them, index arithmetic excluded (renderer/__init__.py, Estimates.from_uops).
inline double estimated_ops(std::span<const UOp> program) {
  std::set<node_id> indexing;
  for (UOp u : program) {
    if (u.op() != Ops::INDEX && u.op() != Ops::SHRINK) continue;
    std::vector<UOp> srcs;
    for (std::size_t i = 1; i < u.nsrc(); ++i) srcs.push_back(u.src(i));
    for (UOp x : toposort(std::span<const UOp>(srcs), [](UOp y) { return y.op() != Ops::END; })) indexing.insert(x.id());
  }
  double mults = 1, ops = 0;
  std::vector<double> stack;
  for (UOp u : program) {
    if (u.op() == Ops::RANGE) {
      stack.push_back(mults);
      if (u.dtype() != DType::void_) mults *= static_cast<double>(u.src(0).vmax());
    } else if (u.op() == Ops::END) {
      if (!stack.empty()) mults = stack.back(), stack.pop_back();
    } else if (u.op() == Ops::SPECIAL) {
      mults *= static_cast<double>(u.src(0).vmax());
    } else if (GroupOp::ALU.contains(u.op()) && !indexing.count(u.id())) {
      double lanes = 1;
      if (auto s = u.shape(); s.has_value() && !s.ill_formed())
        for (std::size_t i = 0; i < s.size(); ++i) lanes *= static_cast<double>(s[i]);
      ops += mults * lanes * (u.op() == Ops::MULACC ? 2 : 1);
    }
  }
  return ops;
}

/// A kernel through the back half and the emitter, or the error that stopped it.
struct Compiled {
  std::optional<render::RenderedKernel> kernel;
  std::size_t uops = 0;
  double ops = 0;
  std::string error;
};
inline Compiled compile(const ProgramCompiler& compile_program, UOp post_opts, const Target& target) {
  Compiled c;
  try {
    const std::vector<UOp> program = compile_program(post_opts, target);
    c.uops = program.size();
    c.ops = estimated_ops(program);
    c.kernel = render::render_opencl(program, target.renderer);
  } catch (const std::exception& e) {
    c.error = e.what();
  }
  return c;
}

/// The value a search times the kernel's variable `p` at: the middle of its bounds, as tinygrad's
/// BEAM does (the launch sizes follow it; the buffers are sized for the largest value). The rendered
/// parameter's bounds: the graph's PARAM of a tinygrad Variable has slot -1, the emitter numbers it.
inline std::int32_t var_timing_value(const render::KernelParam& p) {
  if (p.var_max >= std::numeric_limits<std::int32_t>::max() || p.var_max < p.var_min)
    fail_runtime("beam search: the kernel's variable " + std::string(p.var_name.empty() ? p.name.view() : p.var_name.view()) +
                 " has no bounds (a PARAM in the ALU address space needs vmin_vmax)");
  return static_cast<std::int32_t>((p.var_min + p.var_max) / 2);
}

/// No warnings: the emitter's `if ((a==b))` (tinygrad's text) draws clang's parentheses-equality
/// warning, which PoCL prints on stderr for every such candidate.
inline constexpr std::string_view build_options = "-w";

/// Kernels of one round as the source of one program: the lines before their `__kernel` (the
/// emitter's pragma and helper functions) once each, then every kernel.
inline std::string one_program(std::span<const render::RenderedKernel* const> kernels) {
  std::vector<std::string> head;
  std::string body;
  for (const render::RenderedKernel* k : kernels) {
    std::string_view src = k->source.view();
    const std::size_t at = src.find("__kernel void ");
    if (at == std::string_view::npos) fail_runtime("beam search: a rendered kernel without `__kernel void`");
    for (std::string_view pre = src.substr(0, at); !pre.empty();) {
      const std::size_t nl = pre.find('\n');
      const std::string line(pre.substr(0, nl));
      if (std::find(head.begin(), head.end(), line) == head.end()) head.push_back(line);
      pre.remove_prefix(nl == std::string_view::npos ? pre.size() : nl + 1);
    }
    // the kernel's own name (rendered as "test") becomes its function_name
    const std::size_t open = src.find('(', at);
    body.append("__kernel void ").append(k->function_name.view()).append(src.substr(open)).append("\n");
  }
  std::string out;
  for (const std::string& line : head) out.append(line).append("\n");
  return out + body;
}

inline std::string first_line(std::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

/// The work-group counts tinygrad times with (get_test_global_size): the last dimension above 16
/// halved until at most `max_groups` remain; and the factor the time is scaled by.
inline std::pair<std::array<std::int64_t, 3>, double> test_size(std::array<std::int64_t, 3> groups, std::int64_t max_groups) {
  auto prod = [](const std::array<std::int64_t, 3>& g) {
    return static_cast<double>(g[0]) * static_cast<double>(g[1]) * static_cast<double>(g[2]);
  };
  const double full = prod(groups);
  while (prod(groups) > static_cast<double>(max_groups)) {
    int d = 2;
    while (d >= 0 && groups[static_cast<std::size_t>(d)] <= 16) --d;
    if (d < 0) break;
    groups[static_cast<std::size_t>(d)] /= 2;
  }
  return {groups, full / prod(groups)};
}

/// Launch sizes as clEnqueueNDRangeKernel takes them: work-items in all, and per work-group (none:
/// the driver chooses).
struct NDRange {
  std::array<std::size_t, 3> global{};
  std::optional<std::array<std::size_t, 3>> local;
};
inline NDRange ndrange(const render::RenderedKernel::LaunchSizes& sizes) {
  NDRange r;
  const std::array<std::int64_t, 3> g = sizes.global_work_size();
  if (sizes.local_size) r.local.emplace();
  for (std::size_t d = 0; d < 3; ++d) {
    r.global[d] = static_cast<std::size_t>(g[d]);
    if (r.local) (*r.local)[d] = static_cast<std::size_t>((*sizes.local_size)[d]);
  }
  return r;
}

/// A command queue of its own, for a thread that runs a kernel beside others: blocking writes and
/// reads, a full-size launch waited for.
class Queue {
 public:
  explicit Queue(const Context& ctx) {
    cl_int err = CL_SUCCESS;
    q_ = handle(clCreateCommandQueue(ctx.get(), ctx.device().id(), 0, &err));
    check(err, "clCreateCommandQueue");
  }
  void write(const Buffer& b, const std::vector<std::byte>& data) {
    check(clEnqueueWriteBuffer(q_.get(), b.get(), CL_TRUE, 0, data.size(), data.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
  }
  std::vector<std::byte> read(const Buffer& b) {
    std::vector<std::byte> out(b.size());
    check(clEnqueueReadBuffer(q_.get(), b.get(), CL_TRUE, 0, out.size(), out.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    return out;
  }
  /// One launch of `k` at `sizes` (render::RenderedKernel::launch_sizes: a size that depends on a
  /// variable follows the value the kernel's argument gets).
  void launch(const Kernel& k, const render::RenderedKernel::LaunchSizes& sizes) {
    const NDRange r = ndrange(sizes);
    check(clEnqueueNDRangeKernel(q_.get(), k.get(), 3, nullptr, r.global.data(), r.local ? r.local->data() : nullptr, 0,
                                 nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clFinish(q_.get()), "clFinish");
  }

 private:
  using handle = opencl::detail::cl_handle<cl_command_queue, clReleaseCommandQueue>;
  handle q_;
};

/// One line on stderr, rewritten in place, when stderr is a terminal.
class ProgressLine {
 public:
  explicit ProgressLine(bool wanted) : on_(wanted && ::isatty(::fileno(stderr))) {}
  ~ProgressLine() { clear(); }
  void show(const std::string& s, bool force = false) {
    if (!on_) return;
    const auto now = clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(50)) return;
    last_ = now;
    std::fprintf(stderr, "\r%s\x1b[K", s.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
  clock::time_point last_{};
};

}  // namespace detail::beam

/// BEAM search on one OpenCL context. Not for concurrent use: one search at a time.
class BeamSearch {
 public:
  BeamSearch(const Context& ctx, ProgramCompiler compile, BeamSearchOptions options = {})
      : ctx_(&ctx), compile_(std::move(compile)), options_(std::move(options)), pool_(options_.threads) {
    if (!compile_) fail_runtime("BeamSearch: no program compiler given");
    if (options_.runs < 1) fail_runtime("BeamSearch: runs must be at least 1");
  }

  const BeamSearchOptions& options() const { return options_; }
  const Context& context() const { return *ctx_; }
  /// Threads compiling and building candidates (the caller included).
  std::size_t threads() const { return pool_.size(); }

  /// The best opts for `start` (a Scheduler after convert_loop_to_global): from the cache, else by
  /// searching (width: the options' unless given). Fails (uopcg::error) when the starting kernel
  /// does not compile or run.
  BeamSearchResult search(const codegen::opt::Scheduler& start, std::optional<std::size_t> width = std::nullopt) {
    const auto t0 = detail::beam::clock::now();
    BeamSearchOptions o = options_;
    if (width) o.beam.width = *width;
    if (o.beam.width < 1) fail_runtime("beam search: the beam width must be at least 1");
    BeamSearchStats stats;
    const detail::beam::Compiled first = compile_start(start);
    const std::string key = cache_key(start, o, first);
    std::optional<runtime::BeamCache> cache;
    if (o.cache) {
      cache.emplace(o.cache_dir ? *o.cache_dir : runtime::BeamCache::default_dir(), o.warnings);
      if (std::optional<runtime::BeamCacheEntry> hit = cache->load(key)) {
        if (std::optional<codegen::opt::Scheduler> k = replay(start, hit->opts)) {
          stats.from_cache = true;
          stats.wall_s = detail::beam::seconds_since(t0);
          return BeamSearchResult{std::move(*k), hit->best_us, stats};
        }
        warn("the cached opts " + codegen::opt::opts_text(hit->opts).str() + " do not apply to the kernel: searching again");
      }
    }
    Session session(*this, start, o, first, stats, t0);
    const codegen::opt::BeamResult r = codegen::opt::beam_search(
        start, o.beam, [&](std::span<const codegen::opt::Scheduler> c, const codegen::opt::BeamRound& round) {
          return session.time_round(c, round);
        });
    session.finish();
    stats.rounds = r.rounds;
    stats.candidates = r.candidates;
    stats.stopped = r.stopped;
    stats.wall_s = detail::beam::seconds_since(t0);
    if (stats.failed)
      warn(std::to_string(stats.failed) + " candidate(s) did not compile or run; the first: " + stats.first_failure);
    if (cache && !r.stopped) cache->store(key, runtime::BeamCacheEntry{r.best.applied_opts(), r.best_us});
    return BeamSearchResult{r.best, r.best_us, std::move(stats)};
  }

  /// apply_opts' search hook: OptsRequest::beam_search(width, search.opt_search()). The BeamSearch
  /// must outlive the request.
  codegen::opt::OptSearch opt_search() {
    return [this](const codegen::opt::Scheduler& s, std::int64_t width) -> codegen::opt::OptResult<codegen::opt::Scheduler> {
      if (width < 1) fail_runtime("beam search: the beam width must be at least 1, not " + std::to_string(width));
      return search(s, static_cast<std::size_t>(width)).best;
    };
  }

  /// The cache key of a search from `start`: the kernel's structural hash and applied opts, the
  /// knobs that change the result, the target (its renderer and the starting kernel's source, which
  /// every codegen setting shows in) and the device.
  std::string cache_key(const codegen::opt::Scheduler& start, std::optional<std::size_t> width = std::nullopt) const {
    BeamSearchOptions o = options_;
    if (width) o.beam.width = *width;
    return cache_key(start, o, compile_start(start));
  }

  /// Median device times, in microseconds, of the kernels of post-opts graphs (all in the target's
  /// terms), launched in turn `runs` times each after one warm-up launch, on random inputs: a fair
  /// comparison of opt choices (each launch full size; no early stop).
  std::vector<double> median_times(std::span<const UOp> post_opts, const Target& target, int runs) const {
    if (runs < 1) fail_runtime("median_times: runs must be at least 1");
    std::vector<std::unique_ptr<CompiledKernel>> kernels;
    std::map<std::int64_t, std::unique_ptr<Buffer>> buffers;
    std::mt19937_64 rng(options_.beam.seed);
    for (UOp g : post_opts) {
      detail::beam::Compiled c = detail::beam::compile(compile_, g, target);
      if (!c.kernel) fail_runtime("median_times: the kernel does not compile: " + detail::beam::first_line(c.error));
      kernels.push_back(std::make_unique<CompiledKernel>(*ctx_, std::move(*c.kernel), detail::beam::build_options));
      for (const render::KernelParam& p : kernels.back()->info().params) {
        if (p.kind == render::ParamKind::var) {
          kernels.back()->set_var(p.slot, detail::beam::var_timing_value(p));
          continue;
        }
        auto& b = buffers[p.slot];
        if (!b) {
          b = std::make_unique<Buffer>(*ctx_, static_cast<std::size_t>(p.nbytes));
          const std::vector<std::byte> data = detail::beam::random_bytes(p, rng);
          b->write(data.data(), data.size());
        }
        kernels.back()->bind(p.slot, *b);
      }
    }
    for (auto& k : kernels) k->launch().wait();
    std::vector<std::vector<double>> t(kernels.size());
    for (int r = 0; r < runs; ++r)
      for (std::size_t i = 0; i < kernels.size(); ++i)
        t[i].push_back(static_cast<double>(kernels[i]->launch().duration_ns()) / 1e3);
    std::vector<double> out;
    for (auto& v : t) {
      std::sort(v.begin(), v.end());
      out.push_back(v[v.size() / 2]);
    }
    return out;
  }

 private:
  /// The device side of one search: buffers with random inputs, the starting kernel's outputs,
  /// the sources built so far.
  class Session {
   public:
    Session(BeamSearch& bs, const codegen::opt::Scheduler& start, const BeamSearchOptions& o,
            const detail::beam::Compiled& first, BeamSearchStats& stats, detail::beam::clock::time_point t0)
        : bs_(bs), o_(o), target_(start.target()), stats_(stats), t0_(t0), progress_(o.progress) {
      if (o.budget_s > 0)
        deadline_ = t0 + std::chrono::duration_cast<detail::beam::clock::duration>(std::chrono::duration<double>(o.budget_s));
      if (!first.kernel)
        fail_runtime("beam search: the starting kernel does not compile: " + detail::beam::first_line(first.error));
      CompiledKernel k(*bs_.ctx_, *first.kernel, detail::beam::build_options);
      std::mt19937_64 rng(o.beam.seed);
      for (const render::KernelParam& p : k.info().params) {
        if (p.kind == render::ParamKind::var) {
          vars_[p.slot] = detail::beam::var_timing_value(p);
          continue;
        }
        Slot s;
        s.param = p;
        s.buffer = std::make_unique<Buffer>(*bs_.ctx_, static_cast<std::size_t>(p.nbytes));
        if (p.read || !p.written) s.input = detail::beam::random_bytes(p, rng);
        slots_.emplace(p.slot, std::move(s));
      }
      if (o.verify) {
        bind(k);
        reset_buffers();
        k.launch().wait();
        for (auto& [slot, s] : slots_)
          if (s.param.written) s.reference = s.buffer->read_all();
      }
    }

    /// The codegen::opt timer: compile, build, check and time one round's candidates.
    codegen::opt::BeamTimes time_round(std::span<const codegen::opt::Scheduler> cands, const codegen::opt::BeamRound& round) {
      const std::size_t n = cands.size();
      codegen::opt::BeamTimes out;
      out.us.assign(n, std::nullopt);
      round_ = round.round;
      // each candidate's graph in an arena of its own: the back half runs on several threads
      std::vector<std::unique_ptr<Arena>> arenas(n);
      std::vector<UOp> graphs(n);
      for (std::size_t i = 0; i < n; ++i) {
        arenas[i] = std::make_unique<Arena>();
        graphs[i] = copy_graph(cands[i].get_optimized_ast("test"), *arenas[i]);
      }
      std::vector<detail::beam::Compiled> compiled(n);
      show("compiling " + std::to_string(n), true);
      auto phase = detail::beam::clock::now();
      bs_.pool_.run(n, [&](std::size_t i) {
        if (!past_deadline()) compiled[i] = detail::beam::compile(bs_.compile_, graphs[i], target_);
      });
      stats_.codegen_s += detail::beam::seconds_since(phase);
      if (past_deadline()) return stop(out);
      // in candidate order (tinygrad: arrival order): left out when failed, already built, too long
      // or far more compute than the least so far
      std::vector<std::size_t> build;
      for (std::size_t i = 0; i < n; ++i) {
        detail::beam::Compiled& c = compiled[i];
        if (!c.kernel) {
          failure(cands[i], c.error);
          continue;
        }
        ++stats_.compiled;
        if (c.uops >= o_.uops_max) {
          ++stats_.over_limits;
          continue;
        }
        if (seen_.count(std::string(c.kernel->source.view()))) {
          ++stats_.duplicates;
          continue;
        }
        least_ops_ = std::min(least_ops_, c.ops);
        if (least_ops_ * 1000 < c.ops) {
          ++stats_.over_limits;
          continue;
        }
        seen_.insert(std::string(c.kernel->source.view()));
        build.push_back(i);
      }
      // PoCL's build has a large fixed cost: each thread builds its share of the round as one program
      // (a kernel per candidate, renamed). Then the first runs, in parallel too: PoCL compiles a
      // kernel for its work-group size at its first launch, which would otherwise land in the first
      // timed run (and the early stop).
      std::vector<Built> built(n);
      show("building " + std::to_string(build.size()) + " of " + std::to_string(n), true);
      phase = detail::beam::clock::now();
      const std::size_t chunks = std::min(build.size(), std::max(bs_.pool_.size(), (build.size() + 63) / 64));
      bs_.pool_.run(chunks, [&](std::size_t c) {
        std::vector<std::size_t> mine;
        for (std::size_t j = c; j < build.size(); j += chunks) mine.push_back(build[j]);
        if (!past_deadline()) build_together(mine, compiled, built);
      });
      bs_.pool_.run(build.size(), [&](std::size_t j) {
        Built& b = built[build[j]];
        if (!b.kernel || past_deadline()) return;
        try {
          b.wrong = first_run(b);
        } catch (const std::exception& e) {
          b.kernel.reset();
          b.error = e.what();
        }
      });
      stats_.build_s += detail::beam::seconds_since(phase);
      std::size_t done = 0;
      for (std::size_t i : build) {
        if (past_deadline()) return stop(out);
        if (!built[i].kernel) {
          if (!built[i].error.empty()) failure(cands[i], built[i].error);
          continue;
        }
        ++stats_.built;
        if (built[i].wrong) {
          ++stats_.wrong;
          bs_.warn("candidate " + codegen::opt::opts_text(cands[i].applied_opts()).str() +
                   " computes other outputs than the starting kernel (" + *built[i].wrong + "): left out");
          continue;
        }
        out.us[i] = time_one(built[i], cands[i], round.early_stop_us);
        built[i] = Built{};
        ++done;
        if (out.us[i] && *out.us[i] < best_us_) {
          best_us_ = *out.us[i];
          best_opts_ = codegen::opt::opts_text(cands[i].applied_opts()).str();
        }
        show("timed " + std::to_string(done) + "/" + std::to_string(build.size()));
      }
      return out;
    }

    void finish() { progress_.clear(); }

   private:
    /// A candidate's kernel, from a program it may share with others of its round.
    struct Built {
      std::shared_ptr<const Program> program;
      render::RenderedKernel info;
      std::optional<Kernel> kernel;
      std::string error;
      std::optional<std::string> wrong;  // how its outputs differ from the starting kernel's
    };

    /// Builds the candidates `which` as one program (kernels named test_<candidate>); if that fails,
    /// each alone, so that an error is its own candidate's.
    void build_together(const std::vector<std::size_t>& which, std::vector<detail::beam::Compiled>& compiled,
                        std::vector<Built>& built) const {
      for (std::size_t i : which) {
        built[i].info = std::move(*compiled[i].kernel);
        built[i].info.function_name = text(std::string_view("test_" + std::to_string(i)));
      }
      auto build = [&](const std::vector<std::size_t>& part) {
        std::vector<const render::RenderedKernel*> ks;
        for (std::size_t i : part) ks.push_back(&built[i].info);
        auto program = std::make_shared<const Program>(*bs_.ctx_, detail::beam::one_program(ks), detail::beam::build_options);
        for (std::size_t i : part) {
          built[i].program = program;
          built[i].kernel.emplace(*program, built[i].info.function_name.view());
        }
      };
      try {
        build(which);
        return;
      } catch (const std::exception&) {
        for (std::size_t i : which) built[i].kernel.reset(), built[i].program.reset();
      }
      for (std::size_t i : which) try {
          build({i});
        } catch (const std::exception& e) {
          built[i].kernel.reset();
          built[i].error = e.what();
        }
    }

    struct Slot {
      render::KernelParam param;
      std::unique_ptr<Buffer> buffer;
      std::vector<std::byte> input;      // random contents (none for an output that is not read)
      std::vector<std::byte> reference;  // the starting kernel's output
    };

    bool past_deadline() const { return deadline_ && detail::beam::clock::now() >= *deadline_; }
    codegen::opt::BeamTimes& stop(codegen::opt::BeamTimes& out) {
      out.stop = true;
      return out;
    }

    const Slot& slot_of(std::int64_t slot) const {
      const auto s = slots_.find(slot);
      if (s == slots_.end())
        fail_runtime("beam search: the kernel has a buffer the starting kernel lacks (slot " + std::to_string(slot) + ")");
      return s->second;
    }
    std::int32_t var_of(std::int64_t slot) const {
      const auto v = vars_.find(slot);
      if (v == vars_.end())
        fail_runtime("beam search: the kernel has a variable the starting kernel lacks (slot " + std::to_string(slot) + ")");
      return v->second;
    }
    /// The search's variables, as render::RenderedKernel::launch_sizes takes them.
    std::vector<render::VarValue> var_values() const {
      std::vector<render::VarValue> out;
      for (const auto& [slot, value] : vars_) out.push_back({slot, value});
      return out;
    }
    /// Sets `k`'s arguments: the search's variables, and the buffer `buffer(slot)` for each buffer.
    template <class BufferOf>
    void set_args(Kernel& k, const render::RenderedKernel& info, BufferOf buffer) const {
      for (const render::KernelParam& p : info.params) {
        if (p.kind == render::ParamKind::var) k.set_arg(static_cast<cl_uint>(p.index), static_cast<cl_int>(var_of(p.slot)));
        else k.set_arg(static_cast<cl_uint>(p.index), buffer(p.slot));
      }
    }
    /// Binds the search's buffers (the ones timing uses).
    void bind(CompiledKernel& k) const {
      for (const render::KernelParam& p : k.info().params) {
        if (p.kind == render::ParamKind::var) k.set_var(p.slot, var_of(p.slot));
        else k.bind(p.slot, *slot_of(p.slot).buffer);
      }
    }
    /// Inputs back to their random contents, outputs that are not read to 0xFF bytes.
    void reset_buffers() {
      for (auto& [slot, s] : slots_) {
        if (!s.input.empty()) s.buffer->write(s.input.data(), s.input.size());
        else s.buffer->fill(std::byte{0xFF});
      }
    }

    /// Runs `k` once, full size, on buffers and a queue of its own holding the random inputs; with
    /// `verify`, the first output that differs from the starting kernel's, described. Safe on the
    /// pool's threads.
    std::optional<std::string> first_run(Built& k) const {
      detail::beam::Queue q(*bs_.ctx_);
      std::map<std::int64_t, Buffer> mine;
      for (const render::KernelParam& p : k.info.params) {
        if (p.kind != render::ParamKind::buffer) continue;
        const Slot& s = slot_of(p.slot);
        const Buffer& b = mine.try_emplace(p.slot, *bs_.ctx_, s.buffer->size()).first->second;
        if (!s.input.empty()) q.write(b, s.input);
        else q.write(b, std::vector<std::byte>(b.size(), std::byte{0xFF}));
      }
      set_args(*k.kernel, k.info, [&](std::int64_t slot) -> const Buffer& { return mine.at(slot); });
      q.launch(*k.kernel, k.info.launch_sizes(var_values()));
      if (!o_.verify) return std::nullopt;
      for (const auto& [slot, b] : mine) {
        const Slot& s = slots_.at(slot);
        if (!s.param.written) continue;
        const auto diff = detail::beam::first_difference(q.read(b), s.reference, detail::beam::value_dtype(s.param),
                                                         static_cast<std::size_t>(s.param.itemsize), o_.rtol, o_.atol);
        if (diff) return "output slot " + std::to_string(slot) + ", " + *diff;
      }
      return std::nullopt;
    }

    std::optional<double> time_one(Built& k, const codegen::opt::Scheduler& cand, double early_stop_us) {
      try {
        set_args(*k.kernel, k.info, [&](std::int64_t slot) -> const Buffer& { return *slot_of(slot).buffer; });
        render::RenderedKernel::LaunchSizes sizes = k.info.launch_sizes(var_values());
        double factor = 1;
        if (o_.test_size) std::tie(sizes.global_size, factor) = detail::beam::test_size(sizes.global_size, o_.max_test_groups);
        const detail::beam::NDRange nd = detail::beam::ndrange(sizes);
        double best = std::numeric_limits<double>::infinity();
        const auto t0 = detail::beam::clock::now();
        for (int r = 0; r < o_.runs; ++r) {
          best = std::min(best, static_cast<double>(k.kernel->enqueue(nd.global, nd.local).duration_ns()) / 1e3 * factor);
          if (early_stop_us < best) break;
        }
        stats_.time_s += detail::beam::seconds_since(t0);
        ++stats_.timed;
        return best;
      } catch (const std::exception& e) {
        failure(cand, e.what());
        return std::nullopt;
      }
    }

    void failure(const codegen::opt::Scheduler& cand, std::string_view why) {
      if (stats_.failed++ == 0)
        stats_.first_failure = codegen::opt::opts_text(cand.applied_opts()).str() + ": " + detail::beam::first_line(why);
    }

    void show(const std::string& what, bool force = false) {
      char best[32] = "-";
      if (best_us_ < std::numeric_limits<double>::infinity()) std::snprintf(best, sizeof best, "%.2f us", best_us_);
      char line[96];
      std::snprintf(line, sizeof line, "beam %zu: round %zu, %s, best %s ", o_.beam.width, round_, what.c_str(), best);
      progress_.show(line + best_opts_ + " (" + std::to_string(static_cast<int>(detail::beam::seconds_since(t0_))) + " s)", force);
    }

    BeamSearch& bs_;
    const BeamSearchOptions& o_;
    const Target& target_;
    BeamSearchStats& stats_;
    detail::beam::clock::time_point t0_;
    std::optional<detail::beam::clock::time_point> deadline_;
    detail::beam::ProgressLine progress_;
    std::map<std::int64_t, Slot> slots_;
    std::map<std::int64_t, std::int32_t> vars_;
    std::set<std::string> seen_;  // sources built so far (tinygrad compares binaries)
    double least_ops_ = std::numeric_limits<double>::infinity();
    double best_us_ = std::numeric_limits<double>::infinity();
    std::string best_opts_;
    std::size_t round_ = 0;
  };

  detail::beam::Compiled compile_start(const codegen::opt::Scheduler& start) const {
    Arena a;
    return detail::beam::compile(compile_, copy_graph(start.get_optimized_ast("test"), a), start.target());
  }

  std::string cache_key(const codegen::opt::Scheduler& start, const BeamSearchOptions& o,
                        const detail::beam::Compiled& first) const {
    const codegen::opt::BeamOptions& b = o.beam;
    const render::OpenCLRenderer& r = start.target().renderer;
    const Device& d = ctx_->device();
    auto n = [](auto v) { return std::to_string(v); };
    auto dims = [&](const std::array<std::int64_t, 3>& v) { return n(v[0]) + "," + n(v[1]) + "," + n(v[2]); };
    std::string key = "ast " + runtime::structural_hash(start.ast()) + "\n";
    key += "applied " + codegen::opt::opts_text(start.applied_opts()).str() + (start.dont_use_locals() ? " nolocals" : "") + "\n";
    key += "width " + n(b.width) + " min_progress_us " + n(b.min_progress_us) + " upcast_max " + n(b.upcast_max) + " local_max " +
           n(b.local_max) + " padto " + n(b.padto) + " nolocals " + n(b.nolocals) + " use_tc " + n(b.use_tc) + " tc_opt " +
           n(b.tc_opt) + " max_rounds " + n(b.max_rounds) + " runs " + n(o.runs) + " test_size " + n(o.test_size) +
           " max_test_groups " + n(o.max_test_groups) + " uops_max " + n(o.uops_max) + "\n";
    key += "renderer " + std::string(r.device.view()) + " fp16 " + n(r.supports_fp16) + " fp64 " + n(r.supports_fp64) + " bf16 " +
           n(r.supports_bf16) + " local " + n(r.has_local) + " shared " + n(r.has_shared) + " threads " + n(r.has_threads) +
           " float4 " + n(r.supports_float4) + " shared_max " + n(r.shared_max) + " global_max " + dims(r.global_max) +
           " local_max " + dims(r.local_max) + " global_prod_max " + n(r.global_prod_max.value_or(-1)) + " tensor_cores " +
           n(start.target().tensor_cores.size()) + " arch " + std::string(r.arch.view()) + "\n";
    key += "source " + (first.kernel ? runtime::detail::hash128(first.kernel->source.view())
                                     : "none: " + detail::beam::first_line(first.error)) + "\n";
    key += "device " + d.platform_name() + " | " + d.name() + " | " + d.version() + " | " +
           detail::device_string(d.id(), CL_DRIVER_VERSION);
    for (char& c : key)
      if (c == '\r') c = ' ';
    return key;
  }

  /// `start` with the cached opts beyond its own, or nullopt if they do not apply.
  static std::optional<codegen::opt::Scheduler> replay(const codegen::opt::Scheduler& start, const std::vector<Opt>& opts) {
    const std::vector<Opt>& have = start.applied_opts();
    if (opts.size() < have.size()) return std::nullopt;
    codegen::opt::Scheduler k = start.copy();
    for (std::size_t i = 0; i < opts.size(); ++i) {
      if (i < have.size()) {
        if (!(opts[i].op == have[i].op && opts[i].axis == have[i].axis && opts[i].arg == have[i].arg)) return std::nullopt;
        continue;
      }
      if (!k.apply_opt(opts[i]).ok()) return std::nullopt;
    }
    return k;
  }

  void warn(const std::string& m) const {
    if (options_.warnings) std::fprintf(options_.warnings, "uopcg: warning: beam search: %s\n", m.c_str());
  }

  const Context* ctx_;
  ProgramCompiler compile_;
  BeamSearchOptions options_;
  runtime::ThreadPool pool_;
};

}  // namespace uopcg::opencl
#endif  // UOPCG_SINGLE_RUNTIME_BEAM_SEARCH_HPP
// ---- end uopcg/runtime/beam_search.hpp ----
