// The exact race check of the barrier verifier: every work-item of a group is run through the
// program's integer arithmetic (indices, gates, IF conditions, loop bounds), in lockstep from one
// BARRIER to the next, and each LOCAL element touched in a barrier interval is tracked. Two
// different work-items touching one element in one interval, at least one storing, is a race, shown
// with a witness (the work-items, the element, the loop iterations), unless both run one STORE whose
// value provably is the same for the two (same_value). Work-items must all stop at the
// same BARRIER (same loop iteration) or all finish: otherwise the barrier is divergent.
//
// Values the arithmetic cannot know (a LOAD, a kernel variable) are unknown: an access with an
// unknown index may touch any element of its buffer, one under an unknown gate or IF may happen;
// conflicts involving such accesses are reported as "could not prove the accesses disjoint". A loop
// bound, or the condition of an IF holding a BARRIER, that is unknown makes the program
// non-enumerable, as does a group whose work-items times steps exceed the budget; the caller then
// falls back to the symbolic check (barrier_symbolic.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "barrier_eval.hpp"
#include "barrier_program.hpp"

namespace uopcg::codegen::detail::verifier {

struct enumeration_outcome {
  bool done = false;        // false: the program could not be enumerated; `why_not` says why
  text why_not;
  std::vector<BarrierViolation> violations;
};

namespace enumerate {

// One access by one work-item in one barrier interval.
struct rec {
  std::uint32_t item = 0;    // work-item + 1 (0: no record)
  std::uint32_t access = 0;  // index into program_view::accesses
  std::uint32_t state = 0;   // loop iteration context
  std::uint8_t uncertain = 0;  // under an unknown gate, or at an unknown index
  std::int64_t element = 0;
};

// What a LOCAL element saw in the current interval: the last store, and up to two loads by
// different work-items (enough to know whether a load by another work-item than any given one exists).
struct cell {
  std::uint64_t stamp = 0;
  rec writer, reader1, reader2;
};

// A loop iteration context: the iteration `iter` of the RANGE at `range_pos` inside context `parent`.
struct loop_state {
  std::uint32_t parent;
  std::uint32_t range_pos;
  std::int64_t iter;
};

struct frame {
  std::size_t range_pos;
  std::int64_t iter, trip;
  std::uint32_t parent_state;
};

struct item_state {
  std::size_t pc = 0;
  std::vector<frame> loops;
  std::vector<std::size_t> unknown_ifs;  // ENDIF positions of IFs entered on an unknown condition
  std::uint32_t state = 0;
  bool finished = false;
};

// A race candidate between two static accesses; the first instance found is kept as the witness.
struct conflict {
  BarrierViolationKind kind;
  std::uint32_t first, second;  // accesses: for RAW the store then the load, WAR the load then the store
  rec a, b;                     // the two instances (a: of `first`)
  bool loop_carried = false;
  bool proven = true;
};

class enumerator {
 public:
  constexpr enumerator(const program_view& v, std::uint64_t budget) : v_(v), budget_(budget) {}

  constexpr enumeration_outcome run() {
    enumeration_outcome out;
    if (!prepare(out.why_not)) return out;
    const std::uint64_t groups = group_count();
    const std::uint64_t estimate = groups * items_ * static_steps_;
    if (static_steps_ == UINT64_MAX || estimate / std::max<std::uint64_t>(groups * items_, 1) != static_steps_ ||
        estimate > budget_) {
      out.why_not = cat("too large to enumerate (", groups, " group(s) x ", items_, " work-item(s) x ");
      if (static_steps_ == UINT64_MAX) out.why_not << "unbounded";
      else out.why_not << static_steps_;
      out.why_not << " steps > " << budget_ << ")";
      return out;
    }
    for (std::uint64_t g = 0; g < groups; ++g) {
      set_group(g);
      if (!run_group(out)) return out;
      if (diverged_) break;
    }
    out.done = true;
    report(out.violations);
    return out;
  }

 private:
  const program_view& v_;
  std::uint64_t budget_;

  // what is evaluated
  std::vector<std::uint8_t> needed_;          // by node id: a value the check reads
  std::vector<std::uint32_t> slot_;           // by position: value slot of a needed instruction (no_pos: none)
  std::vector<std::uint8_t> active_;          // by position: RANGE/IF whose region must be run
  std::vector<std::uint8_t> has_barrier_;     // by position: RANGE/IF whose region holds a BARRIER
  std::vector<std::uint32_t> access_at_;      // by position: index into accesses (no_pos: none)
  std::size_t nslots_ = 0;
  std::uint64_t static_steps_ = 0;

  // work-items: the local dimensions the arithmetic reads are enumerated, the others only multiply
  struct dim {
    text name;
    std::int64_t extent;
  };
  std::vector<dim> local_dims_, group_dims_;
  std::uint64_t items_ = 1;
  bool clones_ = false;  // work-items differing only in unread local dimensions exist
  std::vector<std::int64_t> group_coord_;

  // per work-item state
  std::vector<item_state> items_state_;
  std::vector<ival> values_;  // items_ x nslots_

