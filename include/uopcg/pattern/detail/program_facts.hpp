// Compile-time facts over pattern programs: the checks of rule() (captures bound consistently,
// possible source counts) and of rules() (whether an earlier rule's pattern subsumes a later one's).
#pragma once

#include <bit>
#include <cstdint>

#include "../program.hpp"

namespace uopcg::pat::detail {

/// A name bound twice must be able to bind one node that satisfies both. Alternatives exclude each
/// other, so only nodes of one scope (outside alternatives, or in one alternative) are compared.
constexpr bool bindings_consistent(program_view v) {
  for (int i = 0; i < v.count; ++i) {
    const pnode& a = v.nodes[i];
    if (a.name < 0) continue;
    for (int j = i + 1; j < v.count; ++j) {
      const pnode& b = v.nodes[j];
      if (b.name != a.name || b.scope != a.scope) continue;
      bool ops_ok = a.ops.empty() || b.ops.empty() || !(a.ops & b.ops).empty();
      std::uint32_t da = a.any_dtype ? ~0u : a.dtypes, db = b.any_dtype ? ~0u : b.dtypes;
      if (!ops_ok || (da & db) == 0) return false;
    }
  }
  return true;
}

/// False when some node lists a number of sources that none of its ops can have.
constexpr bool src_counts_possible(program_view v) {
  for (int k = 0; k < v.count; ++k) {
    const pnode& n = v.nodes[k];
    bool fixed = n.src == src_form::list || n.src == src_form::prefix || n.src == src_form::perm;
    if (!fixed || n.ops.empty()) continue;
    bool any = false;
    for (int half = 0; half < 2 && !any; ++half)
      for (std::uint64_t bits = half ? n.ops.hi : n.ops.lo; bits != 0 && !any; bits &= bits - 1) {
        SrcCount sc = src_count(static_cast<Ops>(half * 64 + std::countr_zero(bits)));
        any = n.src == src_form::prefix ? sc.allows_at_least(n.nkids) : sc.allows(n.nkids);
      }
    if (!any) return false;
  }
  return true;
}

/// Whether each name is bound once, outside alternatives (no identity constraints).
constexpr bool names_unique(program_view v, int distinct_names) {
  int bound = 0;
  bool seen[max_captures]{};
  for (int k = 0; k < v.count; ++k) {
    const pnode& n = v.nodes[k];
    if (n.name < 0) continue;
    if (n.scope != 0) return false;  // a name inside alternatives: be conservative
    if (seen[n.name]) return false;
    seen[n.name] = true;
    ++bound;
  }
  return bound == distinct_names;
}

constexpr bool arg_subsumes(const arg_test& a, const arg_test& b) {
  switch (a.kind) {
    case arg_test_kind::none: return true;
    case arg_test_kind::int_eq:
    case arg_test_kind::float_eq:
    case arg_test_kind::kind_bits:
    case arg_test_kind::invalid: return a == b;
    default: return false;  // a value of the pattern object or a predicate: unknown at compile time
  }
}

/// Every node that node ib of B matches, node ia of A matches too.
constexpr bool subsumes(program_view A, int ia, program_view B, int ib) {
  const pnode& a = A.nodes[ia];
  const pnode& b = B.nodes[ib];
  if (a.src == src_form::any) {
    for (int i = 0; i < a.nkids; ++i)
      if (subsumes(A, A.kid_index(a, i), B, ib)) return true;
    return false;
  }
  if (b.src == src_form::any) {
    for (int i = 0; i < b.nkids; ++i)
      if (!subsumes(A, ia, B, B.kid_index(b, i))) return false;
    return true;
  }
  bool ops_ok = a.ops.empty() || (!b.ops.empty() && b.ops.subset_of(a.ops));
  std::uint32_t da = a.any_dtype ? ~0u : a.dtypes, db = b.any_dtype ? ~0u : b.dtypes;
  if (!ops_ok || (db & ~da) != 0 || a.check >= 0 || !arg_subsumes(a.arg, b.arg) || !arg_subsumes(a.tag, b.tag))
    return false;
  auto kids = [&](int n) {
    for (int i = 0; i < n; ++i)
      if (!subsumes(A, A.kid_index(a, i), B, B.kid_index(b, i))) return false;
    return true;
  };
  switch (a.src) {
    case src_form::none: return true;
    case src_form::list:
    case src_form::perm: return b.src == a.src && b.nkids == a.nkids && kids(a.nkids);
    case src_form::prefix:
      return (b.src == src_form::list || b.src == src_form::prefix) && a.nkids <= b.nkids && kids(a.nkids);
    case src_form::repeat:
      if (b.src == src_form::repeat) return subsumes(A, A.kid_index(a, 0), B, B.kid_index(b, 0));
      if (b.src == src_form::list) {
        if (b.nkids == 0) return false;
        for (int i = 0; i < b.nkids; ++i)
          if (!subsumes(A, A.kid_index(a, 0), B, B.kid_index(b, i))) return false;
        return true;
      }
      return false;
    case src_form::any: break;
  }
  return false;
}

}  // namespace uopcg::pat::detail
