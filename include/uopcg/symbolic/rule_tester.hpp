// The rule soundness tester (Halide's approach, adapted to rules written as patterns + rewriters):
// for every rule of a set it builds random instances of the rule's pattern (random constants with
// edge values, random leaf variables with random bounds, small random subexpressions), applies the
// rule, and evaluates LHS and RHS under random leaf values with the semantics of fold.hpp. A rule
// whose predicate or rewriter declines an instance is not tested on it.
//
//   auto rep = uopcg::symbolic::check_rule_set("mine", my_rules, {.instances = 10000});
//   if (rep.failures()) print_report(stdout, rep, true);
//
// An instance passes when
//   - the LHS is Invalid (don't care), undefined (C UB: any result refines it) or outside the model
//     (weakint beyond 2^62, transcendental in constant evaluation), or
//   - the RHS has the LHS's value (NaN == NaN, -0.0 == 0.0) and the LHS's dtype, or
//   - the rule is a listed NaN refinement (nan_refinements below) and the RHS is NaN where the LHS
//     is a number.
// Floats follow the snapshot's finite-math assumption: an LHS in which an op turns finite operands
// into inf/NaN is outside the model; literal inf/NaN constants are modelled and propagate.
// Every evaluated int/bool node must also lie within its vmin/vmax (the bounds are checked too), and
// the tester records whether the RHS is ever larger than the LHS under the term order.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/size.hpp>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../pattern/pattern.hpp"
#include "fold.hpp"
#include "render.hpp"
#include "term_order.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

namespace hana = boost::hana;

struct tester_options {
  /// Instances (graph + leaf values) to check per rule.
  std::uint64_t instances = 10000;
  /// Leaf-value assignments evaluated per generated graph.
  int envs_per_graph = 8;
  /// Graph generation attempts per rule, as a multiple of instances / envs_per_graph.
  std::uint64_t attempt_factor = 256;
  std::uint64_t seed = 0x5EEDu;
  /// 0: float results must be equal. > 0: a float result within this relative distance
  /// (|l - r| <= tol * max(1, |l|, |r|)) passes: for the fast-math rules (reciprocal rewrites) that
  /// tinygrad applies knowing they change rounding. Instances where the RHS overflows an
  /// intermediate (finite operands, non-finite result) are then not counted.
  double float_tolerance = 0.0;
};

/// Rules allowed a NaN where the LHS has a number (a NaN refinement): only a NaN operand can cause
/// it, and the rewritten graph carries that NaN on where MAX's `a<b ? b : a` dropped it.
struct nan_refinement {
  std::string_view rule, reason;
};
inline constexpr nan_refinement nan_refinements[] = {
    {"max(-inf, x) is x", "tinygrad folds it by bounds (a padded max pool); MAX's NaN handling depends on operand order anyway"},
};
constexpr bool nan_refinement_allowed(std::string_view rule) {
  for (const auto& e : nan_refinements)
    if (e.rule == rule) return true;
  return false;
}

struct rule_report {
  std::string name;
  std::uint64_t instances = 0;  // checked (LHS defined or Invalid)
  std::uint64_t graphs = 0;     // graphs the rule rewrote
  std::uint64_t attempts = 0;   // graphs generated
  std::uint64_t failures = 0;   // value or dtype mismatches, rewriter errors
  std::uint64_t bound_failures = 0;  // a node's value outside its vmin/vmax
  std::uint64_t nan_refinements = 0;  // NaN results where the LHS has a number (allowed rules only)
  bool evaluable = true;        // false: the pattern's root or leaves are not values (memory ops)
  bool grows = false;           // some RHS larger than its LHS under the term order
  std::string counterexample;   // the first failure
  std::string growth_example;
};

struct set_report {
  std::string name;
  std::vector<rule_report> rules;
  double seconds = 0;
  std::uint64_t instances() const {
    std::uint64_t n = 0;
    for (const auto& r : rules) n += r.instances;
    return n;
  }
  std::uint64_t failures() const {
    std::uint64_t n = 0;
    for (const auto& r : rules) n += r.failures + r.bound_failures;
    return n;
  }
  /// Rules checked on fewer instances than asked for.
  std::vector<const rule_report*> undertested(std::uint64_t wanted) const {
    std::vector<const rule_report*> v;
    for (const auto& r : rules)
      if (r.instances < wanted) v.push_back(&r);
    return v;
  }
};

namespace tester {

struct rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
  bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }
  i128 range(i128 lo, i128 hi) {  // inclusive
    if (hi <= lo) return lo;
    using u128 = unsigned __int128;
    u128 span = static_cast<u128>(hi - lo) + 1;
    u128 r = (static_cast<u128>(next()) << 64) | next();
    return lo + static_cast<i128>(span == 0 ? r : r % span);
  }
};

inline constexpr DType test_dtypes[] = {DType::bool_, DType::int32, DType::int64, DType::uint32,
                                        DType::weakint, DType::float32, DType::float16};

constexpr i128 dt_min(DType d) { return d == DType::weakint ? -(static_cast<i128>(1) << 40) : static_cast<i128>(int_min(d)); }
constexpr i128 dt_max(DType d) {
  if (d == DType::weakint) return static_cast<i128>(1) << 40;
  return static_cast<i128>(int_max_u(d));
}

