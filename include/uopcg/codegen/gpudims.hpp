// Stage 5, "add gpudims" (tinygrad/codegen/gpudims.py, pm_add_gpudims): the parallel axes of the kernel become GPU
// indices. GLOBAL/THREAD ranges turn into `gidx<i>` SPECIALs (the last global axis is gidx0), WARP,
// LOCAL and GROUP_REDUCE ranges into `lidx<i>` (the first local axis is lidx0); without locals
// (KernelInfo::dont_use_locals, Target::use_locals = false, or a renderer without local memory)
// the global axes become `idx<i>`. More axes than the hardware has, or an axis larger than its
// limit, are merged with a neighbour or split by their smallest divisor (get_grouped_dims). A
// global STORE whose index does not use some local axis is gated on that axis being 0: only one
// work-item of the group writes. DEVICE ranges become the `_device_num` variable.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core/builder.hpp"
#include "../core/graph.hpp"
#include "../core/print.hpp"
#include "../pattern/pattern.hpp"
#include "../symbolic/sets.hpp"
#include "target.hpp"

namespace uopcg::codegen {

namespace detail {

/// The value of a size operand that is a constant (looking through CASTs), or nullopt.
constexpr std::optional<std::int64_t> const_size(UOp s) {
  using enum Ops;
  while (s.op() == CAST && s.nsrc() == 1) s = s.src(0);
  if (s.op() == CONST && (s.arg().kind() == ArgKind::int_ || s.arg().is_bool())) return s.arg().as_int();
  return std::nullopt;
}
/// The largest value a size can take.
constexpr std::int64_t dim_max(UOp s) {
  if (auto c = const_size(s)) return *c;
  return s.vmax();
}

/// Merges adjacent dims (the first pair whose product fits) while there are more dims than limits
/// or one is over its limit; nullopt when that is impossible.
constexpr std::optional<std::vector<std::int64_t>> group_dims(std::vector<std::int64_t> dims,
                                                           const std::vector<std::int64_t>& max_sizes) {
  auto over = [&] {
    if (dims.size() > max_sizes.size()) return true;
    for (std::size_t i = 0; i < dims.size(); ++i)
      if (dims[i] > max_sizes[i]) return true;
    return false;
  };
  while (over()) {
    bool merged = false;
    for (std::size_t i = 0; i < max_sizes.size(); ++i) {
      std::int64_t merged_size = 0;
      if (i + 1 < dims.size() && !__builtin_mul_overflow(dims[i], dims[i + 1], &merged_size) && merged_size <= max_sizes[i]) {
        dims[i] = merged_size;
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        merged = true;
        break;
      }
    }
    if (!merged) return std::nullopt;
  }
  return dims;
}

/// Splits an oversized dim by its smallest divisor, moving the factor to the next dim (cyclically
/// over three dims); trailing 1 dropped as tinygrad does.
constexpr std::vector<std::int64_t> split_dims(const std::vector<std::int64_t>& dims,
                                            const std::vector<std::int64_t>& max_sizes) {
  bool fits = true;
  for (std::size_t i = 0; i < dims.size() && i < max_sizes.size(); ++i) fits = fits && dims[i] <= max_sizes[i];
  if (fits) return dims;
  std::vector<std::int64_t> d = dims;
  while (d.size() < 3) d.push_back(1);
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::int64_t limit = i < max_sizes.size() ? max_sizes[i] : INT64_MAX;
    while (d[i] > limit) {
      // the smallest divisor in [2, ceil(sqrt(d))], searched up to 2^21 (a dim past 2^42 without
      // a small factor is no launch size: it comes from a range whose size is not a constant)
      std::int64_t div = 1, root = 1;
      while (root < (std::int64_t{1} << 21) && root * root < d[i]) ++root;
      for (std::int64_t k = 2; k <= root; ++k)
        if (d[i] % k == 0) {
          div = k;
          break;
        }
      if (div == 1) {
        std::string msg = "add gpudims: cannot fit the launch dimensions (";
        for (std::size_t j = 0; j < dims.size(); ++j) {
          if (j) msg += ',';
          msg += std::to_string(dims[j]);  // appended piecewise: g++ -O3 misreads "a" + to_string() (-Wrestrict)
        }
        msg += ") into the device limits: ";
        msg += std::to_string(d[i]);
        msg += " has no divisor to split by";
        fail_runtime(msg);
      }
      d[i] /= div;
      std::int64_t& next = d[(i + 1) % d.size()];
      if (__builtin_mul_overflow(next, div, &next)) fail_runtime("add gpudims: splitting the launch dimensions overflows int64");
    }
  }
  if (d.size() == 3 && d[2] == 1) d.pop_back();
  return d;
}

/// The index expression of each of `dims` (sizes) through SPECIALs named `<prefix><i>`, grouping
/// or splitting the dims to fit `max_sizes` (nullopt: no limits). `reverse`: the last dim gets
/// the SPECIAL numbered 0.
template <class Simplify>
constexpr std::vector<UOp> get_grouped_dims(Arena& a, std::string_view prefix, std::vector<UOp> dims,
                                  const std::optional<std::vector<std::int64_t>>& max_sizes, bool reverse,
                                  Simplify&& simplify) {
  if (reverse) {
    std::reverse(dims.begin(), dims.end());
    auto r = get_grouped_dims(a, prefix, dims, max_sizes, false, simplify);
    std::reverse(r.begin(), r.end());
    return r;
  }
  std::vector<UOp> out;
  if (dims.empty()) return out;
  std::vector<std::int64_t> sizes;
  bool all_const = true;
  for (UOp d : dims) {
    auto c = const_size(d);
    all_const = all_const && c.has_value();
    sizes.push_back(c ? *c : dim_max(d));
  }
  std::vector<std::int64_t> limited = sizes;
  if (max_sizes) {
    auto grouped = group_dims(sizes, *max_sizes);
    limited = grouped ? *grouped : sizes;
    if (limited.size() > max_sizes->size()) {
      std::string msg = "add gpudims: " + std::to_string(sizes.size()) + " " + std::string(prefix) +
                        " dimensions cannot be merged into the device's " + std::to_string(max_sizes->size());
      fail_runtime(msg);
    }
    if (limited == sizes) limited = split_dims(sizes, *max_sizes);
  }
  auto name = [&](std::size_t i) { return text(prefix).append(i); };
  if (limited == sizes) {
    // one SPECIAL per dim: flat // prod(dims[i+1:]) % dims[i] simplifies to the SPECIAL itself
    for (std::size_t i = 0; i < dims.size(); ++i) out.push_back(special(dims[i], name(i).view()));
    return out;
  }
  if (!all_const) fail_runtime("add gpudims: symbolic launch dimensions cannot be grouped or split");
  std::vector<UOp> raw;
  for (std::size_t i = 0; i < limited.size(); ++i) raw.push_back(special(literal(a, limited[i]), name(i).view()));
  UOp flat;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    std::int64_t stride = 1;
    for (std::size_t j = i + 1; j < limited.size(); ++j) stride *= limited[j];
    UOp term = raw[i] * literal(a, stride);
    flat = flat ? flat + term : term;
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::int64_t stride = 1;
    for (std::size_t j = i + 1; j < sizes.size(); ++j) stride *= sizes[j];
    UOp e = floordiv(flat, literal(a, stride));
    if (i != 0) e = floormod(e, literal(a, sizes[i]));
    out.push_back(simplify(e));
  }
  return out;
}

