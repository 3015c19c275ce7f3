// The OpenCL C emitter: a linearized program (the instruction list `linearize` produces, e.g. the
// `linear` of a tinygrad kernel file) -> OpenCL C source, the kernel's name, its parameter list and
// its launch sizes. Reproduces the text of tinygrad's OpenCLRenderer byte for byte (naming, inlining,
// parentheses, literals), except where C would compute another value than the dtype's: integer
// promotion of narrow operands and signed overflow (docs/DIVERGENCES.md R1, R2); see docs/render.md.
//
// Works in constant evaluation (the text is built in uopcg::text). Anything the emitter cannot
// render is reported through uopcg::fail with the instruction's index and op.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "../core/arena.hpp"
#include "../core/arg.hpp"
#include "../core/dtype.hpp"
#include "../core/error.hpp"
#include "../core/ops.hpp"
#include "../core/text.hpp"
#include "float_text.hpp"
#include "kernel.hpp"
#include "size_text.hpp"

namespace uopcg::render {

// --- helper functions -------------------------------------------------------------------------------

/// A function a CUSTOM or CUSTOMI format may call by name; the emitter defines each helper the
/// program calls once, before the kernel.
struct OpenCLHelper {
  std::string_view name;
  std::string_view definition;
};

/// Half bits <-> float through OpenCL C's core built-ins vload_half / vstore_half_rte (IEEE-exact:
/// subnormals kept, round to nearest even). They need no cl_khr_fp16: a `half*` may point at half
/// data without the extension. Codegen uses them for emulated half on OpenCL.
inline constexpr std::string_view helper_half_to_float = "uopcg_half_to_float";
inline constexpr std::string_view helper_float_to_half = "uopcg_float_to_half";
inline constexpr OpenCLHelper opencl_helpers[] = {
    {helper_half_to_float, "float uopcg_half_to_float(ushort h) { return vload_half(0, (const __private half*)&h); }"},
    // a NaN keeps its sign and top payload bits, made quiet (implementations may return any NaN)
    {helper_float_to_half,
     "ushort uopcg_float_to_half(float f) { ushort h; vstore_half_rte(f, 0, (__private half*)&h); uint b = as_uint(f); "
     "return isnan(f) ? (ushort)(((b >> 16) & 0x8000u) | 0x7e00u | ((b >> 13) & 0x3ffu)) : h; }"},
};

// --- pieces (public: the tests check each rule on its own) -------------------------------------------

/// The OpenCL scalar type of a dtype ("float", "uchar", bf16 -> "ushort"); empty if it has none.
constexpr std::string_view opencl_scalar_type(DType dt) {
  switch (dt) {
    case DType::bool_: case DType::int8: case DType::uint8: case DType::int16: case DType::uint16:
    case DType::int32: case DType::uint32: case DType::int64: case DType::uint64: case DType::float16:
    case DType::float32: case DType::float64: case DType::void_:
      return name(dt);  // the interchange names are the OpenCL spellings (char, ushort, half, ...)
    case DType::bfloat16: return "ushort";
    default: return {};
  }
}

/// tinygrad's strip_parens: "(x)" -> "x" when the outer parentheses enclose the whole text.
constexpr std::string_view strip_parens_view(std::string_view s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  std::string_view inner = s.substr(1, s.size() - 2);
  // Python's str.find: -1 when absent; compare as signed positions
  auto find = [&](char c) -> long long {
    std::size_t p = inner.find(c);
    return p == std::string_view::npos ? -1 : static_cast<long long>(p);
  };
  if (find('(') <= find(')')) return inner;
  return s;
}
constexpr text strip_parens(const text& t) {
  const std::string_view v = strip_parens_view(t.view());
  return v.size() == t.size() ? t : text(v);
}

/// Appends the operand of a '-' just appended: parenthesised when it starts with '-' itself (a NEG
/// or a negative literal), since C reads `--` as the decrement operator (`a--b`, `--x` do not compile).
constexpr text& append_after_minus(text& t, std::string_view operand) {
  if (!operand.empty() && operand.front() == '-') return t.append('(').append(operand).append(')');
  return t.append(operand);
}

namespace detail {

constexpr std::int64_t wrap_signed(std::int64_t v, int bits) {
  if (bits >= 64) return v;
  const std::uint64_t mask = (std::uint64_t(1) << bits) - 1;
  std::uint64_t u = static_cast<std::uint64_t>(v) & mask;
  if (u >> (bits - 1)) u |= ~mask;
  return static_cast<std::int64_t>(u);
}
constexpr std::uint64_t wrap_unsigned(std::uint64_t v, int bits) {
  return bits >= 64 ? v : v & ((std::uint64_t(1) << bits) - 1);
}
constexpr bool is_finite(double v) { return v == v && v <= 1.7976931348623157e308 && v >= -1.7976931348623157e308; }

/// A decimal integer's text (optional '-', digits) mod 2^64: unsigned arithmetic wraps at each step.
constexpr std::uint64_t bigint_mod_2_64(std::string_view digits) {
  const bool negative = !digits.empty() && digits.front() == '-';
  std::uint64_t v = 0;
  for (char c : digits.substr(negative ? 1 : 0)) v = v * 10u + static_cast<std::uint64_t>(c - '0');
  return negative ? 0u - v : v;
}

/// float -> bfloat16 bits, round to nearest even (NaN stays a quiet NaN).
constexpr std::uint32_t bf16_bits(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if (f != f) return 0x7FC0u;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return u >> 16;
}

}  // namespace detail

/// The text of a literal of dtype `dt` holding `value` (an int, float or bool Arg), or empty text
/// when `dt` has no literal form; `why` then says why. Rules: tinygrad/renderer/cstyle.py, render_const.
constexpr text opencl_literal(DType dt, const Arg& value, std::string_view* why = nullptr) {
  text t;
  auto no = [&](std::string_view w) {
    if (why) *why = w;
    return text();
  };
  if (!value.is_number() && !(value.kind() == ArgKind::bigint && is_int(dt) && !is_weak(dt)))
    return no("the constant is not a number");
  if (is_float(dt) && !is_weak(dt)) {
    const double v = value.as_float();
    if (dt == DType::bfloat16) return t.append(static_cast<std::uint64_t>(detail::bf16_bits(v))).append('u');
    std::string_view ty;
    switch (dt) {
      case DType::float32: ty = "float"; break;
      case DType::float16: ty = "half"; break;
      case DType::float64: ty = "double"; break;
      default: return no("fp8 has no OpenCL type (emulate it in codegen)");
    }
    if (!detail::is_finite(v)) {
      t.append("((").append(ty).append(")(");
      if (v != v) t.append("NAN");
      else t.append(v < 0 ? "-INFINITY" : "INFINITY");
      return t.append("))");
    }
    if (dt == DType::float64) return append_python_float(t, v);
    if (dt == DType::float16) {
      t.append("((half)(");
      append_python_float(t, v);
      return t.append("f))");
    }
    append_python_float(t, v);
    return t.append('f');
  }
  if (dt == DType::bool_) return t.append(value.as_float() != 0 ? '1' : '0');
  if (!is_int(dt) || is_weak(dt) || dt == DType::uint128 || dt == DType::uint256)
    return no("the dtype has no OpenCL literal");
  // an integer dtype: the value converted like Python's int(), then wrapped to the width
  std::int64_t sv = 0;
  std::uint64_t uv = 0;
  if (value.is_float()) {
    const double v = value.as_float();
    if (!detail::is_finite(v) || v >= 9.2233720368547758e18 || v < -9.2233720368547758e18)
      return no("a non-finite or out-of-range float constant cast to an integer dtype");
    sv = static_cast<std::int64_t>(v);
    uv = static_cast<std::uint64_t>(sv);
  } else if (value.kind() == ArgKind::uint_) {
    uv = value.as_uint();
    sv = static_cast<std::int64_t>(uv);
  } else if (value.kind() == ArgKind::bigint) {
    // a Python int beyond 64 bits (tinygrad folds `x - c` on ulong into `x + -c`): only its value
    // mod 2^64 reaches the dtype, as tinygrad's truncate gives
    uv = detail::bigint_mod_2_64(value.as_string());
    sv = static_cast<std::int64_t>(uv);
  } else {
    sv = value.as_int();
    uv = static_cast<std::uint64_t>(sv);
  }
  const int bits = bitsize(dt);
  switch (dt) {
    case DType::int32: return t.append(detail::wrap_signed(sv, 32));
    case DType::int64: return t.append(sv).append('l');
    case DType::uint32: return t.append(detail::wrap_unsigned(uv, 32)).append('u');
    case DType::uint64: return t.append(uv).append("ul");
    case DType::uint8: case DType::uint16:
      return t.append("((").append(opencl_scalar_type(dt)).append(")(").append(detail::wrap_unsigned(uv, bits))
          .append("u))");
    case DType::int8: case DType::int16:
      return t.append("((").append(opencl_scalar_type(dt)).append(")(").append(detail::wrap_signed(sv, bits))
          .append("))");
    default: return no("the dtype has no OpenCL literal");
  }
}

namespace detail {

/// One rendering pass over a program (tinygrad/renderer/cstyle.py, CStyleLanguage._render).
class cl_emitter {
 public:
  constexpr cl_emitter(std::span<const UOp> program, const OpenCLRenderer& target)
      : prog_(program), target_(target) {}