/// A leaf variable: its node and the range its values are drawn from.
struct leaf {
  UOp node;
  i128 lo, hi;     // ints
  bool is_range;   // RANGE/SPECIAL: [0, bound-1]
  i128 mult = 1;   // a variable's multiple_of: values are multiples of it (lo is one)
};

struct gen_state {
  Arena* a = nullptr;
  rng* r = nullptr;
  DType base = DType::int32;
  std::vector<std::pair<std::string_view, UOp>> bound;
  std::vector<UOp> pool;
  std::vector<leaf> leaves;
  std::vector<i128> consts;  // constants drawn so far (sums/products of them are drawn too)
  std::int64_t next_slot = 0;
  bool failed = false;
  bool unevaluable = false;

  UOp lookup(std::string_view n) const {
    for (const auto& [k, v] : bound)
      if (k == n) return v;
    return UOp();
  }
};

// Drawn only for patterns that allow none of test_dtypes (the threefry word rules: uint64/uint32).
inline constexpr DType extra_dtypes[] = {DType::uint64, DType::uint8, DType::int8, DType::int16, DType::uint16};

inline DType random_dtype(gen_state& g, pat::DTypeSet allowed) {
  DType cand[16];
  int n = 0;
  for (DType d : test_dtypes)
    if (allowed.contains(d)) cand[n++] = d;
  if (n == 0)
    for (DType d : extra_dtypes)
      if (allowed.contains(d)) cand[n++] = d;
  if (n == 0) return DType::void_;
  return cand[g.r->below(static_cast<std::uint64_t>(n))];
}

inline i128 random_int(gen_state& g, DType dt) {
  using enum DType;
  rng& r = *g.r;
  if (dt == bool_) return static_cast<i128>(r.below(2));
  const i128 lo = dt_min(dt), hi = dt_max(dt);
  i128 v = 0;
  int k = static_cast<int>(r.below(100));
  if (k < 30 && !g.consts.empty()) {
    // combine earlier constants: makes predicates like c1*c2 == c3 reachable
    i128 p = g.consts[r.below(g.consts.size())], q = g.consts[r.below(g.consts.size())];
    switch (r.below(4)) {
      case 0: v = wrapping_mul(p, q); break;  // uint64 constants: the product may pass 2^127
      case 1: v = p + q; break;
      case 2: v = p - q; break;
      default: v = -p; break;
    }
  } else if (k < 45) {
    constexpr int small[] = {0, 1, -1, 2, -2, 3, 4, -4, 5, 7, 8, -8, 12, 16, 24, 32, 100, -3, 6, 64};
    v = small[r.below(sizeof(small) / sizeof(small[0]))];
  } else if (k < 60) {
    switch (r.below(4)) {
      case 0: v = lo; break;
      case 1: v = hi; break;
      case 2: v = lo + 1; break;
      default: v = hi - 1; break;
    }
  } else if (k < 90) {
    v = r.range(-200, 200);
  } else {
    v = r.range(lo, hi);
  }
  if (dt != weakint) v = wrap_int(dt, v);
  else if (v < lo || v > hi) v = r.range(-200, 200);
  g.consts.push_back(v);
  return v;
}

inline double random_float(gen_state& g) {
  constexpr double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0, 10.0, 0.1, 1e30, -1e30, 65504.0, 1e-40};
  rng& r = *g.r;
  int k = static_cast<int>(r.below(100));
  if (k < 40) return specials[r.below(sizeof(specials) / sizeof(specials[0]))];
  if (k < 46) return __builtin_huge_val();
  if (k < 50) return -__builtin_huge_val();
  if (k < 54) return __builtin_nan("");
  return static_cast<double>(r.range(-100000, 100000)) / 64.0;
}

inline UOp random_const(gen_state& g, DType dt) {
  if (is_float(dt)) {
    value v = make_float(dt, random_float(g));
    return const_(*g.a, dt, Arg::floating(v.f));
  }
  i128 v = random_int(g, dt);
  if (dt == DType::bool_) return const_(*g.a, dt, Arg::boolean(v != 0));
  return iconst(*g.a, dt, v);
}

inline UOp new_var(gen_state& g, DType dt) {
  using enum DType;
  rng& r = *g.r;
  ParamArg p;
  p.slot = g.next_slot++;
  p.dtype = dt;
  p.addrspace = AddrSpace::ALU;
  p.has_name = true;
  p.name = "v";
  p.name.append(p.slot);
  i128 lo = 0, hi = 1;
  if (is_float(dt)) {
    lo = hi = 0;
  } else if (dt != bool_) {
    i128 dlo = dt_min(dt), dhi = dt_max(dt);
    int k = static_cast<int>(r.below(100));
    if (k < 35) lo = 0, hi = r.range(0, 64);
    else if (k < 50 && !is_unsigned(dt)) hi = r.range(0, 64), lo = -hi;
    else if (k < 70) {
      lo = r.range(-300, 300);
      hi = lo + r.range(0, 300);
      if (is_unsigned(dt) && lo < 0) lo = 0, hi = hi < 0 ? 0 : hi;
    } else {
      lo = dlo, hi = dhi;
    }
    if (lo > dlo || hi < dhi || dt == weakint)
      p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
  }
  // some index variables carry a known divisor (multiple_of); their bounds are multiples of it
  i128 mult = 1;
  if (dt == weakint && r.chance(15)) {
    constexpr int ms[] = {2, 3, 4, 8, 16};
    mult = ms[r.below(sizeof(ms) / sizeof(ms[0]))];
    lo = lo + floor_mod(-lo, mult);
    hi = hi - floor_mod(hi, mult);
    if (hi < lo) hi = lo;
    p.multiple_of = static_cast<std::int64_t>(mult);
    p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
  }
  UOp u = g.a->make(Ops::PARAM, dt, {}, p.to_arg());
  g.leaves.push_back({u, lo, hi, false, mult});
  return u;
}