  // tracking
  std::uint64_t epoch_ = 0, steps_ = 0;
  std::vector<std::vector<cell>> cells_;       // per buffer (index into buffers_)
  // elements outside the buffer, sorted by element (a std::map is not usable in constant evaluation)
  std::vector<std::vector<std::pair<std::int64_t, cell>>> outside_;
  std::vector<cell> any_, wild_;               // per buffer: any element / accesses at an unknown index
  std::vector<UOp> buffers_;
  std::vector<std::uint32_t> buffer_of_;       // access -> buffer index
  std::vector<std::int64_t> unit_per_elem_, buffer_units_;  // per buffer
  std::vector<std::int64_t> access_units_;     // per access: units touched
  std::vector<loop_state> states_{{0, no_pos, 0}};
  // open addressing over states_ (a state's index + 1; 0: empty), a power of two in size
  std::vector<std::uint32_t> state_table_;
  using conflict_key = std::tuple<int, std::uint32_t, std::uint32_t>;  // kind, the two accesses in order
  std::vector<std::pair<conflict_key, conflict>> conflicts_;         // sorted by key
  // per STORE access: what its value may differ by (see same_value)
  struct value_key {
    bool varies = true;                      // never provably the same (untraced, or an unread local id)
    std::vector<std::size_t> dims;           // enumerated local dims the value reads
    std::vector<UOp> terms;                  // ... read through these (value_dependencies::local_terms)
    std::vector<std::size_t> ranges;         // enclosing RANGE positions the value reads
  };
  std::vector<value_key> value_keys_;
  bool diverged_ = false;
  BarrierViolation divergence_;

  // --- preparation ----------------------------------------------------------------------------------

  // Marks the nodes the value of `root` reads (stopping at loads and at nodes without arithmetic).
  constexpr void need(UOp root, std::vector<UOp>& work) {
    work.clear();
    work.push_back(root);
    while (!work.empty()) {
      UOp u = work.back();
      work.pop_back();
      if (u.id() >= needed_.size()) needed_.resize(u.arena().size(), 0);
      if (needed_[u.id()]) continue;
      needed_[u.id()] = 1;
      if (u.op() == Ops::LOAD || u.op() == Ops::RANGE || u.op() == Ops::SPECIAL || u.op() == Ops::PARAM ||
          u.op() == Ops::BUFFER || u.op() == Ops::CONST)
        continue;
      for (UOp s : u.srcs()) work.push_back(s);
    }
  }
  constexpr void activate(std::size_t region, std::vector<UOp>& work, bool& changed) {
    for (std::size_t p = region; p != npos; p = v_.parent[p]) {
      if (active_[p]) continue;
      active_[p] = 1;
      changed = true;
      need(v_.prog[p].src(0), work);
    }
  }

  constexpr bool prepare(text& why_not) {
    const std::size_t n = v_.prog.size();
    Arena& a = v_.prog[0].arena();
    needed_.assign(a.size(), 0);
    active_.assign(n, 0);
    has_barrier_.assign(n, 0);
    access_at_.assign(n, no_pos);
    std::vector<UOp> work;
    bool changed = false;
    for (std::size_t k = 0; k < v_.accesses.size(); ++k) {
      const local_access& acc = v_.accesses[k];
      access_at_[acc.pos] = static_cast<std::uint32_t>(k);
      if (acc.index.valid()) need(acc.index, work);
      for (UOp g : acc.gates) need(g, work);
      if (v_.parent[acc.pos] != npos) activate(v_.parent[acc.pos], work, changed);
    }
    for (std::size_t b : v_.barriers)
      for (std::size_t p = v_.parent[b]; p != npos; p = v_.parent[p]) {
        has_barrier_[p] = 1;
        activate(p, work, changed);
      }
    // a needed instruction inside a region makes the region run
    do {
      changed = false;
      for (std::size_t i = 0; i < n; ++i)
        if (needed_[v_.prog[i].id()]) {
          const std::size_t region = v_.prog[i].op() == Ops::RANGE ? i : v_.parent[i];
          if (region != npos) activate(region, work, changed);
        }
    } while (changed);
    slot_.assign(n, no_pos);
    for (std::size_t i = 0; i < n; ++i)
      if (needed_[v_.prog[i].id()]) slot_[i] = static_cast<std::uint32_t>(nslots_++);

    // work-items and groups
    std::vector<std::pair<text, std::int64_t>> locals, groups;
    auto add_dim = [&](std::vector<std::pair<text, std::int64_t>>& dims, UOp s) {
      const std::string_view nm = s.arg().as_string();
      for (const auto& d : dims)
        if (d.first == nm) return;
      dims.push_back({text(nm), extent_of(s)});
    };
    for (std::size_t i = 0; i < n; ++i) {
      UOp u = v_.prog[i];
      if (is_local_id(u)) add_dim(locals, u);
    }
    for (std::size_t id = 0; id < needed_.size(); ++id)
      if (needed_[id]) {
        UOp u = a.node(static_cast<node_id>(id));
        if (is_local_id(u)) add_dim(locals, u);
        if (is_group_id(u)) add_dim(groups, u);
      }
    std::uint64_t clones = 1;
    for (const auto& [nm, extent] : locals) {
      if (extent <= 0 || extent > (1 << 20)) {
        why_not = cat("the local dimension ", nm, " has no small constant size");
        return false;
      }
      bool read = false;
      for (std::size_t id = 0; id < needed_.size() && !read; ++id) {
        UOp u = a.node(static_cast<node_id>(id));
        read = needed_[id] && is_local_id(u) && nm == u.arg().as_string();
      }
      if (read) {
        local_dims_.push_back({nm, extent});
        items_ *= static_cast<std::uint64_t>(extent);
      } else {
        clones *= static_cast<std::uint64_t>(extent);
      }
      if (items_ > budget_) {
        why_not = cat("too large to enumerate (more than ", budget_, " work-items)");
        return false;
      }
    }
    clones_ = clones > 1;
    for (const auto& [nm, extent] : groups) {
      if (extent <= 0 || extent > (1 << 24)) {
        why_not = cat("the group dimension ", nm, " has no small constant size");
        return false;
      }
      group_dims_.push_back({nm, extent});
    }

    // buffers and units
    for (std::size_t k = 0; k < v_.accesses.size(); ++k) {
      const local_access& acc = v_.accesses[k];
      auto it = std::find(buffers_.begin(), buffers_.end(), acc.buffer);
      std::uint32_t b = static_cast<std::uint32_t>(it - buffers_.begin());
      if (it == buffers_.end()) {
        buffers_.push_back(acc.buffer);
        const std::int64_t unit = unit_bytes(v_, acc.buffer);
        unit_per_elem_.push_back(std::max<std::int64_t>(1, itemsize(acc.buffer.dtype()) / unit));
        const auto s = acc.buffer.shape();
        const std::int64_t numel = s.has_value() ? s.numel() : 0;
        buffer_units_.push_back(numel > 0 && numel < (1 << 24) ? numel * unit_per_elem_.back() : 0);
      }
      buffer_of_.push_back(b);
      const std::int64_t unit = std::max<std::int64_t>(1, itemsize(acc.buffer.dtype()) / unit_per_elem_[b]);
      access_units_.push_back(std::max<std::int64_t>(1, (acc.bytes + unit - 1) / unit));
    }
    cells_.resize(buffers_.size());
    for (std::size_t b = 0; b < buffers_.size(); ++b) cells_[b].resize(static_cast<std::size_t>(buffer_units_[b]));
    outside_.resize(buffers_.size());
    any_.resize(buffers_.size());
    wild_.resize(buffers_.size());

    value_keys_.resize(v_.accesses.size());
    for (std::size_t k = 0; k < v_.accesses.size(); ++k)
      if (v_.accesses[k].is_store) value_keys_[k] = key_of(k);

    static_steps_ = estimate_steps();
    compile();
    return true;
  }