  constexpr RenderedKernel run() {
    index_program();
    check_dtypes();
    RenderedKernel out;
    out.function_name = "test";
    text body;
    bool first_line = true;
    int depth = 1;
    std::int64_t local_bytes = 0;
    for (std::size_t i = 0; i < prog_.size(); ++i) {
      const UOp u = prog_[i];
      const Ops op = u.op();
      switch (op) {
        case Ops::NOOP: case Ops::GROUP: continue;
        case Ops::CONST:
          if (!is_weak(u.dtype())) set(i, literal_of(i, u.dtype(), u.arg()));  // a bare typed constant
          continue;
        case Ops::STACK:
          if (u.nsrc() == 0) continue;
          break;
        case Ops::AFTER:
          set(i, r(i, 0));
          continue;
        case Ops::SINK:
          if (u.arg().kind() == ArgKind::kernel_info) out.function_name = uopcg::function_name(u.arg()[0].as_string());
          continue;
        case Ops::PARAM:
          add_param(i, out);
          continue;
        default: break;
      }

      // naming
      text nm;
      std::string_view prefix;
      if (op == Ops::SPECIAL) {
        if (u.arg().kind() == ArgKind::string) nm.append(u.arg().as_string());
      } else if (op == Ops::RANGE) {
        range_name(nm, i, u);
      } else {
        prefix = prefix_of(op);
        nm.append(prefix).append(counter(prefix));
      }

      text line = render(i, u, nm, local_bytes);
      if (op == Ops::END || op == Ops::ENDIF) {
        if (--depth < 1) reject(i, u, "closes a block that was never opened");
      }
      if (inlinable(i, u)) {
        if (promoted_out_of_range(u)) line = converted(u, line);
        set(i, static_cast<text&&>(line));
      } else {
        if (!first_line) body.append('\n');
        first_line = false;
        for (int d = 0; d < depth; ++d) body.append("  ");
        if (op != Ops::RANGE && op != Ops::STORE && op != Ops::BUFFER && u.dtype() != DType::void_) {
          // the declaration "type name = value;", written straight into the body
          put_type(body, u.dtype(), numel(u));
          body.append(' ').append(nm).append(" = ").append(line);
          if (op != Ops::SPECIAL) body.append(';');
        } else {
          body.append(line);
        }
        set(i, static_cast<text&&>(nm));  // nm is not used again
        if (!prefix.empty()) bump(prefix);
      }
      if (op == Ops::IF || op == Ops::RANGE) ++depth;
    }
    if (depth != 1) fail(msg_prefix().append("a loop or if block is never closed (missing END / ENDIF)").view());
    // Not checked against shared_max: that limit is the kernel opts' (GROUP), and a PADTO applied after
    // a GROUP may grow the buffer past it, as tinygrad allows; the device's limit is the launcher's check.
    out.local_bytes = local_bytes;

    // launch sizes and slot lists
    for (std::size_t i = 0; i < prog_.size(); ++i) {
      const UOp u = prog_[i];
      if (!u.is(Ops::SPECIAL)) continue;
      std::string_view s = u.arg().as_string();
      const std::int64_t extent = u.src(0).vmax();
      const int dim = s.back() - '0';
      std::optional<SymbolicSize> symbolic;
      if (!const_int(u.src(0))) symbolic = symbolic_extent(i);
      if (s.front() == 'g') {
        out.global_size[dim] = extent;
        out.global_symbolic[dim] = std::move(symbolic);
      } else if (s.front() == 'l') {
        if (out.local_size) (*out.local_size)[dim] = extent;
        out.local_symbolic[dim] = std::move(symbolic);
      } else {
        out.global_size[dim] = extent;
        out.global_symbolic[dim] = std::move(symbolic);
        out.local_size.reset();
      }
    }
    if (!out.local_size)
      for (auto& l : out.local_symbolic) l.reset();
    for (KernelParam& p : params_) {
      if (p.kind != ParamKind::buffer) continue;
      out.globals.push_back(p.slot);
      if (p.written) out.outs.push_back(p.slot);
      if (p.read) out.ins.push_back(p.slot);
    }
    out.params = params_;

    // the kernel text (OpenCLRenderer.render_kernel)
    text& src = out.source;
    if (uses_half_) src.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
    for (std::size_t h = 0; h < std::size(opencl_helpers); ++h)
      if (helpers_used_ & (1u << h)) src.append(opencl_helpers[h].definition).append('\n');
    src.append("__kernel void ").append(out.function_name).append('(');
    for (std::size_t k = 0; k < params_.size(); ++k) {
      const KernelParam& p = params_[k];
      if (k) src.append(", ");
      if (p.is_volatile) src.append("volatile ");
      if (p.kind == ParamKind::buffer)
        src.append("__global ").append(opencl_scalar_type(p.dtype)).append("* ").append(p.name);
      else
        src.append("const ").append(opencl_scalar_type(p.dtype)).append(' ').append(p.name);
    }
    src.append(") {\n").append(body).append("\n}");
    return out;
  }

