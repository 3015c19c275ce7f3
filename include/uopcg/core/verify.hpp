// The IR's typing rules (tinygrad's spec, in our words): a graph that breaks them is rejected before
// any pass runs, with an error naming the node. verify() checks every node of a graph; check_node()
// one node. Works in constant evaluation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "arena.hpp"
#include "graph.hpp"
#include "text.hpp"

namespace uopcg {

namespace detail {
constexpr bool is_memory(std::optional<AddrSpace> a) {
  return a && (*a == AddrSpace::GLOBAL || *a == AddrSpace::LOCAL || *a == AddrSpace::REG);
}
// Invalid, possibly reshaped/expanded/stacked into a vector of Invalids.
constexpr bool is_invalid_const(UOp u) {
  while (u.nsrc() > 0 && (u.op() == Ops::RESHAPE || u.op() == Ops::EXPAND || u.op() == Ops::PERMUTE || u.op() == Ops::STACK))
    u = u.src(0);
  return u.op() == Ops::CONST && u.arg().is_invalid();
}
// Weak literals adopt the width of their strong neighbours; Invalid matches any dtype.
constexpr bool dtype_compatible(DType value, DType expected, UOp src) {
  if (value == expected || is_invalid_const(src)) return true;
  // a weak node takes strong operands of its own kind only (a weakint MUL of an fp8 value is no index)
  if (is_weak(expected) && !is_weak(value)) return (is_int(value) && is_int(expected)) || (is_float(value) && is_float(expected));
  if (is_weak(value) || is_weak(expected)) return least_upper_dtype(value, expected) == (is_weak(value) ? expected : value) ||
                                                    (is_int(value) && is_int(expected)) ||
                                                    (is_float(value) && is_float(expected));
  return false;
}
// Whether the graph of `u` holds a RANGE or SPECIAL (a value that varies inside the kernel).
constexpr bool varies_in_kernel(UOp u) {
  constexpr OpSet loop_vars{Ops::RANGE, Ops::SPECIAL};
  if (!u.arena().may_contain(u.id(), loop_vars)) return false;  // the op summary proves it: no walk
  for (UOp x : toposort(u))
    if (loop_vars.contains(x.op())) return true;
  return false;
}
// Axis types that become launch dimensions (gpudims: GLOBAL/THREAD global, LOCAL/WARP/GROUP_REDUCE local).
constexpr bool is_launch_axis(AxisType t) {
  return t == AxisType::GLOBAL || t == AxisType::THREAD || t == AxisType::LOCAL || t == AxisType::WARP ||
         t == AxisType::GROUP_REDUCE;
}
}  // namespace detail

/// Why node `u` breaks the IR's rules, or an empty text when it does not.
constexpr text check_node(UOp u) {
  text why;
  const Ops op = u.op();
  const DType dt = u.dtype();
  const Arg& arg = u.arg();
  const int n = static_cast<int>(u.nsrc());
  auto bad = [&](std::string_view msg) {
    if (why.empty()) why.append(msg);
  };
  if (!src_count(op).allows(n)) {
    text t;
    t.append("has ").append(n).append(" sources, which ").append(name(op)).append(" never has");
    return t;
  }
  if (u.shape().ill_formed()) bad("has an ill-formed shape (mismatched broadcast, bad size or permutation)");
  if (GroupOp::Comparison.contains(op)) {
    if (dt != DType::bool_) bad("is a comparison but its dtype is not bool");
  } else if (op == Ops::WHERE) {
    if (u.src(0).dtype() != DType::bool_) bad("is a WHERE whose condition is not bool");
    for (int i = 1; i < 3; ++i)
      if (!detail::dtype_compatible(u.src(i).dtype(), dt, u.src(i))) bad("is a WHERE whose branch dtype differs from its own");
  } else if (op == Ops::SHL || op == Ops::SHR) {
    if (!is_int(dt) && !is_bool(dt)) bad("shifts a value that is not an integer");
  } else if (GroupOp::Binary.contains(op) || op == Ops::MULACC) {
    if (dt == DType::void_) bad("is an ALU op with dtype void");
    for (UOp s : u.srcs())
      if (!detail::dtype_compatible(s.dtype(), dt, s) && !(is_bool(s.dtype()) && (op == Ops::AND || op == Ops::OR || op == Ops::XOR)))
        bad("has a source whose dtype is incompatible with its own");
    if ((op == Ops::AND || op == Ops::OR || op == Ops::XOR) && is_float(dt)) bad("is a bit operation on a float");
    if ((op == Ops::FLOORDIV || op == Ops::FLOORMOD || op == Ops::CDIV || op == Ops::CMOD) && !is_int(dt))
      bad("is an integer division or modulo whose dtype is not an integer");
  } else if (GroupOp::Unary.contains(op)) {
    if (dt == DType::void_) bad("is an ALU op with dtype void");
  }
  switch (op) {
    case Ops::CAST:
    case Ops::BITCAST:
      if (arg.kind() != ArgKind::dtype || arg.as_dtype() != dt) bad("has an arg that is not its own dtype");
      break;
    case Ops::CONST:
      if (!arg.is_number() && !arg.is_invalid() && arg.kind() != ArgKind::bigint) bad("is a CONST whose arg is not a number or Invalid");
      if (arg.is_float() && !is_float(dt)) bad("is a CONST holding a float in an integer or bool dtype");
      break;
    case Ops::PARAM:
    case Ops::BUFFER:
      if (arg.kind() != ArgKind::param_arg) bad("has an arg that is not a ParamArg");
      else if (arg[1].as_dtype() != dt) bad("has a dtype that differs from its ParamArg's");
      // the shape: an int CONST, a STACK of them, NOOP (unknown), or the empty STACK of a scalar
      // (tinygrad's Variable is PARAM(STACK()) with ALU addrspace)
      if (n == 1 && !is_int(u.src(0).dtype()) && u.src(0).op() != Ops::NOOP &&
          !(u.src(0).op() == Ops::STACK && u.src(0).nsrc() == 0))
        bad("has a size that is not an integer");
      if (n == 1 && u.src(0).op() == Ops::CONST && u.src(0).arg().is_number() && !u.src(0).arg().is_float() &&
          u.src(0).vmax() < 0)
        bad("has a negative size");
      break;
    case Ops::RANGE:
      if (!is_int(dt)) bad("is a RANGE whose dtype is not an integer");
      if (!is_int(u.src(0).dtype())) bad("is a RANGE whose bound is not an integer");
      if (!arg.is_tuple() || arg.size() < 2 || arg[arg.size() - 1].kind() != ArgKind::axis_type)
        bad("is a RANGE whose arg is not (axis id..., AxisType)");
      // a launch dimension's or an UPCAST/UNROLL range's size is one number for the whole kernel
      // (a variable's, at most): one sized by a loop index became `get_local_id(0); /* gidx0 */`, a
      // kernel no launch can size. A serial loop may be sized by an enclosing range or by loaded
      // data (a triangular or ragged loop)
      // a loop that can never run: tinygrad folds empty tensors before code generation, and the
      // stages assume a range holds at least one value (an empty REDUCE linearized out of order)
      else if (u.src(0).vmax() <= 0)
        bad("is an empty RANGE (its size is never above 0): a kernel over no elements has nothing to compute, "
            "and a reduction over none is its identity");
      else if (const AxisType at = arg[arg.size() - 1].as_axis_type();
               (detail::is_launch_axis(at) || at == AxisType::UPCAST || at == AxisType::UNROLL) && detail::varies_in_kernel(u.src(0)))
        bad(detail::is_launch_axis(at)
                ? "is a launch-dimension RANGE (GLOBAL, LOCAL, WARP, THREAD or GROUP_REDUCE) whose size varies inside the kernel (it depends on a RANGE or SPECIAL)"
                : "is an UPCAST/UNROLL RANGE whose size varies inside the kernel (it depends on a RANGE or SPECIAL): its lanes need one size");
      break;
    case Ops::SPECIAL:
      if (!is_int(dt)) bad("is a SPECIAL whose dtype is not an integer");
      if (!is_int(u.src(0).dtype())) bad("is a SPECIAL whose bound is not an integer");
      if (arg.kind() != ArgKind::string) bad("is a SPECIAL whose arg is not its name");
      if (detail::varies_in_kernel(u.src(0))) bad("is a SPECIAL whose size varies inside the kernel (it depends on a RANGE or SPECIAL)");
      break;
    case Ops::LOAD:
      if (!detail::is_memory(u.src(0).addrspace())) bad("loads from something that is not memory (a buffer or an address into one)");
      if (n == 3 && u.src(2).dtype() != DType::bool_) bad("is a gated LOAD whose gate is not bool");
      if (n >= 1 && u.src(0).dtype() != DType::void_ && !detail::dtype_compatible(dt, u.src(0).dtype(), u.src(0)))
        bad("loads a dtype that differs from the memory's");
      break;
    case Ops::STORE:
      if (!detail::is_memory(u.src(0).addrspace())) bad("stores to something that is not memory (a buffer or an address into one)");
      if (dt != DType::void_) bad("is a STORE whose dtype is not void");
      if (n == 3 && u.src(2).dtype() != DType::bool_) bad("is a gated STORE whose gate is not bool");
      // no implicit conversion: an upcast store would reinterpret the value's bits as the buffer's dtype
      if (n >= 2 && u.src(0).dtype() != DType::void_ && !detail::dtype_compatible(u.src(1).dtype(), u.src(0).dtype(), u.src(1)))
        bad("stores a value whose dtype differs from the memory's");
      break;
    case Ops::INDEX:
      if ((u.src(0).op() == Ops::PARAM || u.src(0).op() == Ops::BUFFER) && u.src(0).dtype() != dt)
        bad("indexes a buffer whose element dtype differs from its own");
      // (an INDEX as an index is a gather: before explicit loads an INDEX also stands for its value)
      for (int i = 1; i < n; ++i)
        if ((u.src(i).op() == Ops::PARAM || u.src(i).op() == Ops::BUFFER) && detail::is_memory(u.src(i).addrspace()))
          bad("has an index that is a buffer, not a value");
      for (int i = 1; i < n; ++i)
        if (!is_int(u.src(i).dtype()) && !detail::is_invalid_const(u.src(i)) &&
            !(u.src(i).op() == Ops::WHERE && is_int(u.src(i).src(1).dtype())))
          bad("has an index that is not an integer");
      break;
    case Ops::REDUCE:
      if (!arg.is_tuple() || arg.size() != 2 || arg[0].kind() != ArgKind::op || arg[1].kind() != ArgKind::int_ ||
          !GroupOp::Reduce.contains(arg[0].as_op()))
        bad("is a REDUCE whose arg is not (ADD|MUL|MAX, n_horizontal)");
      // a REDUCE folds values of its own dtype (the lowering builds the accumulator from the value)
      if (n >= 1 && !detail::dtype_compatible(u.src(0).dtype(), dt, u.src(0)))
        bad("is a REDUCE whose value's dtype differs from its own");
      break;
    case Ops::END:
      if (dt != DType::void_) bad("is an END whose dtype is not void");
      // closes RANGEs, or every range inside an index expression, or a bool loop-again condition
      for (int i = 1; i < n; ++i)
        if (!is_int(u.src(i).dtype()) && u.src(i).dtype() != DType::bool_) bad("ends something that is not a range or index expression");
      break;
    case Ops::STAGE:
      if (arg.kind() != ArgKind::bufferize_opts) bad("is a STAGE whose arg is not a BufferizeOpts");
      break;
    case Ops::SINK:
    case Ops::GROUP:
    case Ops::BARRIER:
      if (dt != DType::void_) bad("is a statement whose dtype is not void");
      break;
    default:
      break;
  }
  return why;
}

/// Why a kernel's ranges are out of scope, or an empty text: every RANGE is a loop that something
/// closes — the END of the statements it runs, the REDUCE that folds over it, the STAGE that
/// materializes it — and a node that uses a range outside its closer (a REDUCE's range in the
/// index of the store of its result, say) reads a loop variable that has no value there.
constexpr text check_scopes(UOp root) {
  const std::vector<UOp> order = toposort(root);
  std::vector<UOp> ranges;
  for (UOp u : order)
    if (u.op() == Ops::RANGE) ranges.push_back(u);
  if (ranges.empty()) return {};
  const std::size_t words = (ranges.size() + 63) / 64;
  auto bit_of = [&](UOp r) {
    for (std::size_t i = 0; i < ranges.size(); ++i)
      if (ranges[i] == r) return i;
    return ranges.size();
  };
  // open[k]: the ranges node order[k] depends on that nothing below it closes; ended[k]: the ranges
  // it ends. An AFTER ends what its dependencies end (tinygrad's `ended_ranges`): a buffer read
  // after the END of a loop whose stores it depends on is outside that loop
  std::vector<std::uint64_t> open(order.size() * words, 0), ended(order.size() * words, 0);
  std::vector<std::size_t> slot(root.arena().size(), 0);
  for (std::size_t k = 0; k < order.size(); ++k) slot[order[k].id()] = k;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const UOp u = order[k];
    std::uint64_t* mine = &open[k * words];
    const bool closer = u.op() == Ops::END || u.op() == Ops::REDUCE || u.op() == Ops::STAGE;
    for (std::size_t i = 0; i < u.nsrc(); ++i) {
      const std::uint64_t* s = &open[slot[u.src(i).id()] * words];
      for (std::size_t w = 0; w < words; ++w) mine[w] |= s[w];
    }
    if (u.op() == Ops::RANGE) {
      const std::size_t b = bit_of(u);
      mine[b / 64] |= std::uint64_t{1} << (b % 64);
    }
    std::uint64_t* ends = &ended[k * words];
    if (closer)  // sources 1... name what is closed: ranges, or index expressions whose ranges are
      for (std::size_t i = 1; i < u.nsrc(); ++i) {
        const std::uint64_t* s = &open[slot[u.src(i).id()] * words];
        for (std::size_t w = 0; w < words; ++w) ends[w] |= s[w];
      }
    if (u.op() == Ops::AFTER)
      for (std::size_t i = 1; i < u.nsrc(); ++i) {
        const std::uint64_t* s = &ended[slot[u.src(i).id()] * words];
        for (std::size_t w = 0; w < words; ++w) ends[w] |= s[w];
      }
    for (std::size_t w = 0; w < words; ++w) mine[w] &= ~ends[w];
  }
  const std::uint64_t* at_root = &open[slot[root.id()] * words];
  for (std::size_t b = 0; b < ranges.size(); ++b) {
    if (!(at_root[b / 64] >> (b % 64) & 1)) continue;
    // name the outermost statement it escapes into: a source of the root that has it open
    UOp user = root;
    for (UOp s : root.srcs())
      if (open[slot[s.id()] * words + b / 64] >> (b % 64) & 1) {
        user = s;
        break;
      }
    while ((user.op() == Ops::END || user.op() == Ops::GROUP) && user.nsrc() > 0) {
      UOp next = user;
      for (UOp s : user.srcs())
        if (open[slot[s.id()] * words + b / 64] >> (b % 64) & 1) {
          next = s;
          break;
        }
      if (next == user) break;
      user = next;
    }
    text t;
    t.append(root.arena().describe(ranges[b].id()))
        .append(" is used outside the END, REDUCE or STAGE that closes it, by ")
        .append(root.arena().describe(user.id()))
        .append(" (every RANGE a statement runs under must be closed by an END of it; a REDUCE's ranges exist only inside it)");
    return t;
  }
  return {};
}