  constexpr value_key key_of(std::size_t k) const {
    value_key key;
    const std::size_t pos = v_.accesses[k].pos;
    const value_dependencies deps = store_value_dependencies(v_, pos);
    if (deps.untraced) return key;
    for (UOp l : deps.local_ids) {
      std::size_t d = 0;
      while (d < local_dims_.size() && !(local_dims_[d].name == l.arg().as_string())) ++d;
      if (d == local_dims_.size()) return key;  // a clone dimension: clones store different values
      if (std::find(key.dims.begin(), key.dims.end(), d) == key.dims.end()) key.dims.push_back(d);
    }
    key.terms = deps.local_terms;
    const std::vector<std::size_t> around = v_.enclosing(pos);
    for (std::size_t r : deps.ranges)
      if (std::find(around.begin(), around.end(), r) != around.end()) key.ranges.push_back(r);
    key.varies = false;
    return key;
  }

  // Steps one work-item takes at most: instructions run, times the trip counts of the loops around.
  constexpr std::uint64_t estimate_steps() const {
    std::uint64_t total = 0;
    std::vector<std::uint64_t> mult{1};
    const std::size_t n = v_.prog.size();
    for (std::size_t i = 0; i < n; ++i) {
      UOp u = v_.prog[i];
      total += mult.back();
      if (total > budget_) return UINT64_MAX;
      if (u.op() == Ops::RANGE) {
        if (!active_[i]) {
          i = v_.match[i] - 1;  // the END is counted next
          continue;
        }
        const std::int64_t trip = u.src(0).vmax();
        if (trip == INT64_MAX) return UINT64_MAX;
        const std::uint64_t t = static_cast<std::uint64_t>(std::max<std::int64_t>(trip, 0));
        if (t != 0 && mult.back() > budget_ / t) return UINT64_MAX;
        mult.push_back(mult.back() * t);
      } else if (u.op() == Ops::END) {
        for (std::size_t r : v_.closes[i])
          if (active_[r] && mult.size() > 1) mult.pop_back();
      } else if (u.op() == Ops::IF && !active_[i]) {
        i = v_.match[i] - 1;
      }
    }
    return total;
  }

  constexpr std::uint64_t group_count() const {
    std::uint64_t g = 1;
    for (const dim& d : group_dims_) {
      g *= static_cast<std::uint64_t>(d.extent);
      if (g > budget_) return budget_ + 1;
    }
    return g;
  }
  constexpr void set_group(std::uint64_t g) {
    group_coord_.assign(group_dims_.size(), 0);
    for (std::size_t d = 0; d < group_dims_.size(); ++d) {
      group_coord_[d] = static_cast<std::int64_t>(g % static_cast<std::uint64_t>(group_dims_[d].extent));
      g /= static_cast<std::uint64_t>(group_dims_[d].extent);
    }
  }
  constexpr std::int64_t local_coord(std::uint32_t item, std::size_t d) const {
    std::uint64_t x = item;
    for (std::size_t k = 0; k < d; ++k) x /= static_cast<std::uint64_t>(local_dims_[k].extent);
    return static_cast<std::int64_t>(x % static_cast<std::uint64_t>(local_dims_[d].extent));
  }