inline UOp new_range(gen_state& g, DType dt) {
  i128 n = g.r->range(1, 40);
  UOp b = iconst(*g.a, dt, n);
  UOp u = g.a->make(Ops::RANGE, dt, {b}, Arg::tuple_of(g.next_slot++, AxisType::LOOP));
  g.leaves.push_back({u, 0, n - 1, true, 1});
  return u;
}

inline UOp random_leaf(gen_state& g, DType dt, int depth);

/// A small random expression of dtype dt over fresh and earlier leaves.
inline UOp random_expr(gen_state& g, DType dt, int depth) {
  using enum Ops;
  using enum DType;
  rng& r = *g.r;
  Arena& a = *g.a;
  if (dt == bool_) {
    DType it = r.chance(80) ? weakint : int32;
    UOp x = random_leaf(g, it, depth + 1);
    if (r.chance(50)) {  // compare something the instance already uses (bounds it, for valid rules)
      std::vector<UOp> ints;
      for (UOp u : g.pool)
        if (is_int(u.dtype())) ints.push_back(u);
      for (const leaf& l : g.leaves)
        if (is_int(l.node.dtype())) ints.push_back(l.node);
      if (!ints.empty()) {
        x = ints[r.below(ints.size())];
        it = x.dtype();
      }
    }
    switch (r.below(4)) {
      case 0: return lt(x, random_const(g, it));
      case 1: return lt(random_const(g, it), x);
      case 2: return not_(lt(x, random_const(g, it)));
      default: return a.make(r.chance(50) ? AND : OR, bool_, {random_leaf(g, dt, depth + 1), random_leaf(g, dt, depth + 1)});
    }
  }
  UOp x = random_leaf(g, dt, depth + 1);
  if (r.chance(50)) {  // build on what the instance already has
    std::vector<UOp> same;
    for (UOp u : g.pool)
      if (u.dtype() == dt) same.push_back(u);
    for (const leaf& l : g.leaves)
      if (l.node.dtype() == dt) same.push_back(l.node);
    if (!same.empty()) x = same[r.below(same.size())];
  }
  if (is_float(dt)) {
    Ops op = r.chance(50) ? ADD : MUL;
    return a.make(op, dt, {x, random_leaf(g, dt, depth + 1)});
  }
  switch (r.below(7)) {
    case 0: return a.make(ADD, dt, {x, random_leaf(g, dt, depth + 1)});
    case 1: return a.make(MUL, dt, {x, random_const(g, dt)});
    case 2: return a.make(ADD, dt, {x, random_const(g, dt)});
    case 3: {
      UOp c = random_const(g, dt);
      return a.make(r.chance(50) ? FLOORDIV : FLOORMOD, dt, {x, c});
    }
    case 4: return a.make(MAX, dt, {x, random_leaf(g, dt, depth + 1)});
    case 5: return a.make(WHERE, dt, {random_leaf(g, bool_, depth + 1), x, random_leaf(g, dt, depth + 1)});
    default: return a.make(MUL, dt, {x, random_leaf(g, dt, depth + 1)});
  }
}

inline UOp random_leaf(gen_state& g, DType dt, int depth) {
  rng& r = *g.r;
  int k = static_cast<int>(r.below(100));
  if (k < 25) {
    std::vector<UOp> same;
    for (UOp u : g.pool)
      if (u.dtype() == dt) same.push_back(u);
    if (!same.empty()) return same[r.below(same.size())];
  }
  if (k < 30) return random_const(g, dt);
  if (k < 45 && is_int(dt) && !is_unsigned(dt)) return new_range(g, dt);
  if (k < 70 && depth < 2) return random_expr(g, dt, depth);
  return new_var(g, dt);
}

// --- pattern-directed generation ----------------------------------------------------------------

constexpr bool generatable(Ops op) {
  using enum Ops;
  return GroupOp::ALU.contains(op) || op == CAST || op == BITCAST || op == CONST || op == RANGE ||
         op == SPECIAL || op == PARAM || op == INDEX || op == STACK;
}
constexpr bool op_allows(Ops op, DType dt) {
  using enum Ops;
  if (GroupOp::Comparison.contains(op)) return dt == DType::bool_;
  switch (op) {
    case AND: case OR: case XOR: return is_int(dt) || is_bool(dt);
    case SHL: case SHR: case CDIV: case CMOD: case FLOORDIV: case FLOORMOD:
      return is_int(dt);
    case EXP2: case LOG2: case SIN: case SQRT: case RECIPROCAL: case FDIV:
      return is_float(dt);
    case POW: return is_float(dt) || is_int(dt);
    case RANGE: case SPECIAL: return is_int(dt);
    case THREEFRY: return false;
    default: return true;
  }
}
constexpr int default_arity(Ops op) {
  using enum Ops;
  if (GroupOp::Unary.contains(op) || op == CAST || op == BITCAST) return 1;
  if (GroupOp::Binary.contains(op) || op == INDEX) return 2;
  if (GroupOp::Ternary.contains(op)) return 3;
  if (op == STACK) return 3;
  return 0;
}