constexpr bool is_local_axis(AxisType t) {
  return t == AxisType::WARP || t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE;
}
constexpr bool is_global_axis(AxisType t) { return t == AxisType::GLOBAL || t == AxisType::THREAD; }

/// x.valid(cond): WHERE(cond, x, Invalid), the Invalid broadcast to x's shape.
constexpr UOp valid_of(UOp x, UOp cond) {
  using enum Ops;
  using enum DType;
  Arena& a = x.arena();
  UOp inv = invalid(a);
  const auto shp = x.shape();
  if (shp.has_value() && shp.size() > 0) {
    std::vector<UOp> dims;
    for (std::size_t i = 0; i < shp.size(); ++i) dims.push_back(literal(a, shp[i]));
    UOp shape_arg = dims.size() == 1 ? dims[0] : a.make(STACK, weakint, dims);
    inv = a.make(EXPAND, bool_, {inv, shape_arg});
  }
  return a.make(WHERE, x.dtype(), {cond, x, inv});
}

struct axis_key {
  std::vector<std::int64_t> id;  // arg[:-1]
  AxisType type;
  UOp range;
};

constexpr std::optional<axis_key> axis_key_of(UOp r) {
  const auto type = range_axis(r);
  if (!type) return std::nullopt;
  const Arg& arg = r.arg();
  axis_key k{{}, *type, r};
  for (std::size_t i = 0; i + 1 < arg.size(); ++i) {
    if (arg[i].kind() != ArgKind::int_) return std::nullopt;
    k.id.push_back(arg[i].as_int());
  }
  return k;
}

}  // namespace detail