  // --- evaluation -------------------------------------------------------------------------------------

  // Where an instruction's operand comes from: a slot, a constant, a local or group coordinate, or
  // (a node outside the program) the general evaluation.
  struct operand {
    enum kind_t : std::uint8_t { slot, constant, local, group, other } kind = other;
    std::uint32_t index = 0;
    ival value;
    UOp node;
  };
  struct instr {
    UOp u;
    Ops op{};
    DType dt{};
    bool fast = false;  // detail::fast_alu applies
    std::uint8_t n = 0;
    operand src[3];
  };
  // what the run does at a position
  enum step_kind : std::uint8_t { skip, range_step, end_step, if_step, endif_step, barrier_step, work };
  std::vector<std::uint8_t> kind_;
  std::vector<std::uint32_t> next_;  // the next position that is not `skip`
  std::vector<instr> code_;                   // by slot
  std::vector<operand> index_of_, gates_of_;  // by access (gates flattened, gate_first_ by access)
  std::vector<std::uint32_t> gate_first_;
  std::vector<std::int64_t> coords_;          // items_ x local dims

  constexpr operand operand_for(UOp x) const {
    operand o;
    o.node = x;
    if (x.op() == Ops::SPECIAL) {
      const std::string_view nm = x.arg().kind() == ArgKind::string ? x.arg().as_string() : std::string_view{};
      for (std::size_t d = 0; d < local_dims_.size(); ++d)
        if (local_dims_[d].name == nm) return o.kind = operand::local, o.index = static_cast<std::uint32_t>(d), o;
      for (std::size_t d = 0; d < group_dims_.size(); ++d)
        if (group_dims_[d].name == nm) return o.kind = operand::group, o.index = static_cast<std::uint32_t>(d), o;
      return o.kind = operand::constant, o;  // unknown
    }
    if (x.op() == Ops::CONST) return o.kind = operand::constant, o.value = compute_from(x, nullptr), o;
    if (auto p = v_.position(x); p && slot_[*p] != no_pos) return o.kind = operand::slot, o.index = slot_[*p], o;
    if (x.op() == Ops::RANGE || x.op() == Ops::LOAD) return o.kind = operand::constant, o;  // unknown here
    return o;
  }
  constexpr void compile() {
    code_.assign(nslots_, instr{});
    for (std::size_t i = 0; i < v_.prog.size(); ++i) {
      if (slot_[i] == no_pos) continue;
      UOp u = v_.prog[i];
      instr& c = code_[slot_[i]];
      c.u = u;
      c.op = u.op();
      c.dt = u.dtype();
      c.fast = GroupOp::ALU.contains(u.op()) && fast_alu_applies(u);
      c.n = static_cast<std::uint8_t>(u.nsrc() < 3 ? u.nsrc() : 3);
      for (std::size_t k = 0; k < c.n; ++k) c.src[k] = operand_for(u.src(k));
    }
    for (const local_access& acc : v_.accesses) {
      index_of_.push_back(acc.index.valid() ? operand_for(acc.index) : operand{operand::constant, 0, {}, UOp()});
      gate_first_.push_back(static_cast<std::uint32_t>(gates_of_.size()));
      for (UOp g : acc.gates) gates_of_.push_back(operand_for(g));
    }
    gate_first_.push_back(static_cast<std::uint32_t>(gates_of_.size()));
    const std::size_t n = v_.prog.size();
    kind_.assign(n, skip);
    for (std::size_t i = 0; i < n; ++i) {
      switch (v_.prog[i].op()) {
        case Ops::RANGE: kind_[i] = range_step; break;
        case Ops::END: kind_[i] = end_step; break;
        case Ops::IF: kind_[i] = if_step; break;
        case Ops::ENDIF: kind_[i] = endif_step; break;
        case Ops::BARRIER: kind_[i] = barrier_step; break;
        default: kind_[i] = slot_[i] != no_pos || access_at_[i] != no_pos ? work : skip;
      }
    }
    next_.assign(n + 1, static_cast<std::uint32_t>(n));
    for (std::size_t i = n; i-- > 0;) next_[i] = kind_[i] != skip ? static_cast<std::uint32_t>(i) : next_[i + 1];
    coords_.assign(static_cast<std::size_t>(items_) * local_dims_.size(), 0);
    for (std::uint32_t it = 0; it < items_; ++it)
      for (std::size_t d = 0; d < local_dims_.size(); ++d) coords_[it * local_dims_.size() + d] = local_coord(it, d);
  }