template <class Pat>
UOp gen(const Pat& p, gen_state& g, DType want);

/// The dtype wanted for source i of op (void: free), given the node's dtype and source 0's.
inline DType operand_dtype(gen_state& g, Ops op, DType dt, std::size_t i, DType first) {
  using enum Ops;
  using enum DType;
  if (GroupOp::Comparison.contains(op)) return i == 0 ? void_ : first;
  if (op == WHERE) return i == 0 ? bool_ : dt;
  if (op == CAST) return void_;
  if (op == BITCAST) {
    for (int k = 0; k < 8; ++k) {
      DType d = random_dtype(g, pat::DTypeSet(pat::DTypeSet::all_bits));
      if (itemsize(d) == itemsize(dt) && d != weakint && d != bool_) return d;
    }
    return dt;
  }
  if (op == INDEX) return i == 0 ? dt : weakint;
  if (GroupOp::Unary.contains(op) && (op == EXP2 || op == LOG2 || op == SIN || op == SQRT || op == RECIPROCAL))
    return dt;
  return dt;
}

template <class Src>
constexpr std::size_t src_len() {
  if constexpr (Src::kind == 1 || Src::kind == 2 || Src::kind == 3)
    return decltype(hana::size(std::declval<typename Src::children>()))::value;
  else
    return 0;
}

template <class Pat>
UOp gen_children_and_build(const Pat& p, gen_state& g, Ops op, DType dt) {
  using enum Ops;
  using enum DType;
  using S = typename Pat::src_type;
  Arena& a = *g.a;
  std::vector<UOp> srcs;
  DType first = void_;
  auto want_for = [&](std::size_t i) { return operand_dtype(g, op, dt, i, first); };
  if constexpr (S::kind == 0) {
    int n = default_arity(op);
    if (op == INDEX) {
      int lanes = 2 + static_cast<int>(g.r->below(3));
      std::vector<UOp> ls;
      for (int k = 0; k < lanes; ++k) ls.push_back(random_leaf(g, dt, 1));
      srcs.push_back(a.make(STACK, dt, ls));
      srcs.push_back(iconst(a, weakint, static_cast<i128>(g.r->below(static_cast<std::uint64_t>(lanes)))));
    } else {
      for (int i = 0; i < n; ++i) {
        DType w = want_for(static_cast<std::size_t>(i));
        if (w == void_) w = random_dtype(g, pat::DTypeSet(pat::DTypeSet::all_bits));
        UOp s = random_leaf(g, w, 1);
        if (i == 0) first = s.dtype();
        srcs.push_back(s);
      }
    }
  } else if constexpr (S::kind == 4) {
    int n = default_arity(op);
    if (n == 0) n = 2;
    for (int i = 0; i < n; ++i) {
      UOp s = gen(p.src_spec.p, g, want_for(static_cast<std::size_t>(i)));
      if (!s) return UOp();
      if (i == 0) first = s.dtype();
      srcs.push_back(s);
    }
  } else {
    constexpr std::size_t n = src_len<S>();
    bool ok = true;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((ok = ok && [&] {
          constexpr OpSet kid_ops = pat::root_ops_v<std::remove_cvref_t<decltype(hana::at_c<I>(p.src_spec.c))>>;
          if (op == INDEX && I == 0 && !kid_ops.empty() && !kid_ops.contains(STACK))
            return false;
          UOp s = gen(hana::at_c<I>(p.src_spec.c), g, want_for(I));
          if (!s) return false;
          if (I == 0) first = s.dtype();
          srcs.push_back(s);
          return true;
        }()),
       ...);
    }(std::make_index_sequence<n>{});
    if (!ok) return UOp();
    if constexpr (S::kind == 3) {
      if (n == 2 && g.r->chance(50)) std::swap(srcs[0], srcs[1]);
    }
  }
  if (static_cast<int>(srcs.size()) < default_arity(op) && op != STACK) return UOp();
  Arg arg;
  if (op == CAST || op == BITCAST) arg = Arg::dtype(dt);
  if (op == RANGE) arg = Arg::tuple_of(g.next_slot++, AxisType::LOOP);
  if (op == SPECIAL) {
    text t;
    t.append("gidx").append(g.next_slot++);
    arg = Arg::string(t.view());
  }
  if (op == STACK) {
    // lanes must share a dtype
    for (UOp s : srcs)
      if (s.dtype() != dt) return UOp();
  }
  if (op == INDEX && (srcs.size() != 2 || srcs[0].op() != STACK)) return UOp();
  UOp u = a.make(op, dt, srcs, arg);
  if (op == RANGE || op == SPECIAL) {
    // a range leaf: values in [0, bound-1] of a constant bound
    UOp b = srcs.empty() ? UOp() : srcs[0];
    if (b && b.op() == CAST && b.nsrc() == 1) b = b.src(0);  // a lowered bound
    if (!b || b.op() != CONST || cval(b) < 1 || cval(b) > (i128(1) << 40)) return UOp();
    g.leaves.push_back({u, 0, cval(b) - 1, true, 1});
  }
  return u;
}