/// The message verify() fails with for the graph of `root` (its first node that breaks a rule), or
/// empty text.
constexpr text graph_problem(UOp root, std::string_view what = "verify") {
  for (UOp u : toposort(root)) {
    text why = check_node(u);
    if (!why.empty()) {
      text t;
      t.append(what).append(": ").append(u.arena().describe(u.id())).append(' ').append(why);
      return t;
    }
  }
  return {};
}
/// Checks every node of the graph of `root`; fails naming the first node that breaks a rule.
constexpr void verify(UOp root, std::string_view what = "verify") {
  if (text t = graph_problem(root, what); !t.empty()) fail(t.view());
}
/// The message verify_kernel fails with, or empty text.
constexpr text kernel_problem(UOp root, std::string_view what = "verify") {
  text t = graph_problem(root, what);
  if (t.empty())
    if (text why = check_scopes(root); !why.empty()) t.append(what).append(": ").append(why);
  return t;
}
/// verify(), and for a kernel as it enters code generation (an AST or a post-opts graph, where
/// every loop is still an END, REDUCE or STAGE of its range) that its ranges are in scope. Later
/// stages lower REDUCEs into accumulators and no longer keep that form.
constexpr void verify_kernel(UOp root, std::string_view what = "verify") {
  if (text t = kernel_problem(root, what); !t.empty()) fail(t.view());
}
/// Same, for a linearized program.
constexpr void verify(std::span<const UOp> program, std::string_view what = "verify") {
  for (std::size_t i = 0; i < program.size(); ++i) {
    text why = check_node(program[i]);
    if (!why.empty()) {
      text t;
      t.append(what).append(": instruction ").append(i).append(", ").append(program[i].arena().describe(program[i].id()))
          .append(' ').append(why);
      fail(t.view());
    }
  }
}

}  // namespace uopcg