 private:
  // --- program bookkeeping ------------------------------------------------------------------------
  constexpr void index_program() {
    if (prog_.empty()) fail("render_opencl: empty program");
    arena_ = &prog_[0].arena();
    pos_.assign(arena_->size(), -1);
    uses_.assign(prog_.size(), 0);
    r_.assign(prog_.size(), text());
    has_r_.assign(prog_.size(), 0);
    for (std::size_t i = 0; i < prog_.size(); ++i) {
      const UOp u = prog_[i];
      if (&u.arena() != arena_) reject(i, u, "belongs to another arena than instruction 0");
      if (pos_[u.id()] >= 0) reject(i, u, "appears twice in the program");
      for (UOp s : u.srcs()) {
        int p = pos_[s.id()];
        if (p < 0) {
          text t;
          const text d = arena_->describe(s.id());
          t.append("source ").append(d).append(" is not an earlier instruction");
          reject(i, u, t.view());
        }
        ++uses_[static_cast<std::size_t>(p)];
      }
      pos_[u.id()] = static_cast<int>(i);
    }
  }
  constexpr void check_dtypes() {
    for (std::size_t i = 0; i < prog_.size(); ++i) {
      const UOp u = prog_[i];
      const DType dt = u.dtype();
      if (dt == DType::float16) {
        uses_half_ = true;
        if (!target_.supports_fp16)
          reject(i, u, "half needs cl_khr_fp16, which the target lacks (emulate half in codegen)");
      }
      if (dt == DType::float64 && !target_.supports_fp64)
        reject(i, u, "double needs cl_khr_fp64, which the target lacks");
      if (is_weak(dt) && !u.is(Ops::CONST)) reject(i, u, "a weak dtype reached the renderer (lower index dtypes first)");
      if (opencl_scalar_type(dt).empty() && !is_weak(dt)) reject(i, u, "the dtype has no OpenCL type");
      check_bfloat16(i, u);
    }
  }
  /// bfloat16 is held as ushort bits: C would compute on the bits as an integer. Only moves of the
  /// bits render (memory, WHERE, STACK, lanes, BITCAST, literals); arithmetic, comparisons and
  /// value conversions must have been decomposed in codegen ("decomp dtypes", "final rewrite").
  constexpr void check_bfloat16(std::size_t i, UOp u) const {
    bool bf16_src = false;
    for (UOp s : u.srcs()) bf16_src = bf16_src || (s.dtype() == DType::bfloat16 && !is_memory(s));
    const bool bf16 = u.dtype() == DType::bfloat16 || bf16_src;
    if (!bf16) return;
    if (GroupOp::ALU.contains(u.op()) && u.op() != Ops::WHERE)
      reject(i, u, "bfloat16 arithmetic has no OpenCL rendering (its ushort bits would be computed as an integer)");
    if (u.op() == Ops::CAST && !u.src(0).is(Ops::CONST) && !is_memory(u.src(0)) && u.dtype() != u.src(0).dtype())
      reject(i, u, "a CAST between bfloat16 and another dtype has no OpenCL rendering (ushort would convert the bits as an integer)");
  }
  constexpr std::size_t at(std::size_t i, std::size_t k) const {
    return static_cast<std::size_t>(pos_[prog_[i].src(k).id()]);
  }
  constexpr const text& r(std::size_t i, std::size_t k) const {
    std::size_t p = at(i, k);
    if (!has_r_[p]) {
      text t;
      t.append("operand ").append(k).append(" (instruction ").append(p).append(", ").append(name(prog_[p].op()))
          .append(' ').append(name(prog_[p].dtype())).append(") has no rendering");
      if (prog_[p].is(Ops::CONST)) t.append(" (a weak CONST must be wrapped in CAST to a concrete dtype)");
      reject(i, prog_[i], t.view());
    }
    return r_[p];
  }
  constexpr void set(std::size_t i, text t) {
    r_[i] = static_cast<text&&>(t);
    has_r_[i] = 1;
  }
  constexpr std::int64_t counter(std::string_view prefix) const {
    for (const auto& c : counters_)
      if (c.first == prefix) return c.second;
    return 0;
  }
  constexpr void bump(std::string_view prefix) {
    for (auto& c : counters_)
      if (c.first == prefix) {
        ++c.second;
        return;
      }
    counters_.push_back({prefix, 1});
  }

  [[noreturn]] constexpr void reject(std::size_t i, UOp u, std::string_view why) const {
    text t = msg_prefix();
    t.append("instruction ").append(i).append(" (").append(name(u.op())).append(' ').append(name(u.dtype()))
        .append("): ").append(why);
    fail(t.view());
  }
  static constexpr text msg_prefix() { return text("render_opencl: "); }