  constexpr ival value(const operand& o, std::uint32_t item) const {
    switch (o.kind) {
      case operand::slot: return values_[static_cast<std::size_t>(item) * nslots_ + o.index];
      case operand::constant: return o.value;
      case operand::local: return ival::of(coords_[item * local_dims_.size() + o.index]);
      case operand::group: return ival::of(group_coord_[o.index]);
      case operand::other: break;
    }
    return eval(o.node, item);
  }
  // The value of u for a work-item: instructions already run are read from their slots.
  constexpr ival eval(UOp u, std::uint32_t item) const {
    return evaluate(u, [&](UOp x) -> std::optional<ival> {
      operand o = operand_for(x);
      if (o.kind == operand::other) return std::nullopt;
      return value(o, item);
    });
  }
  // The value of the instruction at position pc (slot s), run now by a work-item.
  constexpr ival compute(std::uint32_t s, std::uint32_t item) const {
    const instr& c = code_[s];
    if (c.op == Ops::SPECIAL) return value(operand_for(c.u), item);
    ival in[3];
    for (std::size_t k = 0; k < c.n; ++k) in[k] = value(c.src[k], item);
    if (c.fast)
      if (std::optional<ival> f = detail::fast_alu(c.op, c.dt, in, c.n)) return *f;
    return compute_from(c.u, in);
  }

  static constexpr std::uint64_t state_hash(std::uint32_t parent, std::uint32_t range_pos, std::int64_t iter) {
    std::uint64_t k = (static_cast<std::uint64_t>(parent) << 40) ^ (static_cast<std::uint64_t>(range_pos) << 20) ^
                      static_cast<std::uint64_t>(iter);
    k ^= k >> 33;  // spread the fields over the low bits the table reads
    k *= 0xff51afd7ed558ccdULL;
    return k ^ (k >> 33);
  }
  // The state of iteration `iter` of the RANGE at `range_pos` inside state `parent`, made once.
  constexpr std::uint32_t intern(std::uint32_t parent, std::size_t range_pos, std::int64_t iter) {
    if (2 * (states_.size() + 1) > state_table_.size()) {  // at most half full
      state_table_.assign(std::max<std::size_t>(64, 2 * state_table_.size()), 0);
      for (std::size_t s = 1; s < states_.size(); ++s) place(static_cast<std::uint32_t>(s));
    }
    const std::uint32_t rp = static_cast<std::uint32_t>(range_pos);
    const std::size_t mask = state_table_.size() - 1;
    for (std::size_t h = state_hash(parent, rp, iter) & mask;; h = (h + 1) & mask) {
      const std::uint32_t s = state_table_[h];
      if (s == 0) {
        states_.push_back({parent, rp, iter});
        state_table_[h] = static_cast<std::uint32_t>(states_.size());
        return static_cast<std::uint32_t>(states_.size() - 1);
      }
      const loop_state& x = states_[s - 1];
      if (x.parent == parent && x.range_pos == rp && x.iter == iter) return s - 1;
    }
  }
  constexpr void place(std::uint32_t s) {
    const std::size_t mask = state_table_.size() - 1;
    std::size_t h = state_hash(states_[s].parent, states_[s].range_pos, states_[s].iter) & mask;
    while (state_table_[h] != 0) h = (h + 1) & mask;
    state_table_[h] = s + 1;
  }
  // The cell of element `e` of buffer `b` outside the buffer's bounds, made on first use.
  constexpr cell& outside_cell(std::uint32_t b, std::int64_t e) {
    auto& o = outside_[b];
    auto it = std::lower_bound(o.begin(), o.end(), e, [](const std::pair<std::int64_t, cell>& x, std::int64_t k) { return x.first < k; });
    if (it == o.end() || it->first != e) it = o.insert(it, {e, cell{}});
    return it->second;
  }
  // " (loop %3 at 1, loop %7 at 0)": the iterations of the loops around an instance
  constexpr text iterations(std::uint32_t s) const {
    text out;
    for (auto [rp, it] : chain(s)) out << (out.empty() ? " (loop %" : ", loop %") << rp << " at " << it;
    if (!out.empty()) out << ")";
    return out;
  }
  constexpr std::vector<std::pair<std::uint32_t, std::int64_t>> chain(std::uint32_t s) const {
    std::vector<std::pair<std::uint32_t, std::int64_t>> out;
    for (; s != 0; s = states_[s].parent) out.push_back({states_[s].range_pos, states_[s].iter});
    std::reverse(out.begin(), out.end());
    return out;
  }

  // --- running ------------------------------------------------------------------------------------------