template <class Pat>
UOp gen_const(const Pat& p, gen_state& g, DType dt) {
  using A = typename Pat::arg_type;
  if constexpr (std::is_same_v<A, pat::arg_invalid>) {
    return invalid(*g.a);
  } else if constexpr (std::is_same_v<A, pat::arg_number>) {
    const pat::arg_number& n = p.arg_spec;
    value v = n.kind == ArgKind::float_ ? convert(value::floating(n.f), dt) : convert(value::integer(n.i), dt);
    auto arg = to_arg(v, dt);
    if (!arg) return UOp();
    return const_(*g.a, dt, *arg);
  } else if constexpr (requires { A::value; }) {
    using T = decltype(A::value);
    value v;
    if constexpr (std::is_same_v<T, bool>) v = convert(value::integer(A::value ? 1 : 0), dt);
    else if constexpr (std::is_integral_v<T>) v = convert(value::integer(static_cast<i128>(A::value)), dt);
    else if constexpr (std::is_floating_point_v<T>) v = convert(value::floating(static_cast<double>(A::value)), dt);
    else return UOp();
    auto arg = to_arg(v, dt);
    if (!arg || !v.is_num()) return UOp();
    UOp c = const_(*g.a, dt, *arg);
    return c;
  } else {
    (void)p;
    return random_const(g, dt);
  }
}

template <class Pat>
UOp gen_upat(const Pat& p, gen_state& g, DType want) {
  using enum Ops;
  using enum DType;
  constexpr OpSet O = pat::root_ops_v<Pat>;
  constexpr pat::DTypeSet D = pat::root_dtypes_v<Pat>;
  constexpr auto N = pat::name_v<Pat>;
  if constexpr (!N.empty()) {
    if (UOp b = g.lookup(pat::name_v<Pat>.view())) {
      if (want != void_ && b.dtype() != want && !is_invalid(b)) return UOp();
      return b;
    }
  }
  // the op
  Ops op = NOOP;
  if constexpr (O.empty()) {
    op = NOOP;  // any op: a leaf / small expression
  } else {
    Ops cand[128];
    int n = 0;
    O.for_each([&](Ops o) {
      if (generatable(o)) cand[n++] = o;
    });
    // a pattern over memory or statement ops (without sources to follow) is not a value rule
    bool other = false;
    O.for_each([&](Ops o) { other |= !generatable(o); });
    if (n == 0 || (other && Pat::src_type::kind == 0)) {
      g.unevaluable = true;
      return UOp();
    }
    op = cand[g.r->below(static_cast<std::uint64_t>(n))];
  }
  // the dtype
  DType dt = want;
  if constexpr (std::is_same_v<typename Pat::arg_type, pat::arg_invalid>) {
    UOp u = invalid(*g.a);
    if constexpr (!N.empty()) g.bound.push_back({pat::name_v<Pat>.view(), u});  // name_v, not N: the view outlives this call
    return u;
  }
  if (dt == void_) {
    if (GroupOp::Comparison.contains(op)) dt = bool_;
    else if (D.all() && op_allows(op, g.base) && !(op == CONST && g.r->chance(10))) dt = g.base;
    else dt = random_dtype(g, D);
    if (dt == void_) return UOp();
  } else if (!D.contains(dt) && is_int(dt) && D.contains(weakint)) {
    dt = weakint;  // a weak operand of a strong op (promotion keeps the strong dtype)
  } else if (!D.contains(dt) && is_float(dt) && D.contains(weakfloat)) {
    dt = weakfloat;
  } else if (op == CONST && !is_bool(dt) && g.r->chance(20) && O.size() == 1) {
    // a literal next to a strong operand is often still weak in real graphs
    DType w = is_float(dt) ? weakfloat : weakint;
    if (D.contains(w)) dt = w;
  }
  if (!D.contains(dt) || !evaluable_dtype(dt)) return UOp();
  if (op != NOOP && !op_allows(op, dt)) return UOp();
  UOp u;
  if (op == NOOP) {
    if constexpr (Pat::src_type::kind != 0) return UOp();
    u = random_leaf(g, dt, 0);
  } else if (op == CONST) {
    u = gen_const(p, g, dt);
  } else if (op == PARAM) {
    u = new_var(g, dt);
  } else {
    u = gen_children_and_build(p, g, op, dt);
  }
  if (!u) return UOp();
  if constexpr (!N.empty()) g.bound.push_back({pat::name_v<Pat>.view(), u});  // name_v, not N: the view outlives this call
  g.pool.push_back(u);
  return u;
}

template <class Pat>
UOp gen(const Pat& p, gen_state& g, DType want) {
  if constexpr (requires { p.alts; }) {
    constexpr std::size_t n = decltype(hana::size(p.alts))::value;
    std::size_t pick = g.r->below(n);
    UOp out;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((I == pick ? (void)(out = gen(hana::at_c<I>(p.alts), g, want)) : (void)0), ...);
    }(std::make_index_sequence<n>{});
    return out;
  } else {
    return gen_upat(p, g, want);
  }
}