  // --- helpers ------------------------------------------------------------------------------------
  static constexpr std::int64_t numel(UOp u) {
    auto s = u.shape();
    return s.has_value() ? s.numel() : 1;
  }
  static constexpr bool is_memory(UOp u) {
    auto a = u.addrspace();
    return a && *a != AddrSpace::ALU;
  }
  static constexpr std::string_view space_prefix(UOp mem) {
    auto a = mem.addrspace();
    if (a && *a == AddrSpace::GLOBAL) return "__global ";
    if (a && *a == AddrSpace::LOCAL) return "__local ";
    return "";
  }
  /// Appends the scalar or vector C type ("float", "float4").
  static constexpr void put_type(text& t, DType dt, std::int64_t n) {
    t.append(opencl_scalar_type(dt));
    if (n > 1) t.append(n);
  }
  /// The integer value of a constant operand (CONST, or CAST of a CONST).
  static constexpr std::optional<std::int64_t> const_int(UOp u) {
    while (u.is(Ops::CAST) && u.nsrc() == 1) u = u.src(0);
    if (u.is(Ops::CONST) && (u.arg().is_int() || u.arg().is_bool()) && u.arg().kind() != ArgKind::uint_)
      return u.arg().as_int();
    return std::nullopt;
  }
  /// The PARAM or BUFFER an address is based on (through INDEX, SHRINK, AFTER and pointer casts).
  constexpr std::optional<std::size_t> base_of(UOp addr) const {
    for (int guard = 0; guard < 1 << 20; ++guard) {
      if (addr.is(Ops::PARAM) || addr.is(Ops::BUFFER)) return static_cast<std::size_t>(pos_[addr.id()]);
      if ((addr.is(Ops::INDEX) || addr.is(Ops::SHRINK) || addr.is(Ops::AFTER) || addr.is(Ops::CAST) ||
           addr.is(Ops::BITCAST)) && addr.nsrc() > 0)
        addr = addr.src(0);
      else
        return std::nullopt;
    }
    return std::nullopt;
  }
  constexpr text literal_of(std::size_t i, DType dt, const Arg& value) const {
    std::string_view why;
    text t = opencl_literal(dt, value, &why);
    if (t.empty()) reject(i, prog_[i], why);
    return t;
  }

  static constexpr std::string_view prefix_of(Ops op) {
    switch (op) {
      case Ops::WMMA: return "wmma";
      case Ops::BUFFER: return "buf";
      case Ops::CAST: case Ops::BITCAST: case Ops::STACK: return "cast";
      case Ops::INDEX: return "bidx";
      case Ops::LOAD: return "val";
      default: return "alu";
    }
  }
  constexpr void range_name(text& t, std::size_t i, UOp u) const {
    const Arg& a = u.arg();
    if (!a.is_tuple() || a.size() < 2 || a[a.size() - 1].kind() != ArgKind::axis_type)
      reject(i, u, "RANGE arg is not (axis ids..., AxisType)");
    t.append(axis_letter(a[a.size() - 1].as_axis_type())).append("idx");
    for (std::size_t k = 0; k + 1 < a.size(); ++k) {
      if (!a[k].is_int()) reject(i, u, "RANGE axis id is not an integer");
      if (k) t.append('_');
      t.append(a[k].as_int());
    }
  }

  constexpr void add_param(std::size_t i, RenderedKernel&) {
    const UOp u = prog_[i];
    if (u.arg().kind() != ArgKind::param_arg) reject(i, u, "PARAM arg is not a ParamArg");
    const ParamArg pa = ParamArg::from(u.arg());
    KernelParam p;
    p.index = static_cast<std::int64_t>(params_.size());
    p.slot = pa.slot;
    p.dtype = u.dtype();
    if (u.tag().kind() == ArgKind::dtype) p.logical_dtype = u.tag().as_dtype();
    p.is_volatile = pa.is_volatile;
    const auto space = u.addrspace();
    auto shp = u.shape();
    if (!shp.has_value()) reject(i, u, "PARAM without a shape");
    p.shape = shp.to_vector();
    text nm;
    nm.append("data").append(pa.slot).append('_');
    for (std::size_t k = 0; k < p.shape.size(); ++k) {
      if (k) nm.append('_');
      nm.append(p.shape[k]);
    }
    p.name = nm;
    if (!space || *space == AddrSpace::ALU) {
      p.kind = ParamKind::var;
      p.addrspace = AddrSpace::ALU;
      p.size = 1;
      if (pa.has_name) p.var_name = pa.name;
      p.var_min = pa.vmin_vmax ? pa.vmin_vmax->first : u.vmin();
      p.var_max = pa.vmin_vmax ? pa.vmin_vmax->second : u.vmax();
    } else if (*space == AddrSpace::GLOBAL) {
      p.kind = ParamKind::buffer;
      p.addrspace = AddrSpace::GLOBAL;
      p.size = shp.numel();
    } else {
      reject(i, u, "a PARAM must be GLOBAL memory or an ALU variable (LOCAL/REG storage is a BUFFER)");
    }
    p.itemsize = itemsize(p.dtype);
    p.nbytes = p.size * p.itemsize;
    param_pos_.push_back(i);
    params_.push_back(p);
    set(i, nm);
  }
  constexpr void mark_access(UOp addr, bool write) {
    auto b = base_of(addr);
    if (!b) return;
    for (std::size_t k = 0; k < params_.size(); ++k)
      if (param_pos_[k] == *b) {
        if (write) params_[k].written = true;
        else params_[k].read = true;
      }
  }

  /// The rendering of a SPECIAL's extent in its comment: a number, or a size with variables as
  /// tinygrad writes it (`(n<<6)`, not the C expression `(data2_<<6)`).
  constexpr text extent_text(std::size_t i) const {
    const UOp e = prog_[i].src(0);
    if (auto c = const_int(e)) return text().append(*c);
    if (auto s = size_text(e)) return std::move(*s);
    return r(i, 0);
  }

  /// The extent of SPECIAL i, which is not a constant, as a program over the var parameters, for the
  /// launcher to compute each launch's size.
  constexpr SymbolicSize symbolic_extent(std::size_t i) const {
    SymbolicSize out;
    out.rendered = extent_text(i);
    auto code_of = [](Ops o) -> std::optional<SymbolicSize::Code> {
      using C = SymbolicSize::Code;
      switch (o) {
        case Ops::ADD: return C::add;
        case Ops::SUB: return C::sub;
        case Ops::MUL: return C::mul;
        case Ops::CDIV: return C::cdiv;
        case Ops::CMOD: return C::cmod;
        case Ops::FLOORDIV: return C::floordiv;
        case Ops::FLOORMOD: return C::floormod;
        case Ops::SHL: return C::shl;
        case Ops::SHR: return C::shr;
        case Ops::MAX: return C::max;
        case Ops::AND: return C::and_;
        case Ops::OR: return C::or_;
        case Ops::XOR: return C::xor_;
        case Ops::CMPLT: return C::cmplt;
        case Ops::CMPNE: return C::cmpne;
        case Ops::NEG: return C::neg;
        case Ops::WHERE: return C::where;
        default: return std::nullopt;
      }
    };
    // iterative post-order walk: an extent is a small expression, but a malformed one must not recurse
    struct frame {
      UOp u;
      std::size_t next;
    };
    std::vector<frame> stack{{prog_[i].src(0), 0}};
    while (!stack.empty()) {
      frame& f = stack.back();
      const UOp u = f.u;
      if (auto c = const_int(u)) {
        out.steps.push_back({SymbolicSize::Code::constant, *c});
        stack.pop_back();
        continue;
      }
      if (u.is(Ops::PARAM)) {
        if (u.arg().kind() != ArgKind::param_arg || (u.addrspace() && *u.addrspace() != AddrSpace::ALU))
          reject(i, prog_[i], "the launch size reads a PARAM that is not a variable");
        out.steps.push_back({SymbolicSize::Code::var, ParamArg::from(u.arg()).slot});
        stack.pop_back();
        continue;
      }
      if (u.is(Ops::CAST) && u.nsrc() == 1 && is_int(u.dtype())) {
        f.u = u.src(0);  // an integer launch size: a widening or narrowing of the value it already has
        continue;
      }
      const auto code = code_of(u.op());
      if (!code) reject(i, prog_[i], text("the launch size holds ").append(uopcg::name(u.op())).append(", which a launcher cannot compute").view());
      if (f.next < u.nsrc()) {
        const UOp s = u.src(f.next++);
        stack.push_back({s, 0});
        continue;
      }
      out.steps.push_back({*code, 0});
      stack.pop_back();
    }
    return out;
  }