  // Runs one work-item to its next BARRIER or to the end; false when the program is not enumerable.
  constexpr bool step_item(std::uint32_t item, text& why_not) {
    item_state& st = items_state_[item];
    ival* vals = values_.data() + static_cast<std::size_t>(item) * nslots_;
    const std::size_t n = v_.prog.size();
    while ((st.pc = next_[st.pc]) < n) {
      if (++steps_ > 2 * budget_ + 1024) {
        why_not = cat("too large to enumerate (more than ", budget_, " steps)");
        return false;
      }
      const std::size_t pc = st.pc;
      UOp u = v_.prog[pc];
      switch (kind_[pc]) {
        case range_step: {
          if (!active_[pc]) {
            st.pc = v_.match[pc];
            continue;
          }
          const ival trip = eval(u.src(0), item);
          if (trip.kind != ival::known) {
            why_not = cat("the bound of ", v_.line(pc), " is not known before the kernel runs");
            return false;
          }
          if (trip.v <= 0) {
            st.pc = v_.match[pc];
            continue;
          }
          st.loops.push_back({pc, 0, trip.v, st.state});
          st.state = intern(st.state, pc, 0);
          if (slot_[pc] != no_pos) vals[slot_[pc]] = ival::of(0);
          ++st.pc;
          continue;
        }
        case end_step: {
          bool jumped = false;
          for (std::size_t r : v_.closes[pc]) {
            if (st.loops.empty() || st.loops.back().range_pos != r) continue;  // skipped or never entered
            frame& f = st.loops.back();
            if (++f.iter < f.trip) {
              st.state = intern(f.parent_state, r, f.iter);
              if (slot_[r] != no_pos) vals[slot_[r]] = ival::of(f.iter);
              st.pc = r + 1;
              jumped = true;
              break;
            }
            st.state = f.parent_state;
            st.loops.pop_back();
          }
          if (!jumped) ++st.pc;
          continue;
        }
        case if_step: {
          if (!active_[pc]) {
            st.pc = v_.match[pc];
            continue;
          }
          const ival c = eval(u.src(0), item);
          if (c.kind == ival::known) {
            st.pc = c.v != 0 ? pc + 1 : v_.match[pc];
            continue;
          }
          if (has_barrier_[pc]) {
            why_not = cat("the condition of ", v_.line(pc), ", which holds a BARRIER, is not known before the kernel runs");
            return false;
          }
          st.unknown_ifs.push_back(v_.match[pc]);
          ++st.pc;
          continue;
        }
        case endif_step:
          if (!st.unknown_ifs.empty() && st.unknown_ifs.back() == pc) st.unknown_ifs.pop_back();
          ++st.pc;
          continue;
        case barrier_step: return true;
        default: break;
      }
      if (slot_[pc] != no_pos) vals[slot_[pc]] = compute(slot_[pc], item);
      if (access_at_[pc] != no_pos) touch(item, access_at_[pc], st);
      ++st.pc;
    }
    st.finished = true;
    return true;
  }

  constexpr bool run_group(enumeration_outcome& out) {
    items_state_.assign(static_cast<std::size_t>(items_), item_state{});
    values_.assign(static_cast<std::size_t>(items_) * nslots_, ival{});
    for (;;) {
      ++epoch_;
      for (std::uint32_t it = 0; it < items_; ++it)
        if (!step_item(it, out.why_not)) return false;
      // every work-item must be at the same BARRIER in the same iteration, or finished
      const item_state& first = items_state_[0];
      for (std::uint32_t it = 1; it < items_; ++it) {
        const item_state& st = items_state_[it];
        if (st.finished == first.finished && (first.finished || (st.pc == first.pc && st.state == first.state))) continue;
        diverge(0, it);
        return true;
      }
      if (first.finished) return true;
      for (item_state& st : items_state_) ++st.pc;
    }
  }

  constexpr text item_name(std::uint32_t item) const {
    text s;
    for (std::size_t d = 0; d < local_dims_.size(); ++d) s << (d ? ", " : "") << local_dims_[d].name << "=" << local_coord(item, d);
    if (s.empty()) s << (clones_ ? "a work-item" : "the only work-item");
    for (std::size_t d = 0; d < group_dims_.size(); ++d) s << ", " << group_dims_[d].name << "=" << group_coord_[d];
    return s;
  }

  constexpr void diverge(std::uint32_t a, std::uint32_t b) {
    diverged_ = true;
    const item_state& sa = items_state_[a];
    const item_state& sb = items_state_[b];
    const item_state& waiting = sa.finished ? sb : sa;
    BarrierViolation d;
    d.kind = BarrierViolationKind::divergent_barrier;
    d.barrier_pos = waiting.pc;
    d.barrier = v_.prog[waiting.pc];
    // the innermost control flow above the barrier whose value the work-items disagree on
    for (std::size_t c : v_.enclosing(waiting.pc))
      if (v_.prog[c].nsrc() > 0 && local_id_in(v_.prog[c].src(0))) {
        d.control_pos = c;
        d.control = v_.prog[c];
        break;
      }
    auto where = [&](const item_state& st) {
      if (st.finished) return text("has finished");
      return cat("waits at ", v_.line(st.pc), iterations(st.state));
    };
    d.message = cat("barrier verifier: divergent barrier: ", v_.line(d.barrier_pos), " is not reached by all work-items together: ",
                    item_name(a), " ", where(sa), " while ", item_name(b), " ", where(sb));
    if (d.control.valid())
      d.message << "; it sits under " << v_.line(d.control_pos) << ", whose " << (d.control.op() == Ops::IF ? "condition" : "bound")
                << " depends on the local id " << local_id_in(d.control.src(0))->arg().as_string();
    divergence_ = std::move(d);
  }

  // --- tracking -----------------------------------------------------------------------------------------