// --- evaluation -----------------------------------------------------------------------------------

struct env {
  std::vector<std::pair<node_id, value>> leaves;
  std::vector<std::pair<std::int64_t, value>> params;  // variables by slot (a lowered PARAM is the same variable)
  const value* find(node_id id) const {
    for (const auto& [k, v] : leaves)
      if (k == id) return &v;
    return nullptr;
  }
  std::vector<std::pair<std::int64_t, value>> ranges;  // RANGEs by axis id (a lowered RANGE is the same axis)
  const value* find_range(std::int64_t axis) const {
    for (const auto& [k, v] : ranges)
      if (k == axis) return &v;
    return nullptr;
  }
  const value* find_param(std::int64_t slot) const {
    for (const auto& [k, v] : params)
      if (k == slot) return &v;
    return nullptr;
  }
};

inline bool finite_num(const value& v) { return v.is_num() && (!v.is_float || (v.f == v.f && v.f - v.f == 0)); }

struct eval_result {
  value v;
  bool new_nonfinite = false;  // an op made inf/NaN out of finite operands
  bool bounds_violated = false;
  std::string bound_msg;
};

inline eval_result evaluate(UOp root, const env& e, std::vector<value>& memo) {
  using enum Ops;
  eval_result res;
  auto nodes = toposort(root);
  if (memo.size() < root.arena().size()) memo.resize(root.arena().size());
  std::vector<node_id> made_nonfinite;  // ops that turned finite operands into inf/NaN
  for (UOp u : nodes) {
    value v = value::unknown();
    const Ops op = u.op();
    if (const value* lv = e.find(u.id())) {
      v = *lv;
    } else if (op == PARAM && u.arg().kind() == ArgKind::param_arg && e.find_param(u.arg()[0].as_int())) {
      v = convert(*e.find_param(u.arg()[0].as_int()), u.dtype());
    } else if (op == RANGE && u.arg().is_tuple() && u.arg().size() > 0 && u.arg()[0].is_int() &&
               e.find_range(u.arg()[0].as_int())) {
      v = convert(*e.find_range(u.arg()[0].as_int()), u.dtype());
    } else if (op == CONST) {
      v = from_arg(u.arg(), u.dtype());
    } else if (op == CAST && u.nsrc() == 1) {
      v = convert(memo[u.src(0).id()], u.dtype());
    } else if (op == BITCAST && u.nsrc() == 1) {
      v = bitcast_value(memo[u.src(0).id()], u.src(0).dtype(), u.dtype());
    } else if (op == INDEX && u.nsrc() == 2 && u.src(0).op() == STACK) {
      value k = memo[u.src(1).id()];
      if (k.is_num() && !k.is_float && k.i >= 0 && k.i < static_cast<i128>(u.src(0).nsrc()))
        v = convert(memo[u.src(0).src(static_cast<std::size_t>(k.i)).id()], u.dtype());
      else if (!k.is_num()) v = k;
    } else if (GroupOp::ALU.contains(op) && u.nsrc() <= 3) {
      value in[3];
      DType ds[3]{};
      bool all_finite = true;
      for (std::size_t i = 0; i < u.nsrc(); ++i) {
        in[i] = memo[u.src(i).id()];
        ds[i] = u.src(i).dtype();
        all_finite &= finite_num(in[i]) || in[i].kind == vkind::invalid;
      }
      v = eval_alu(op, u.dtype(), std::span<const value>(in, u.nsrc()), std::span<const DType>(ds, u.nsrc()));
      if (all_finite && v.is_num() && v.is_float && !finite_num(v) && op != WHERE) made_nonfinite.push_back(u.id());
    }
    memo[u.id()] = v;
    // the bounds must hold for every int/bool value
    if (v.is_num() && !v.is_float && (is_int(u.dtype()) || is_bool(u.dtype())) && u.vmin() <= u.vmax()) {
      bool skip_hi = u.vmax() == INT64_MAX, skip_lo = u.vmin() == INT64_MIN;
      if ((!skip_lo && v.i < u.vmin()) || (!skip_hi && v.i > u.vmax())) {
        if (!res.bounds_violated) {
          text t;
          t.append("bounds of ").append(render_text(u)).append(" [").append(u.vmin()).append(", ").append(u.vmax())
              .append("] exclude its value ").append(static_cast<std::int64_t>(v.i));
          res.bound_msg = t.str();
        }
        res.bounds_violated = true;
      }
    }
  }
  res.v = memo[root.id()];
  // only an overflow the result depends on leaves the model: a WHERE reads its condition and the
  // chosen arm (an op in the other arm is never evaluated by the rendered select)
  if (!made_nonfinite.empty()) {
    std::vector<char> live(root.arena().size(), 0);
    std::vector<UOp> st{root};
    live[root.id()] = 1;
    while (!st.empty()) {
      UOp u = st.back();
      st.pop_back();
      std::size_t first = 0, last = u.nsrc();
      if (u.op() == WHERE && u.nsrc() == 3) {
        const value& cv = memo[u.src(0).id()];
        if (cv.is_num()) {
          bool taken = cv.is_float ? cv.f != 0 : cv.i != 0;
          if (!live[u.src(0).id()]) live[u.src(0).id()] = 1, st.push_back(u.src(0));
          first = taken ? 1 : 2;
          last = first + 1;
        }
      }
      for (std::size_t i = first; i < last; ++i)
        if (!live[u.src(i).id()]) live[u.src(i).id()] = 1, st.push_back(u.src(i));
    }
    for (node_id id : made_nonfinite) res.new_nonfinite |= live[id] != 0;
  }
  return res;
}