  /// A pointer to `n` elements of dtype `dt` at `addr` (operand k of i): the address as is for a
  /// scalar of the memory's own dtype, otherwise a pointer cast.
  constexpr text typed_pointer(std::size_t i, std::size_t k, DType dt, std::int64_t n) const {
    const UOp addr = prog_[i].src(k);
    if (n <= 1 && dt == addr.dtype()) return r(i, k);
    text t;
    t.append("((").append(space_prefix(addr));
    put_type(t, dt, n);
    t.append("*)(").append(r(i, k)).append("))");
    return t;
  }

  constexpr text binary(std::size_t i, UOp u, std::string_view sym) const {
    const bool flat = u.in(OpSet{Ops::ADD, Ops::MUL, Ops::XOR, Ops::OR, Ops::AND});
    const Unsigned how = unsigned_form(u);
    auto operand = [&](std::size_t k) {
      // a view of the operand's text (r_ does not change while instruction i is rendered); an
      // operand converted back to its narrow dtype is a cast, not a chain of the same op
      const UOp s = prog_[i].src(k);
      if (flat && how == Unsigned::none && s.op() == u.op() && !(promoted_out_of_range(s) && inlinable(at(i, k), s)) &&
          (k == 0 || regroups_exactly(u, s)))
        return strip_parens_view(r(i, k).view());
      return r(i, k).view();
    };
    text t;
    const std::string_view a0 = operand(0), a1 = operand(1);
    if (how == Unsigned::reinterpret) {
      // as_int(as_uint(a)+as_uint(b)): the bits of the unsigned result are the wrapped signed one
      put_as(t, u, false).append('(');
      put_as(t, u, true).append('(').append(a0).append(')').append(sym);
      put_as(t, u, true).append('(').append(a1).append("))");
      return t;
    }
    t.append('(');
    if (how == Unsigned::promoted) t.append("((uint)(").append(a0).append("))");
    else t.append(a0);
    t.append(sym);
    if (sym == "-") append_after_minus(t, a1);
    else t.append(a1);
    t.append(')');
    return t;
  }

  // --- integer promotion and signed overflow ----------------------------------------------------------
  // C computes bool, 8- and 16-bit scalar operands in int. The results of AND, OR, XOR, SHR, CMOD
  // and comparisons stay in the dtype's range; the ops below can leave it, and the value must then
  // wrap as the dtype does (`(uchar)200 + (uchar)100` is 44, not 300). Vector operands do not promote.
  // C leaves signed overflow (and a left shift of a negative value) undefined, and compilers use that:
  // clang folds `(long)(x+100)` of an int x into `(long)x+100`. An op whose operand ranges allow it is
  // computed in the unsigned type of its C width instead, where it wraps.

