// The term order the rule sets are checked against (docs/symbolic.md "Termination"): a rewrite must
// not make an expression larger. Terms are compared by
//   1. the number of non-CONST nodes of the expression tree (shared subterms counted per use),
//   2. the number of all nodes of the tree,
//   3. the structural order (tinygrad's tuplize) of the root,
// lexicographically. The tree counts saturate at 2^62.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "../core/graph.hpp"
#include "util.hpp"

namespace uopcg::symbolic {

struct term_size {
  std::uint64_t nonconst = 0;
  std::uint64_t total = 0;
};

constexpr term_size measure(UOp root) {
  constexpr std::uint64_t cap = std::uint64_t(1) << 62;
  std::vector<term_size> memo(root.arena().size());
  auto sat = [&](std::uint64_t a, std::uint64_t b) { return a + b > cap ? cap : a + b; };
  for (UOp u : toposort(root)) {
    term_size s{u.op() == Ops::CONST ? 0u : 1u, 1u};
    for (UOp c : u.srcs()) {
      s.nonconst = sat(s.nonconst, memo[c.id()].nonconst);
      s.total = sat(s.total, memo[c.id()].total);
    }
    memo[u.id()] = s;
  }
  return memo[root.id()];
}

/// <0 when a is smaller than b under the term order, 0 when equal, >0 when larger.
constexpr int term_cmp(UOp a, UOp b) {
  if (a == b) return 0;
  term_size x = measure(a), y = measure(b);
  if (x.nonconst != y.nonconst) return x.nonconst < y.nonconst ? -1 : 1;
  if (x.total != y.total) return x.total < y.total ? -1 : 1;
  return structural_cmp(a, b);
}

/// Rules whose output can be larger than their input under the term order, and why each still
/// terminates. tests/symbolic checks that no other rule ever grows a term.
struct growth_exception {
  std::string_view rule;
  std::string_view reason;
};
inline constexpr growth_exception growth_exceptions[] = {
    {"unary of a gate", "the Invalid gate moves toward the root; no rule moves it back"},
    {"binary of a gate (left)", "the Invalid gate moves toward the root; no rule moves it back"},
    {"binary of a gate (right)", "the Invalid gate moves toward the root; no rule moves it back"},
    {"where with a gated condition", "the Invalid gate moves toward the root; no rule moves it back"},
    {"Invalid into the false arm", "Invalid only moves into the false arm, never out of it"},
    {"lift a gate out of the true arm", "the Invalid gate moves toward the root; no rule moves it back"},
    {"lift a gate out of the false arm", "the Invalid gate moves toward the root; no rule moves it back"},
    {"bool x*y", "same size; bool MUL/ADD/MAX become AND/OR, which no rule turns back"},
    {"bool x+y", "same size; bool MUL/ADD/MAX become AND/OR, which no rule turns back"},
    {"bool max(x,y)", "same size; bool MUL/ADD/MAX become AND/OR, which no rule turns back"},
    {"cast(x,bool) is x!=0", "a CAST to bool becomes CMPNE; no rule makes a CAST of a comparison"},
    {"x+x", "grows only for a constant x, which constant folding handles first in every set"},
    {"(y+x)+x", "grows only for a constant x, which constant folding handles first in every set"},
    {"x*c0<c1", "same size; the constant factor shrinks to 1 or -1"},
    {"lt folding by gcd", "the constant factors shrink (divided by their gcd)"},
    {"(x+c)+y", "same size; a constant moves toward the root and never back"},
    {"(x*c)*y", "same size; a constant moves toward the root and never back"},
    {"(x+c)//d, (x+c)%d", "the constant shrinks into [0, d) (or (d, 0]) and is never moved back above it"},
    {"quotient fixed by bounds", "the division or modulo disappears (their number decreases)"},
    {"fold divmod by a constant", "the numerator's factors and constant shrink below the divisor, or a division disappears"},
    {"fold divmod by an expression", "the numerator and divisor lose their common factor, or the divisor's multiples leave the numerator (ties only for x%x, which simple_zeros folds first)"},
    {"low word of x & 0xFFFFFFFF", "same size; the narrowing CAST moves below the mask (toward the leaves) and never back"},
    {"widened x * where(c, 2^32, 0)", "same size; the select moves inside the widening CAST (toward the leaves) and never back"},
    {"simplify under a valid", "applies once per valid: a second application finds nothing new to bound"},
    {"-(x+y)", "a MUL by a constant moves from a sum to its terms (toward the leaves) and never back"},
    {"(x+y)*c", "a MUL by a constant moves from a sum to its terms (toward the leaves) and never back"},
    {"cast through where", "a CAST moves toward the leaves and never back"},
    {"lower weak const", "the number of weakint nodes decreases"},
    {"lower weak variable", "the number of weakint nodes decreases"},
    {"lower weak range", "the number of weakint nodes decreases"},
    {"lower weak unary", "the number of weakint nodes decreases"},
    {"lower weak binary", "the number of weakint nodes decreases"},
    {"lower weak where", "the number of weakint nodes decreases"},
    {"lower weak gate", "the number of weakint nodes decreases"},
    {"strong op of a lowered value (left)", "the number of weakint nodes decreases"},
    {"strong op of a lowered value (right)", "the number of weakint nodes decreases"},
    {"commutative order", "same size; the operands end in structural order (a swap is never undone)"},
    {"where closure", "the condition disappears from the arms"},
    {"(x op c1) op c2 (const first)", "same size; two constants fold into one"},
    {"simplify an AND chain", "clauses only reorder or simplify; a second application finds the chain in order"},
    {"1/(x*x)", "a RECIPROCAL moves from a product to its factors (toward the leaves) and never back"},
    {"1/(x*x*x)", "a RECIPROCAL moves from a product to its factors (toward the leaves) and never back"},
    {"1/(x*c)", "a RECIPROCAL moves from a product to its factors (toward the leaves) and never back"},
    {"x*(1/(1+x))", "the MUL by x disappears; no rule rebuilds x*(1/(1+x))"},
    {"x*(1/(1+x)*y)", "the MUL by x disappears; no rule rebuilds x*(1/(1+x))"},
    {"x*(1/(1+x)+y)", "the MUL by x moves to y; no rule rebuilds x*(1/(1+x))"},
    {"cast(x+c) to a signed int", "same size; a CAST moves toward the leaves and never back"},
    {"long math in int", "the number of int64 operations decreases; no rule widens an op back"},
    {"x**c", "the POW's exponent shrinks (halved, made non-negative, or its half removed) down to x**0 = 1"},
    {"x**c (integer)", "the POW's exponent halves down to x**0 = 1"},
    {"c**x", "the POW disappears; no rule builds a POW"},
    {"pow -> xpow", "the POW disappears; no rule builds a POW"},
    {"lower a comparison (strong left)", "a CAST to weakint disappears (a bool beside it is cast to int); no rule builds one"},
    {"lower a comparison (strong right)", "a CAST to weakint disappears (a bool beside it is cast to int); no rule builds one"},
};
constexpr bool growth_allowed(std::string_view rule) {
  for (const auto& e : growth_exceptions)
    if (e.rule == rule) return true;
  return false;
}

}  // namespace uopcg::symbolic