inline std::string value_str(const value& v) {
  switch (v.kind) {
    case vkind::invalid: return "Invalid";
    case vkind::undefined: return "undefined";
    case vkind::unknown: return "unknown";
    default: break;
  }
  text t;
  if (v.is_float) t.append_float(v.f);
  else t.append(static_cast<std::int64_t>(v.i));
  return t.str();
}

inline std::string env_str(const env& e, Arena& a) {
  std::string s;
  for (const auto& [id, v] : e.leaves) {
    if (!s.empty()) s += ", ";
    s += render(a.node(id)) + "=" + value_str(v);
  }
  return s;
}

inline value sample_leaf(rng& r, const leaf& l) {
  DType dt = l.node.dtype();
  if (is_float(dt)) {
    constexpr double fs[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e20, -1e20, 1e-30, 65504.0, 7.25};
    double f = r.chance(40) ? fs[r.below(sizeof(fs) / sizeof(fs[0]))] : static_cast<double>(r.range(-100000, 100000)) / 32.0;
    value v = make_float(dt, f);
    return finite_num(v) ? v : make_float(dt, 1.0);  // leaves are finite (the snapshot's assumption)
  }
  i128 v;
  int k = static_cast<int>(r.below(100));
  if (k < 15) v = l.lo;
  else if (k < 30) v = l.hi;
  else if (k < 40 && l.lo <= 0 && 0 <= l.hi) v = 0;
  else if (k < 50 && l.lo <= 1 && 1 <= l.hi) v = 1;
  else if (k < 55 && l.lo <= -1 && -1 <= l.hi) v = -1;
  else if (k < 80 && (l.lo < -64 ? -64 : l.lo) <= (l.hi > 64 ? 64 : l.hi)) v = r.range(l.lo < -64 ? -64 : l.lo, l.hi > 64 ? 64 : l.hi);
  else v = r.range(l.lo, l.hi);
  if (l.mult > 1) v -= floor_mod(v - l.lo, l.mult);  // a multiple of mult in [lo, v]
  return value::integer(wrap_int(dt, v));
}

}  // namespace tester