  constexpr void touch(std::uint32_t item, std::uint32_t k, const item_state& st) {
    const local_access& acc = v_.accesses[k];
    bool uncertain = !st.unknown_ifs.empty();
    for (std::uint32_t gi = gate_first_[k]; gi < gate_first_[k + 1]; ++gi) {
      const ival c = value(gates_of_[gi], item);
      if (c.kind == ival::known && c.v == 0) return;
      if (c.kind != ival::known) uncertain = true;
    }
    rec r;
    r.item = item + 1;
    r.access = k;
    r.state = st.state;
    const std::uint32_t b = buffer_of_[k];
    const ival idx = value(index_of_[k], item);
    if (idx.kind == ival::invalid) return;  // an Invalid index: the access does not happen
    if (idx.kind != ival::known) {
      r.uncertain = 1;
      r.element = -1;
      cell& w = fresh(wild_[b]);
      check(w, r);
      check(fresh(any_[b]), r);
      add(w, r);
      return;
    }
    r.uncertain = uncertain ? 1 : 0;
    if (idx.v > (std::int64_t{1} << 40) || idx.v < -(std::int64_t{1} << 40)) {  // far outside any buffer
      r.element = idx.v;
      cell& c = fresh(outside_cell(b, idx.v));
      check(c, r);
      add(c, r);
      check(fresh(wild_[b]), r);
      add(fresh(any_[b]), r);
      return;
    }
    const std::int64_t first = idx.v * unit_per_elem_[b];
    if (clones_ && acc.is_store) {  // its clone runs the same store
      r.element = idx.v;
      found(r, r);
    }
    for (std::int64_t e = first; e < first + access_units_[k]; ++e) {
      r.element = e / unit_per_elem_[b];
      cell& c = fresh(e >= 0 && e < buffer_units_[b] ? cells_[b][static_cast<std::size_t>(e)] : outside_cell(b, e));
      check(c, r);
      add(c, r);
    }
    check(fresh(wild_[b]), r);
    add(fresh(any_[b]), r);
  }
  constexpr cell& fresh(cell& c) const {
    if (c.stamp != epoch_) c = cell{epoch_, {}, {}, {}};
    return c;
  }
  constexpr bool other(const rec& a, const rec& b) const { return a.item != b.item || clones_; }
  constexpr bool is_store(const rec& r) const { return v_.accesses[r.access].is_store; }
  constexpr void check(const cell& c, const rec& x) {
    if (is_store(x)) {
      if (c.writer.item && other(c.writer, x)) found(c.writer, x);
      if (c.reader1.item && other(c.reader1, x)) found(c.reader1, x);
      else if (c.reader2.item && other(c.reader2, x)) found(c.reader2, x);
    } else if (c.writer.item && other(c.writer, x)) {
      found(c.writer, x);
    }
  }
  static constexpr void add(cell& c, const rec& x, bool store) {
    if (store) c.writer = x;
    else if (!c.reader1.item) c.reader1 = x;
    else if (!c.reader2.item && c.reader1.item != x.item) c.reader2 = x;
  }
  constexpr void add(cell& c, const rec& x) { add(c, x, is_store(x)); }

  // Orders two instances in program execution: (a runs first, they are in different loop iterations).
  constexpr std::pair<bool, bool> order(const rec& a, const rec& b) const {
    const auto ca = chain(a.state), cb = chain(b.state);
    for (std::size_t i = 0; i < ca.size() && i < cb.size() && ca[i].first == cb[i].first; ++i)
      if (ca[i].second != cb[i].second) return {ca[i].second < cb[i].second, true};
    return {v_.accesses[a.access].pos <= v_.accesses[b.access].pos, false};
  }

  // A local-only term (value_dependencies::local_terms) for a work-item: from its ids alone.
  constexpr ival eval_local(UOp t, std::uint32_t item) const {
    return evaluate(t, [&](UOp x) -> std::optional<ival> {
      if (x.op() != Ops::SPECIAL) return std::nullopt;
      const operand o = operand_for(x);
      if (o.kind == operand::local || o.kind == operand::group) return value(o, item);
      return ival{};
    });
  }

  // Two runs of one STORE that provably write the same value: the work-items agree on every part of
  // the value that reads local ids (each evaluated for both: `lidx0 >> 2` is the same for lidx0 = 0
  // and 1), and on the iteration of every enclosing loop it reads (a loop that ended before the store
  // contributes a value of its whole run). Such a write-write is benign.
  constexpr bool same_value(const rec& x, const rec& y) const {
    if (x.access != y.access || !is_store(x)) return false;
    const value_key& key = value_keys_[x.access];
    if (key.varies) return false;
    for (UOp t : key.terms) {
      const ival a = eval_local(t, x.item - 1), b = eval_local(t, y.item - 1);
      if (a.kind != ival::known || b.kind != ival::known || a.v != b.v) return false;
    }
    if (key.ranges.empty()) return true;
    const auto cx = chain(x.state), cy = chain(y.state);
    for (std::size_t r : key.ranges) {
      auto iter = [r](const std::vector<std::pair<std::uint32_t, std::int64_t>>& c) -> std::int64_t {
        for (const auto& [rp, it] : c)
          if (rp == r) return it;
        return -1;
      };
      if (iter(cx) != iter(cy)) return false;
    }
    return true;
  }

  constexpr void found(const rec& x, const rec& y) {
    const bool sx = is_store(x), sy = is_store(y);
    if (sx && sy && same_value(x, y)) return;
    auto [x_first, carried] = order(x, y);
    conflict c;
    const rec& a = x_first ? x : y;
    const rec& b = x_first ? y : x;
    if (sx && sy) c.kind = BarrierViolationKind::write_after_write;
    else c.kind = is_store(a) ? BarrierViolationKind::read_after_write : BarrierViolationKind::write_after_read;
    c.first = a.access;
    c.second = b.access;
    c.a = a;
    c.b = b;
    c.loop_carried = carried;
    c.proven = !(x.uncertain || y.uncertain);
    const conflict_key key{static_cast<int>(c.kind), std::min(c.first, c.second), std::max(c.first, c.second)};
    auto it = std::lower_bound(conflicts_.begin(), conflicts_.end(), key,
                               [](const std::pair<conflict_key, conflict>& x, const conflict_key& k) { return x.first < k; });
    if (it == conflicts_.end() || it->first != key) conflicts_.insert(it, {key, c});
    else if (!it->second.proven && c.proven) it->second = c;
  }