  static constexpr bool promotes(UOp u) {
    const DType dt = u.dtype();
    return numel(u) == 1 && (dt == DType::bool_ || ((is_int(dt) && !is_weak(dt)) && bitsize(dt) < 32));
  }
  /// Whether the C value of `u` (an int under promotion) may lie outside u's dtype: it is converted
  /// back where it is used inline; a declared result converts on assignment.
  static constexpr bool promoted_out_of_range(UOp u) {
    if (!promotes(u)) return false;
    switch (u.op()) {
      case Ops::ADD: case Ops::SUB: case Ops::MUL: case Ops::SHL: case Ops::NEG: return true;
      case Ops::CDIV: return is_signed_int(u.dtype());  // INT8_MIN / -1
      default: return false;
    }
  }
  /// How an integer op avoids signed overflow: not needed (none); a promoted narrow scalar computed
  /// in uint, `((uint)(a))*b`; a 32/64-bit or vector signed op through the unsigned type's bits,
  /// `as_int(as_uint(a)+as_uint(b))`.
  enum class Unsigned : std::uint8_t { none, promoted, reinterpret };
  static constexpr Unsigned unsigned_form(UOp u) {
    const DType dt = u.dtype();
    if (!is_int(dt) || is_weak(dt) || dt == DType::bool_) return Unsigned::none;
    if (!u.in(OpSet{Ops::ADD, Ops::SUB, Ops::MUL, Ops::SHL, Ops::NEG})) return Unsigned::none;
    const bool promoted = promotes(u);
    if (!promoted && !is_signed_int(dt)) return Unsigned::none;  // unsigned arithmetic wraps
    const int bits = promoted ? 32 : bitsize(dt);                 // C computes in int or in dt
    if (!may_overflow(u, bits)) return Unsigned::none;
    return promoted ? Unsigned::promoted : Unsigned::reinterpret;
  }
  /// Whether `x op (y op z)` (u and its second operand s) may be written `x op y op z`, which C
  /// groups as `(x op y) op z`: bitwise ops and wrapping unsigned arithmetic regroup exactly, signed
  /// ints only where `x op y` cannot overflow. Float sums and products round differently, and may
  /// cancel (tinygrad's strip_parens drops the parentheses anyway; docs/DIVERGENCES.md R5), except
  /// in an accumulator's update (x a register load), a reduction whose order is unspecified.
  static constexpr bool regroups_exactly(UOp u, UOp s) {
    if (!u.in(OpSet{Ops::ADD, Ops::MUL})) return true;
    const DType dt = u.dtype();
    if (is_float(dt)) return u.src(0).is(Ops::LOAD) && u.src(0).src(0).addrspace() == AddrSpace::REG;
    if (!is_int(dt)) return true;  // bool
    const bool promoted = promotes(u);
    if (!promoted && !is_signed_int(dt)) return true;
    return !may_overflow(u.op(), u.src(0), s.src(0), promoted ? 32 : bitsize(dt));
  }
  /// Whether the exact result of u, from its operands' value ranges, can leave a signed `bits`-bit
  /// int (or u is a left shift of a possibly negative value, or by a count outside [0, bits)).
  static constexpr bool may_overflow(UOp u, int bits) {
    return may_overflow(u.op(), u.src(0), u.op() == Ops::NEG ? u.src(0) : u.src(1), bits);
  }
  /// The same for `a op b` (b unused for NEG).
  static constexpr bool may_overflow(Ops op, UOp a, UOp b, int bits) {
    using wide = __int128;
    const wide lo_c = -(wide{1} << (bits - 1)), hi_c = (wide{1} << (bits - 1)) - 1;
    const wide a0 = a.vmin(), a1 = a.vmax();
    wide lo = 0, hi = 0;
    if (op == Ops::NEG) {
      lo = -a1, hi = -a0;
    } else {
      const wide b0 = b.vmin(), b1 = b.vmax();
      switch (op) {
        case Ops::ADD: lo = a0 + b0, hi = a1 + b1; break;
        case Ops::SUB: lo = a0 - b1, hi = a1 - b0; break;
        case Ops::MUL: {
          const wide c[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
          lo = hi = c[0];
          for (wide x : c) lo = x < lo ? x : lo, hi = x > hi ? x : hi;
          break;
        }
        default:  // SHL
          if (a0 < 0 || b0 < 0 || b1 >= bits) return true;
          lo = 0, hi = a1 << static_cast<int>(b1);
      }
    }
    return lo < lo_c || hi > hi_c;
  }
  /// Whether a signed 32/64-bit scalar division may compute INT_MIN / -1 (narrow operands divide
  /// in int, where it cannot overflow).
  static constexpr bool may_divide_min_by_minus_one(UOp u) {
    const DType dt = u.dtype();
    if (!is_signed_int(dt) || is_weak(dt) || promotes(u) || numel(u) != 1) return false;
    const std::int64_t min = bitsize(dt) == 64 ? INT64_MIN : -(std::int64_t{1} << (bitsize(dt) - 1));
    return u.src(0).vmin() <= min && u.src(1).vmin() <= -1 && u.src(1).vmax() >= -1;
  }
  static constexpr text put_as_text(UOp u, bool unsigned_) {
    text t;
    put_as(t, u, unsigned_);
    return t;
  }
  /// Appends `as_int` / `as_uint4` (unsigned: the unsigned type of u's dtype, same lanes).
  static constexpr text& put_as(text& t, UOp u, bool unsigned_) {
    DType dt = u.dtype();
    if (unsigned_) {
      switch (dt) {
        case DType::int8: dt = DType::uint8; break;
        case DType::int16: dt = DType::uint16; break;
        case DType::int32: dt = DType::uint32; break;
        default: dt = DType::uint64; break;
      }
    }
    t.append("as_");
    put_type(t, dt, numel(u));
    return t;
  }
  /// `line` (the C text of u) converted back to u's dtype: `((uchar)(a+b))`.
  static constexpr text converted(UOp u, const text& line) {
    text t;
    t.append("((").append(opencl_scalar_type(u.dtype())).append(")(").append(strip_parens_view(line.view())).append("))");
    return t;
  }
  constexpr text call1(std::size_t i, std::string_view fn) const {
    text t;
    t.append(fn).append('(').append(r(i, 0)).append(')');
    return t;
  }
  constexpr void need_srcs(std::size_t i, UOp u, std::size_t lo, std::size_t hi) const {
    if (u.nsrc() < lo || u.nsrc() > hi) {
      text t;
      t.append("has ").append(u.nsrc()).append(" sources, expected ").append(lo);
      if (hi != lo) t.append("..").append(hi);
      reject(i, u, t.view());
    }
  }

  /// Records which helper functions a CUSTOM format calls (`name(`), so their definitions are emitted.
  /// The helpers take and return scalars: a CUSTOM calling one on or into a vector is rejected here
  /// (codegen converts vectors lane by lane) rather than emitted as C that does not compile.
  constexpr void note_helpers(std::size_t i, UOp u) {
    if (u.arg().kind() != ArgKind::string) return;
    const std::string_view f = u.arg().as_string();
    for (std::size_t h = 0; h < std::size(opencl_helpers); ++h) {
      const std::string_view n = opencl_helpers[h].name;
      for (std::size_t p = f.find(n); p != std::string_view::npos; p = f.find(n, p + 1)) {
        const bool starts = p == 0 || !(is_ident_char(f[p - 1]));
        if (!starts || p + n.size() >= f.size() || f[p + n.size()] != '(') continue;
        helpers_used_ |= 1u << h;
        bool vector = numel(u) != 1;
        for (UOp s : u.srcs()) vector = vector || numel(s) != 1;
        if (vector) {
          text t(n);
          reject(i, u, t.append(" takes and returns a scalar; a vector must be converted lane by lane").view());
        }
      }
    }
  }
  static constexpr bool is_ident_char(char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }

  constexpr text format_custom(std::size_t i, UOp u) const {
    if (u.arg().kind() != ArgKind::string) reject(i, u, "CUSTOM arg is not a format string");
    std::string_view f = u.arg().as_string();
    text t;
    std::size_t next = 0;
    for (std::size_t p = 0; p < f.size(); ++p) {
      char c = f[p];
      if ((c == '{' || c == '}') && p + 1 < f.size() && f[p + 1] == c) {
        t.append(c);
        ++p;
        continue;
      }
      if (c == '}') reject(i, u, "unmatched '}' in the CUSTOM format");
      if (c != '{') {
        t.append(c);
        continue;
      }
      std::size_t close = f.find('}', p);
      if (close == std::string_view::npos) reject(i, u, "unmatched '{' in the CUSTOM format");
      std::string_view field = f.substr(p + 1, close - p - 1);
      std::size_t k = 0;
      if (field.empty()) k = next++;
      else
        for (char d : field) {
          if (d < '0' || d > '9') reject(i, u, "CUSTOM format fields must be {} or {N}");
          k = k * 10 + static_cast<std::size_t>(d - '0');
        }
      if (k >= u.nsrc()) reject(i, u, "CUSTOM format refers to a missing source");
      t.append(r(i, k));
      p = close;
    }
    return t;
  }

  /// The text of one instruction (tinygrad/renderer/cstyle.py, the string_rewrite rules).
  constexpr text render(std::size_t i, UOp u, const text& nm, std::int64_t& local_bytes) {
    text t;
    const Ops op = u.op();
    switch (op) {
      case Ops::SPECIAL: {
        need_srcs(i, u, 1, 1);
        if (u.arg().kind() != ArgKind::string) reject(i, u, "SPECIAL arg is not a name");
        std::string_view s = u.arg().as_string();
        std::string_view fn;
        std::string_view digits;
        if (s.starts_with("gidx")) fn = "get_group_id", digits = s.substr(4);
        else if (s.starts_with("lidx")) fn = "get_local_id", digits = s.substr(4);
        else if (s.starts_with("idx")) fn = "get_global_id", digits = s.substr(3);
        if (fn.empty() || digits.size() != 1 || digits[0] < '0' || digits[0] > '2')
          reject(i, u, "SPECIAL name must be gidx<d>, lidx<d> or idx<d> with d in 0..2");
        if (s.front() == 'l' && !target_.has_local) reject(i, u, "the target has no local work-groups");
        const text extent = extent_text(i);
        t.append(fn).append('(').append(digits).append("); /* ").append(extent).append(" */");
        return t;
      }
      case Ops::RANGE: {
        if (u.nsrc() < 1) reject(i, u, "RANGE without a bound");
        if (u.dtype() == DType::void_) return text("for (;;) {");
        t.append("for (").append(opencl_scalar_type(u.dtype())).append(' ').append(nm).append(" = 0; ").append(nm)
            .append(" < ").append(r(i, 0)).append("; ").append(nm).append("++) {");
        return t;
      }
      case Ops::END:
        if (u.nsrc() != 2 || !u.src(1).is(Ops::RANGE))
          reject(i, u, "END must close exactly one RANGE (split multi-range ENDs; loop back-edges are not supported)");
        return text("}");
      case Ops::IF:
        need_srcs(i, u, 1, 2);
        t.append("if (").append(r(i, 0)).append(") {");
        return t;
      case Ops::ENDIF:
        need_srcs(i, u, 1, 1);
        if (!u.src(0).is(Ops::IF)) reject(i, u, "ENDIF's source is not an IF");
        return text("}");
      case Ops::BARRIER:
        if (!target_.has_local) reject(i, u, "the target has no local work-groups (BARRIER)");
        return text("barrier(CLK_LOCAL_MEM_FENCE);");
      case Ops::BUFFER: {
        if (u.arg().kind() != ArgKind::param_arg) reject(i, u, "BUFFER arg is not a ParamArg");
        auto space = u.addrspace();
        auto shp = u.shape();
        if (!shp.has_value()) reject(i, u, "BUFFER without a shape");
        const std::int64_t n = shp.numel();
        if (space && *space == AddrSpace::LOCAL) {
          if (!target_.has_local || !target_.has_shared) reject(i, u, "the target has no __local memory");
          local_bytes += n * itemsize(u.dtype());
          t.append("__attribute__ ((aligned (16))) __local ");
        } else if (!space || *space != AddrSpace::REG) {
          reject(i, u, "a BUFFER must be LOCAL or REG storage");
        }
        t.append(opencl_scalar_type(u.dtype())).append(' ').append(nm).append('[').append(n).append("];");
        return t;
      }
      case Ops::INDEX: case Ops::SHRINK: {
        const UOp base = u.src(0);
        if (is_memory(base)) {
          need_srcs(i, u, op == Ops::INDEX ? 2 : 3, op == Ops::INDEX ? 2 : 3);
          if (op == Ops::SHRINK && !const_int(u.src(2))) reject(i, u, "SHRINK width is not a constant");
          if (op == Ops::INDEX && numel(u) != 1)
            reject(i, u, "INDEX of memory must address one element (flatten multi-dim buffers; no gathers)");
          t.append('(').append(r(i, 0)).append('+').append(r(i, 1)).append(')');
          return t;
        }
        if (op == Ops::SHRINK) reject(i, u, "SHRINK of a value (only memory windows render)");
        need_srcs(i, u, 2, 2);
        const std::int64_t lanes = numel(base);
        if (auto k = const_int(u.src(1))) {
          if (*k < 0 || *k >= lanes) reject(i, u, "lane index out of range");
          t.append(r(i, 0));
          if (lanes > 4) t.append('[').append(*k).append(']');
          else t.append('.').append("xyzw"[*k]);
          return t;
        }
        t.append('(').append(r(i, 0)).append(")[").append(r(i, 1)).append(']');
        return t;
      }
      case Ops::LOAD: {
        need_srcs(i, u, 1, 3);
        if (u.nsrc() == 2) reject(i, u, "a gated LOAD needs (address, alt, gate)");
        if (!is_memory(u.src(0))) reject(i, u, "LOAD address is not memory");
        mark_access(u.src(0), false);
        text ptr = typed_pointer(i, 0, u.dtype(), numel(u));
        if (u.nsrc() == 3) t.append('(').append(r(i, 2)).append("?*").append(ptr).append(':').append(r(i, 1)).append(')');
        else t.append("(*").append(ptr).append(')');
        return t;
      }
      case Ops::STORE: {
        need_srcs(i, u, 2, 3);
        if (u.nsrc() == 3)
          reject(i, u, "a gated STORE must be lowered to IF/STORE/ENDIF first (pm_linearize_cleanups)");
        if (!is_memory(u.src(0))) reject(i, u, "STORE address is not memory");
        mark_access(u.src(0), true);
        const UOp v = u.src(1);
        t.append('*').append(typed_pointer(i, 0, v.dtype(), numel(v))).append(" = ").append(r(i, 1)).append(';');
        return t;
      }
      case Ops::STACK: {
        t.append('(');
        put_type(t, u.dtype(), numel(u));
        t.append(")(");
        for (std::size_t k = 0; k < u.nsrc(); ++k) {
          if (k) t.append(',');
          t.append(r(i, k));
        }
        return t.append(')');
      }
      case Ops::CAST: case Ops::BITCAST: {
        need_srcs(i, u, 1, 1);
        const UOp x = u.src(0);
        if (op == Ops::CAST && x.is(Ops::CONST)) return literal_of(i, u.dtype(), x.arg());
        if (is_memory(x)) {  // pointer cast
          t.append("((").append(space_prefix(x));
          put_type(t, u.dtype(), numel(u));
          t.append("*)(").append(r(i, 0)).append("))");
          return t;
        }
        if (op == Ops::BITCAST) {
          if (itemsize(u.dtype()) * numel(u) != itemsize(x.dtype()) * numel(x))
            reject(i, u, "BITCAST between types of different sizes");
          t.append("as_");
          put_type(t, u.dtype(), numel(u));
          t.append("((");
          put_type(t, x.dtype(), numel(x));
          t.append(")(").append(r(i, 0)).append("))");
          return t;
        }
        if (numel(u) > 1) {
          // OpenCL C casts no vector to another vector type (a C cast there is an error, or a bitcast of
          // equal sizes); lane by lane it is convert_<type>n, whose default rounding is the scalar cast's
          // (to nearest even, toward zero to an integer). The codegen devectorizes casts, but a weak
          // float STACK committed to a half store is float lanes cast to half: tinygrad writes
          // `(half4)((float4)(...))` there, which no OpenCL compiler builds
          if (u.dtype() == DType::bool_ || x.dtype() == DType::bool_)
            reject(i, u, "a vector CAST to or from bool has no OpenCL C form (devectorize it)");
          t.append("convert_");
          put_type(t, u.dtype(), numel(u));
          t.append("(").append(r(i, 0)).append(")");
          return t;
        }
        t.append("((");
        put_type(t, u.dtype(), numel(u));
        t.append(")(").append(r(i, 0)).append("))");
        return t;
      }
      case Ops::ADD: need_srcs(i, u, 2, 2); return binary(i, u, "+");
      case Ops::SUB: need_srcs(i, u, 2, 2); return binary(i, u, "-");
      case Ops::MUL: need_srcs(i, u, 2, 2); return binary(i, u, "*");
      case Ops::CDIV: case Ops::CMOD:
        need_srcs(i, u, 2, 2);
        if (may_divide_min_by_minus_one(u)) {
          // INT_MIN / -1 overflows (x86 traps on it): x / -1 is -x wrapped, x % -1 is 0
          t.append("((").append(r(i, 1)).append("==-1)?");
          if (op == Ops::CMOD) t.append('0');
          else put_as(t, u, false).append("(-").append(put_as_text(u, true)).append('(').append(r(i, 0)).append("))");
          t.append(':').append(binary(i, u, op == Ops::CDIV ? "/" : "%")).append(')');
          return t;
        }
        return binary(i, u, op == Ops::CDIV ? "/" : "%");
      case Ops::CMPLT: need_srcs(i, u, 2, 2); return binary(i, u, "<");
      case Ops::CMPNE: need_srcs(i, u, 2, 2); return binary(i, u, "!=");
      case Ops::CMPEQ: need_srcs(i, u, 2, 2); return binary(i, u, "==");
      case Ops::AND: need_srcs(i, u, 2, 2); return binary(i, u, "&");
      case Ops::OR: need_srcs(i, u, 2, 2); return binary(i, u, "|");
      case Ops::XOR: need_srcs(i, u, 2, 2); return binary(i, u, "^");
      case Ops::SHL: need_srcs(i, u, 2, 2); return binary(i, u, "<<");
      case Ops::SHR: need_srcs(i, u, 2, 2); return binary(i, u, ">>");
      case Ops::WHERE:
        need_srcs(i, u, 3, 3);
        t.append('(').append(r(i, 0)).append('?').append(r(i, 1)).append(':').append(r(i, 2)).append(')');
        return t;
      case Ops::RECIPROCAL:
        need_srcs(i, u, 1, 1);
        t.append("(1/").append(r(i, 0)).append(')');
        return t;
      case Ops::NEG:
        need_srcs(i, u, 1, 1);
        if (u.dtype() == DType::bool_) reject(i, u, "NEG of a bool (use CMPNE with True)");
        if (unsigned_form(u) == Unsigned::reinterpret) {
          put_as(t, u, false).append("(-");
          put_as(t, u, true).append('(').append(r(i, 0)).append("))");
          return t;
        }
        append_after_minus(t.append('-'), r(i, 0).view());
        return t;
      case Ops::SQRT: need_srcs(i, u, 1, 1); return call1(i, "sqrt");
      case Ops::EXP2: need_srcs(i, u, 1, 1); return call1(i, "exp2");
      case Ops::LOG2: need_srcs(i, u, 1, 1); return call1(i, "log2");
      case Ops::SIN: need_srcs(i, u, 1, 1); return call1(i, "sin");
      case Ops::TRUNC: need_srcs(i, u, 1, 1); return call1(i, "trunc");
      case Ops::CUSTOM: case Ops::CUSTOMI:
        note_helpers(i, u);
        return format_custom(i, u);
      case Ops::MAX: case Ops::FDIV: case Ops::POW: case Ops::FLOORDIV: case Ops::FLOORMOD: case Ops::MULACC:
      case Ops::THREEFRY:
        reject(i, u, "no OpenCL rendering: the op must be decomposed in codegen before rendering");
      case Ops::WMMA:
        reject(i, u, "the OpenCL target has no tensor cores (WMMA)");
      default:
        reject(i, u, "this op has no OpenCL rendering (not a linearized-program op)");
    }
  }

  /// Whether the text is substituted into its users instead of getting a line (§4.2).
  constexpr bool inlinable(std::size_t i, UOp u) const {
    const Ops op = u.op();
    if (op == Ops::CAST && numel(u) > 1) return false;
    if (op == Ops::CAST && u.src(0).is(Ops::CONST)) return true;
    if (op == Ops::INDEX || op == Ops::SHRINK || op == Ops::CUSTOMI) return true;
    if (op == Ops::LOAD && u.src(0).addrspace() == AddrSpace::REG && uses_[i] == 1) return true;
    if ((op == Ops::CAST || op == Ops::BITCAST) && is_memory(u.src(0))) return true;
    const bool alu_like = op == Ops::STACK || op == Ops::CAST || op == Ops::BITCAST ||
                          (GroupOp::ALU.contains(op) && op != Ops::WHERE);
    return alu_like && uses_[i] == 1;
  }

  std::span<const UOp> prog_;
  const OpenCLRenderer& target_;
  const Arena* arena_ = nullptr;
  std::vector<int> pos_;  // node id -> instruction index (-1: not in the program)
  std::vector<int> uses_;
  std::vector<text> r_;
  std::vector<std::uint8_t> has_r_;  // (not vector<bool>: clang 14 cannot evaluate it)
  std::vector<std::pair<std::string_view, std::int64_t>> counters_;
  std::vector<KernelParam> params_;
  std::vector<std::size_t> param_pos_;
  bool uses_half_ = false;
  std::uint32_t helpers_used_ = 0;  // bit h: opencl_helpers[h] is called
};

}  // namespace detail

/// Renders a linearized program (instructions in execution order, every source an earlier
/// instruction, the SINK last) to OpenCL C for `target`.
constexpr RenderedKernel render_opencl(std::span<const UOp> program,
                                       const OpenCLRenderer& target = OpenCLRenderer::pocl()) {
  detail::cl_emitter e(program, target);
  return e.run();
}
constexpr RenderedKernel render_opencl(const std::vector<UOp>& program,
                                       const OpenCLRenderer& target = OpenCLRenderer::pocl()) {
  return render_opencl(std::span<const UOp>(program.data(), program.size()), target);
}

}  // namespace uopcg::render