/// tinygrad's add_gpudims on the kernel SINK: nullopt when the SINK carries no KernelInfo, when a
/// SPECIAL already exists (hand-written kernels), or when there is no parallel axis.
template <class = void>
constexpr std::optional<UOp> add_gpudims_sink(UOp s, const Target& t) {
  using enum Ops;
  using enum DType;
  using namespace detail;
  if (s.arg().kind() != ArgKind::kernel_info) return std::nullopt;
  const std::vector<UOp> topo = toposort(s);
  for (UOp u : topo)
    if (u.op() == SPECIAL) return std::nullopt;
  // ranges by axis id (the last one seen wins, as a dict would)
  std::vector<axis_key> all;
  for (UOp u : topo) {
    if (u.op() != RANGE) continue;
    auto k = axis_key_of(u);
    if (!k) continue;
    bool replaced = false;
    for (auto& e : all)
      if (e.id == k->id) {
        e = *k;
        replaced = true;
      }
    if (!replaced) all.push_back(*k);
  }
  std::vector<axis_key> globals, locals;
  for (const auto& k : all) {
    if (is_global_axis(k.type)) globals.push_back(k);
    else if (is_local_axis(k.type)) locals.push_back(k);
  }
  if (globals.empty() && locals.empty()) return std::nullopt;
  auto by_id = [](const axis_key& x, const axis_key& y) { return x.id < y.id; };
  std::sort(globals.begin(), globals.end(), by_id);
  std::sort(locals.begin(), locals.end(), by_id);

  Arena& a = s.arena();
  auto simplify = [](UOp e) { return pat::graph_rewrite(e, symbolic::symbolic); };
  std::vector<UOp> global_shape, local_shape;
  for (const auto& k : globals) global_shape.push_back(k.range.src(0));
  for (const auto& k : locals) local_shape.push_back(k.range.src(0));

  const KernelInfo info = KernelInfo::from(s.arg());
  const bool no_locals = info.dont_use_locals || !t.use_locals || !t.renderer.has_local;
  const std::vector<std::int64_t> gmax(t.renderer.global_max.begin(), t.renderer.global_max.end());
  std::vector<UOp> idxs;
  if (no_locals) {
    if (!locals.empty())
      fail("add gpudims: the kernel has local axes (", to_string(locals[0].range), ") but the target does not use local memory");
    idxs = get_grouped_dims(a, "idx", global_shape, gmax, true, simplify);
  } else {
    std::vector<std::int64_t> lmax(t.renderer.local_max.begin(), t.renderer.local_max.end());
    // a WARP axis keeps its own hardware dimension: it must not be merged with other axes
    if (!locals.empty() && locals[0].type == AxisType::WARP) lmax[0] = dim_max(local_shape[0]);
    std::vector<UOp> local_idxs = get_grouped_dims(a, "lidx", local_shape, lmax, false, simplify);
    std::vector<std::int64_t> gm = gmax;
    if (t.renderer.global_prod_max) {
      std::vector<std::int64_t> hw_local;
      for (UOp u : local_idxs)
        if (u.op() == SPECIAL) hw_local.push_back(dim_max(u.src(0)));
      while (hw_local.size() < 3) hw_local.push_back(1);
      for (std::size_t i = 0; i < gm.size(); ++i) gm[i] = std::min(gm[i], *t.renderer.global_prod_max / hw_local[i]);
    }
    idxs = get_grouped_dims(a, "gidx", global_shape, gm, true, simplify);
    idxs.insert(idxs.end(), local_idxs.begin(), local_idxs.end());
  }

  std::vector<std::pair<UOp, UOp>> subs;
  for (UOp r : topo) {
    // a global store that does not use a local axis is done by the work-item where that axis is 0
    if (r.op() == STORE && r.nsrc() >= 1 && r.src(0).nsrc() > 0 &&
        r.src(0).src(0).addrspace() == AddrSpace::GLOBAL) {
      UOp idx = r.src(0);
      std::vector<UOp> missing;
      for (const auto& k : locals)
        if (!in_range(idx, k.range)) missing.push_back(k.range);
      if (!missing.empty()) {
        if (idx.nsrc() != 2)
          fail("add gpudims: the global store address ", to_string(idx), " must have one index");
        UOp mask;
        for (UOp m : missing) {
          UOp c = eq(m, const_(a, m.dtype(), Arg::integer(0)));
          mask = mask ? a.make(MUL, bool_, {mask, c}) : c;
        }
        subs.emplace_back(idx, with_srcs(idx, {idx.src(0), valid_of(idx.src(1), mask)}));
      }
    }
    if (r.op() != RANGE) continue;
    std::size_t pos = 0;
    bool found = false;
    for (const auto& k : globals) {
      if (k.range == r) { found = true; break; }
      ++pos;
    }
    if (!found)
      for (const auto& k : locals) {
        if (k.range == r) { found = true; break; }
        ++pos;
      }
    if (found && pos < idxs.size()) subs.emplace_back(r, idxs[pos]);
  }
  return substitute(s, subs);
}