  // --- the report ----------------------------------------------------------------------------------------

  /// `clone`: the other of two work-items that differ only in a local id no index reads.
  constexpr text instance(const rec& r, const char* verb, bool clone = false) const {
    text s;
    if (clone) {
      s << "another work-item";
      if (!local_dims_.empty()) s << " with " << item_name(r.item - 1);
      s << " (it differs only in a local id the indices do not read) " << verb;
    } else {
      s << item_name(r.item - 1) << " " << verb;
    }
    if (r.element >= 0) s << " element " << r.element;
    else s << " an element it cannot know";
    s << iterations(r.state);
    return s;
  }

  constexpr text why_uncertain(const rec& r) const {
    const local_access& acc = v_.accesses[r.access];
    if (r.element < 0) return cat("the index of ", v_.line(acc.pos), " depends on ", unknown_source(acc.index));
    for (UOp g : acc.gates) return cat("the gate of ", v_.line(acc.pos), " depends on ", unknown_source(g));
    for (std::size_t c : v_.enclosing(acc.pos))
      if (v_.prog[c].op() == Ops::IF)
        return cat(v_.line(acc.pos), " sits under ", v_.line(c), ", whose condition depends on ", unknown_source(v_.prog[c].src(0)));
    return text("an unknown value");
  }
  // The first value the arithmetic cannot know in the graph of u.
  constexpr text unknown_source(UOp u) const {
    if (!u.valid()) return text("an address the verifier cannot read");
    UOp found;
    walk_value(u, [&](UOp s) {
      if (s.op() == Ops::LOAD || is_variable(s)) found = s;
      return !found.valid();
    });
    if (!found.valid()) return v_.describe(u);
    return cat(v_.describe(found), found.op() == Ops::LOAD ? " (a value read from memory)" : " (a kernel variable)");
  }

  constexpr void report(std::vector<BarrierViolation>& out) const {
    if (diverged_) out.push_back(divergence_);
    std::vector<BarrierViolation> races;
    for (const auto& [key, c] : conflicts_) {
      const local_access& A = v_.accesses[c.first];
      const local_access& B = v_.accesses[c.second];
      BarrierViolation x;
      x.kind = c.kind;
      x.loop_carried = c.loop_carried;
      x.proven = c.proven;
      x.buffer = A.buffer;
      const bool raw = c.kind == BarrierViolationKind::read_after_write;
      const bool waw = c.kind == BarrierViolationKind::write_after_write;
      const local_access& S = raw || waw ? A : B;
      const local_access& L = raw || waw ? B : A;
      x.store_pos = S.pos;
      x.load_pos = L.pos;
      x.store = v_.prog[S.pos];
      x.load = v_.prog[L.pos];
      text m = cat("barrier verifier: ", name(c.kind), c.loop_carried ? " across a loop's back edge" : "", " on LOCAL buffer ",
                   v_.describe(A.buffer), ": ");
      if (waw) {
        if (c.first == c.second) m << "the STORE " << v_.line(S.pos) << " is run by two work-items";
        else m << "the STORE " << v_.line(A.pos) << " and the STORE " << v_.line(B.pos) << " are run by two work-items";
        m << " without a BARRIER in between";
      } else if (raw) {
        m << "the STORE " << v_.line(S.pos) << " reaches the LOAD " << v_.line(L.pos) << " without a BARRIER in between";
      } else {
        m << "the LOAD " << v_.line(L.pos) << " reaches the STORE " << v_.line(S.pos) << " without a BARRIER in between";
      }
      const char* va = v_.accesses[c.a.access].is_store ? "stores" : "loads";
      const char* vb = v_.accesses[c.b.access].is_store ? "stores" : "loads";
      const bool clone = clones_ && c.a.item == c.b.item;
      if (c.proven) {
        m << ": " << instance(c.a, va) << ", then " << instance(c.b, vb, clone) << ", in one barrier interval";
      } else {
        const rec& u = c.a.uncertain ? c.a : c.b;
        m << "; the accesses could not be proven disjoint: " << why_uncertain(u) << " (e.g. " << instance(c.a, va) << ", "
          << instance(c.b, vb, clone) << ")";
      }
      x.message = std::move(m);
      races.push_back(std::move(x));
    }
    // read/write orderings first, then write-write, each in program order
    stable_sort_violations(races, [](const BarrierViolation& p, const BarrierViolation& q) {
      const int kp = p.kind == BarrierViolationKind::write_after_write, kq = q.kind == BarrierViolationKind::write_after_write;
      if (kp != kq) return kp < kq;
      return std::min(p.store_pos, p.load_pos) < std::min(q.store_pos, q.load_pos);
    });
    for (auto& r : races) out.push_back(std::move(r));
  }
};

}  // namespace enumerate

/// The exact check of `v` (see the top of this header); not done when the program is not
/// enumerable within `budget` steps.
constexpr enumeration_outcome enumerate_races(const program_view& v, std::uint64_t budget) {
  if (v.prog.empty()) return {true, {}, {}};
  enumerate::enumerator e(v, budget);
  return e.run();
}

}  // namespace uopcg::codegen::detail::verifier