/// Checks one rule (the I-th of a set); appends to `out`.
template <class Rule>
rule_report check_rule(const Rule& rule, std::string_view label, const tester_options& opt, std::uint64_t seed) {
  using namespace tester;
  using enum Ops;
  using enum DType;
  rule_report rep;
  rep.name = std::string(label);
  rng r{seed};
  const std::uint64_t envs = static_cast<std::uint64_t>(opt.envs_per_graph > 0 ? opt.envs_per_graph : 1);
  const std::uint64_t max_attempts = (opt.instances / envs + 1) * opt.attempt_factor;
  std::unique_ptr<Arena> arena;
  std::vector<value> memo_l, memo_r;
  std::uint64_t since_reset = 0;
  pat::no_context ctx;
  while (rep.instances < opt.instances && rep.attempts < max_attempts) {
    if (!arena || since_reset >= 64) {
      arena = std::make_unique<Arena>();
      since_reset = 0;
    }
    ++since_reset;
    ++rep.attempts;
    gen_state g;
    g.a = arena.get();
    g.r = &r;
    // index math (weakint) is what most rules are about: a third of the instances use it
    g.base = r.chance(30) ? weakint : test_dtypes[r.below(sizeof(test_dtypes) / sizeof(test_dtypes[0]))];
    UOp lhs = gen(rule.pattern, g, void_);
    if (g.unevaluable) {
      rep.evaluable = false;
      break;
    }
    if (!lhs) continue;
    pat::applied out;
    UOp rhs;
#if UOPCG_HAS_EXCEPTIONS
    // a rewriter that fails is a failure of the rule, reported with its instance
    try {
      if (!pat::detail::apply_one(rule, lhs, ctx, out)) continue;
      rhs = out.result;
    } catch (const uopcg::error& err) {
      ++rep.failures;
      if (rep.counterexample.empty()) rep.counterexample = "rewriter failed on " + render(lhs) + ": " + err.what();
      continue;
    }
#else
    // without exceptions a failing rewriter ends in the error handler
    if (!pat::detail::apply_one(rule, lhs, ctx, out)) continue;
    rhs = out.result;
#endif
    ++rep.graphs;
    if (!is_invalid(rhs) && rhs.dtype() != lhs.dtype()) {
      ++rep.failures;
      if (rep.counterexample.empty())
        rep.counterexample = render(lhs) + " -> " + render(rhs) + ": dtype " + std::string(name(lhs.dtype())) + " became " +
                             std::string(name(rhs.dtype()));
      continue;
    }
    if (!rep.grows && term_cmp(rhs, lhs) > 0) {
      rep.grows = true;
      rep.growth_example = render(lhs) + " -> " + render(rhs);
    }
    // a rule that rarely fires gets more leaf assignments per graph it rewrites
    std::uint64_t n_envs = envs;
    if (rep.attempts > 4096 && rep.graphs * 32 < rep.attempts) n_envs = envs * 8;
    for (std::uint64_t k = 0; k < n_envs && rep.instances < opt.instances; ++k) {
      env e;
      bool empty = false;
      for (const leaf& l : g.leaves) {
        if (l.lo > l.hi) empty = true;
        e.leaves.push_back({l.node.id(), sample_leaf(r, l)});
        if (l.node.op() == PARAM) e.params.push_back({l.node.arg()[0].as_int(), e.leaves.back().second});
        if (l.node.op() == RANGE) e.ranges.push_back({l.node.arg()[0].as_int(), e.leaves.back().second});
      }
      if (empty) break;
      eval_result L = evaluate(lhs, e, memo_l);
      if (L.bounds_violated) {
        ++rep.bound_failures;
        if (rep.counterexample.empty()) rep.counterexample = L.bound_msg + " with " + env_str(e, *arena);
        break;
      }
      if (L.v.kind == vkind::undefined || L.v.kind == vkind::unknown || L.new_nonfinite) continue;
      ++rep.instances;
      if (L.v.kind == vkind::invalid) continue;
      eval_result R = evaluate(rhs, e, memo_r);
      if (R.v.kind == vkind::unknown) {  // the RHS leaves the model (weakint beyond 2^62): not checked
        --rep.instances;
        continue;
      }
      if (opt.float_tolerance > 0 && R.new_nonfinite) {  // fast math: an intermediate overflow is outside the check
        --rep.instances;
        continue;
      }
      bool ok = same(L.v, convert(R.v, lhs.dtype())) && R.v.kind == L.v.kind && !R.new_nonfinite;
      if (!ok && opt.float_tolerance > 0 && L.v.is_num() && R.v.is_num() && L.v.is_float && R.v.is_float &&
          !R.new_nonfinite) {
        const double l = L.v.f, rr = convert(R.v, lhs.dtype()).f;
        const double al = l < 0 ? -l : l, ar = rr < 0 ? -rr : rr, diff = l > rr ? l - rr : rr - l;
        double scale = al > ar ? al : ar;
        if (scale < 1) scale = 1;
        ok = diff <= opt.float_tolerance * scale;  // NaN differences stay failures
      }
      if (!ok && L.v.is_num() && R.v.is_num() && L.v.is_float && R.v.is_float && L.v.f == L.v.f && R.v.f != R.v.f &&
          nan_refinement_allowed(label)) {
        ok = true;
        ++rep.nan_refinements;
      }
      if (R.bounds_violated) {
        ++rep.bound_failures;
        if (rep.counterexample.empty()) rep.counterexample = R.bound_msg + " with " + env_str(e, *arena);
        break;
      }
      if (!ok) {
        ++rep.failures;
        if (rep.counterexample.empty())
          rep.counterexample = render(lhs) + " = " + value_str(L.v) + " but " + render(rhs) + " = " + value_str(R.v) +
                               " with " + env_str(e, *arena);
        break;
      }
    }
  }
  return rep;
}

/// Checks every rule of a rule set.
template <class RS>
set_report check_rule_set(std::string_view set_name, const RS& rs, const tester_options& opt = {}) {
  set_report out;
  out.name = std::string(set_name);
  auto t0 = std::chrono::steady_clock::now();
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (out.rules.push_back(check_rule(hana::at_c<I>(rs.rules), rs.infos[I].label().view(), opt,
                                    opt.seed * 0x100000001B3ull + I * 7919 + 1)),
     ...);
  }(std::make_index_sequence<RS::size>{});
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

/// One line per set (`set <name> rules <n> instances <i> failures <f> seconds <s>`), plus, when
/// verbose, a line per rule and every counterexample.
inline void print_report(std::FILE* out, const set_report& rep, bool verbose = false) {
  std::fprintf(out, "set %s rules %zu instances %llu failures %llu seconds %.2f\n", rep.name.c_str(), rep.rules.size(),
               static_cast<unsigned long long>(rep.instances()), static_cast<unsigned long long>(rep.failures()), rep.seconds);
  for (const auto& r : rep.rules) {
    bool bad = r.failures || r.bound_failures;
    if (!verbose && !bad) continue;
    std::fprintf(out, "  rule %-40s instances %8llu graphs %7llu attempts %8llu failures %llu%s%s", r.name.c_str(),
                 static_cast<unsigned long long>(r.instances), static_cast<unsigned long long>(r.graphs),
                 static_cast<unsigned long long>(r.attempts), static_cast<unsigned long long>(r.failures + r.bound_failures),
                 r.evaluable ? "" : " (not a value rule)", r.grows ? " (grows)" : "");
    if (r.nan_refinements) std::fprintf(out, " (NaN refinements %llu)", static_cast<unsigned long long>(r.nan_refinements));
    std::fputc('\n', out);
    if (!r.counterexample.empty()) std::fprintf(out, "    counterexample: %s\n", r.counterexample.c_str());
  }
}

}  // namespace uopcg::symbolic
