// Hand-built linear programs for the render tests: `Program::add(u)` appends u after every source
// of u not yet in the list (in toposort order), so the order of add() calls fixes where statements
// go. Literals are CAST(dtype, CONST weak) as in a linearized tinygrad program. Constexpr.
#pragma once

#include <vector>

#include <uopcg/uopcg.hpp>

#include "../kernels/kernel_sink.hpp"

namespace uopcg_test {

using namespace uopcg;

struct Program {
  Arena& a;
  std::vector<UOp> list{};
  std::vector<std::uint8_t> present{};  // by node id

  constexpr bool has(UOp u) const { return u.id() < present.size() && present[u.id()]; }
  constexpr UOp add(UOp u) {
    // the sources not yet listed, in toposort order (the walk stops at listed nodes)
    for (UOp s : toposort(u, [&](UOp x) { return !has(x); })) {
      if (present.size() <= s.id()) present.resize(s.id() + 1, 0);
      present[s.id()] = 1;
      list.push_back(s);
    }
    return u;
  }
  // literals
  constexpr UOp i32(std::int64_t v) { return cast(literal(a, v), DType::int32); }
  constexpr UOp f32(double v) { return cast(literal(a, v), DType::float32); }
  constexpr UOp lit(DType dt, double v) { return cast(literal(a, v), dt); }
  constexpr UOp ilit(DType dt, std::int64_t v) { return cast(literal(a, v), dt); }
  // definitions
  constexpr UOp global(std::int64_t slot, DType dt, std::int64_t n, bool is_volatile = false) {
    ParamArg p;
    p.slot = slot;
    p.dtype = dt;
    p.addrspace = AddrSpace::GLOBAL;
    p.is_volatile = is_volatile;
    return add(a.make(Ops::PARAM, dt, {i32(n)}, p.to_arg()));
  }
  constexpr UOp var(std::int64_t slot, std::string_view name, std::int64_t lo, std::int64_t hi) {
    ParamArg p;
    p.slot = slot;
    p.dtype = DType::int32;
    p.addrspace = AddrSpace::ALU;
    p.has_name = true;
    p.name = name;
    p.vmin_vmax = std::pair{lo, hi};
    return add(a.make(Ops::PARAM, DType::int32, std::initializer_list<UOp>{}, p.to_arg()));
  }
  constexpr UOp buffer(std::int64_t slot, DType dt, std::int64_t n, AddrSpace space) {
    ParamArg p;
    p.slot = slot;
    p.dtype = dt;
    p.addrspace = space;
    return add(a.make(Ops::BUFFER, dt, {i32(n)}, p.to_arg()));
  }
  constexpr UOp special(std::string_view nm, std::int64_t n) { return add(uopcg::special(i32(n), nm)); }
  constexpr UOp loop(std::int64_t n, std::int64_t axis, AxisType t) { return add(range(i32(n), axis, t)); }
  constexpr UOp make(Ops op, DType dt, std::initializer_list<UOp> srcs, const Arg& arg = Arg()) {
    return add(a.make(op, dt, srcs, arg));
  }
  constexpr UOp shrink(UOp mem, UOp off, std::int64_t n) { return add(a.make(Ops::SHRINK, mem.dtype(), {mem, off, i32(n)})); }
  constexpr UOp finish(UOp last, std::string_view kernel_name = "test") { return add(kernel_sink(last, kernel_name)); }
  constexpr std::span<const UOp> program() const { return list; }
};

}  // namespace uopcg_test
