// The input check of the front stages: a kernel AST (what tinygrad's scheduler emits, or a kernel
// written with the builder) is a SINK of STOREs (or ENDs of them, or a buffer AFTER them), every
// node keeps the IR's rules (verify.hpp's check_node), every RANGE has an integer size, no buffer
// stands where a value belongs, and every op is one a kernel may hold. Anything else fails here
// with one line naming the node, not deep inside a stage.
#pragma once

#include <cstddef>
#include <string_view>

#include "../core/arena.hpp"
#include "../core/graph.hpp"
#include "../core/text.hpp"
#include "../core/verify.hpp"

namespace uopcg::codegen {

namespace detail {

/// The ops a kernel AST may hold: memory and loop structure, values, movement ops on buffers and
/// in-kernel UNSHARD. Scheduler-level ops (CALL, COPY, TUPLE, CONTIGUOUS, ...) and program-level
/// ones (IF, LINEAR, GETADDR, ...) are not kernels.
inline constexpr OpSet kernel_ops = [] {
  using enum Ops;
  return GroupOp::ALU | GroupOp::Movement |
         OpSet{SINK, GROUP, STORE, END, LOAD, INDEX, RANGE, SPECIAL, REDUCE, STAGE, CONST, PARAM,
               BUFFER, NOOP, AFTER, STACK, CAST, BITCAST, UNSHARD, BARRIER, WMMA, CUSTOM, CUSTOMI};
}();

template <class = void>
[[noreturn]] constexpr void bad(UOp u, std::string_view why) {
  fail("front stages: the AST is not a kernel: ", u.arena().describe(u.id()), ' ', why);
}

/// A buffer itself (a PARAM or BUFFER in memory), not a value read from it.
constexpr bool is_raw_buffer(UOp u) {
  return (u.op() == Ops::PARAM || u.op() == Ops::BUFFER) && uopcg::detail::is_memory(u.addrspace());
}

/// Whether source `i` of `u` takes a value: an ALU op's, a CAST's, a RANGE's size, a REDUCE's
/// operand, a STORE's value.
constexpr bool takes_value(UOp u, std::size_t i) {
  using enum Ops;
  return GroupOp::ALU.contains(u.op()) || u.op() == CAST || u.op() == BITCAST || (u.op() == RANGE && i == 0) ||
         (u.op() == REDUCE && i == 0) || (u.op() == STORE && i == 1);
}

constexpr bool is_range_arg(const Arg& a) {
  if (!a.is_tuple() || a.size() < 2 || a[a.size() - 1].kind() != ArgKind::axis_type) return false;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (!a[i].is_int()) return false;
  return true;
}

}  // namespace detail

/// Fails (uopcg::error, one line naming the node) unless `ast` is a kernel AST.
template <class = void>
constexpr void check_kernel_ast(UOp ast) {
  using enum Ops;
  using namespace detail;
  if (ast.op() != SINK) bad(ast, "is not a SINK");
  if (ast.nsrc() == 0) bad(ast, "is a SINK without stores");
  auto is_effect = [](UOp s) { return s.op() == STORE || s.op() == END || s.op() == GROUP; };
  for (UOp s : ast.srcs()) {
    // tinygrad's UOp.set returns the buffer AFTER its store, and a kernel may end in it
    // (test_custom_kernel.py custom_sum, slice_sum_kernel): the AFTER orders nothing after it
    bool after_of_effects = s.op() == AFTER && s.nsrc() >= 2;
    for (std::size_t i = 1; after_of_effects && i < s.nsrc(); ++i) after_of_effects = is_effect(s.src(i));
    if (!is_effect(s) && !after_of_effects)
      bad(s, "is a source of the kernel SINK, which takes only STOREs, ENDs of them, GROUPs and AFTERs of them");
  }
  for (UOp u : toposort(ast)) {
    if (!kernel_ops.contains(u.op())) bad(u, "has an op that a kernel cannot hold");
    if (u.op() == SINK && u != ast) bad(u, "is a second SINK inside the kernel");
    for (std::size_t i = 0; i < u.nsrc(); ++i)
      if (takes_value(u, i) && is_raw_buffer(u.src(i))) {
        text why;
        why.append("takes the buffer ").append(u.arena().describe(u.src(i).id())).append(" as source ").append(i)
            .append(", where a value belongs (an INDEX of the buffer reads one)");
        bad(u, why.view());
      }
    if (u.op() == RANGE) {
      if (!is_range_arg(u.arg())) bad(u, "is a RANGE whose arg is not (axis id, ..., AxisType)");
      // any integer expression: a serial loop may be sized by an enclosing range or by loaded data
      // (a triangular or ragged loop); the verifier refuses a launch dimension so sized
      if (u.nsrc() == 0 || !is_int(u.src(0).dtype())) bad(u, "is a RANGE whose size is not an integer");
    }
    // the IR's own rules (source counts, dtypes, sizes): tinygrad's ASTs keep them, and a stage
    // given a node that breaks them may divide by zero or never finish
    if (text why = check_node(u); !why.empty()) bad(u, why.view());
  }
  if (text why = check_scopes(ast); !why.empty()) {
    fail("kernel AST: ", why);
  }
}

}  // namespace uopcg::codegen