namespace detail {
/// DEVICE ranges are bound per device at launch: the `_device_num` variable.
constexpr UOp device_var(UOp r) {
  ParamArg p;
  p.slot = -1;
  p.dtype = r.dtype();
  p.vmin_vmax = std::pair<std::int64_t, std::int64_t>{0, r.vmax()};
  p.has_name = true;
  p.name = "_device_num";
  p.addrspace = AddrSpace::ALU;
  return r.arena().make(Ops::PARAM, r.dtype(), {}, p.to_arg());
}
constexpr bool is_device_var(UOp u) {
  return u.op() == Ops::PARAM && u.arg().kind() == ArgKind::param_arg && !u.arg()[4].is_none() &&
         u.arg()[4].as_string() == "_device_num";
}
constexpr bool ends_device_var(UOp e) {
  for (std::size_t i = 1; i < e.nsrc(); ++i)
    if (is_device_var(e.src(i))) return true;
  return false;
}
/// END(body, ranges...) without the device variable among its ranges.
constexpr UOp without_device_var(UOp e) {
  std::vector<UOp> s{e.src(0)};
  for (std::size_t i = 1; i < e.nsrc(); ++i)
    if (!is_device_var(e.src(i))) s.push_back(e.src(i));
  return with_srcs(e, s);
}
}  // namespace detail

/// DEVICE ranges to the `_device_num` variable; ENDs stop closing it.
inline constexpr auto pm_device_to_var = [] {
  using namespace detail;
  using enum Ops;
  return pat::rules(
      pat::rewrite("device range to variable", pat::op<RANGE>, [](auto& m) { return device_var(m.root()); },
                   [](auto& m) {
                     const auto k = axis_key_of(m.root());
                     return k && k->type == AxisType::DEVICE;
                   }),
      pat::rewrite("END drops the device variable", pat::op<END>, [](auto& m) { return without_device_var(m.root()); },
                   [](auto& m) { return ends_device_var(m.root()); }));
}();

/// The stage's rule set: add_gpudims on the SINK (ctx: the Target), then the DEVICE lowering.
inline constexpr auto pm_add_gpudims =
    pat::rules(pat::rule("add gpudims", pat::op<Ops::SINK>, [](const Target& t, auto& m) { return add_gpudims_sink(m.root(), t); })) +
    pm_device_to_var;

/// Stage 5 entry point.
template <class = void>
constexpr UOp add_gpudims(UOp sink, const Target& t) {
  return pat::graph_rewrite(sink, pm_add_gpudims, t, {.name = "add gpudims"});
}

}  // namespace uopcg::codegen
