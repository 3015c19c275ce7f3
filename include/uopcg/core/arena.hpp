// The UOp arena: owns every node of a kernel graph, hash-conses them (building an equal node returns
// the existing handle), and caches the derived properties every pass asks for (shape, address
// space, value bounds, ranges). Everything here works in constant evaluation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "arg.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "ops.hpp"
#include "text.hpp"
#include "detail/node.hpp"
#include "detail/out_of_line.hpp"

namespace uopcg {

class Arena;

/// A node id inside its arena.
using node_id = std::uint32_t;
inline constexpr node_id no_node = 0xFFFFFFFFu;

namespace detail {
/// A frame of an iterative traversal: a node, how far its visit got, one more id (the next source,
/// a pending replacement, ...).
struct walk_frame {
  node_id n;
  std::uint8_t stage;
  node_id aux;
};
}  // namespace detail

/// Handle of one node: trivially copyable; equality and hashing are O(1) because nodes are
/// hash-consed (structurally equal nodes have the same id).
class UOp {
 public:
  constexpr UOp() = default;
  constexpr UOp(Arena* arena, node_id id) : arena_(arena), id_(id) {}

  constexpr bool valid() const { return arena_ != nullptr && id_ != no_node; }
  constexpr explicit operator bool() const { return valid(); }
  constexpr node_id id() const { return id_; }
  constexpr Arena& arena() const { return *arena_; }

  constexpr Ops op() const;
  constexpr DType dtype() const;
  constexpr std::size_t nsrc() const;
  constexpr UOp src(std::size_t i) const;
  class src_range;
  constexpr src_range srcs() const;
  constexpr const Arg& arg() const;
  constexpr const Arg& tag() const;
  constexpr bool has_tag() const;

  /// Shape (None for statements such as SINK, GROUP, BARRIER); the rules are in core/detail/derive_shape.hpp.
  class shape_view;
  constexpr shape_view shape() const;
  /// GLOBAL/LOCAL/REG for memory and what addresses it, ALU for values, nullopt otherwise.
  constexpr std::optional<AddrSpace> addrspace() const;
  /// Value bounds of integer/bool nodes (dtype bounds for everything else).
  constexpr std::int64_t vmin() const;
  constexpr std::int64_t vmax() const;

  constexpr bool is(Ops o) const { return op() == o; }
  constexpr bool in(OpSet s) const { return s.contains(op()); }

  /// Identity (= structural equality, thanks to hash-consing). The ordering operators < > <= >=
  /// build comparison nodes (builder.hpp); order handles by id() when a container needs it.
  friend constexpr bool operator==(UOp a, UOp b) { return a.id_ == b.id_ && a.arena_ == b.arena_; }

 private:
  Arena* arena_ = nullptr;
  node_id id_ = no_node;
};


class UOp::src_range {
 public:
  class iterator {
   public:
    using value_type = UOp;
    using difference_type = std::ptrdiff_t;
    constexpr iterator() = default;
    constexpr iterator(const UOp* owner, std::size_t i) : owner_(owner), i_(i) {}
    constexpr UOp operator*() const { return owner_->src(i_); }
    constexpr iterator& operator++() { return ++i_, *this; }
    constexpr iterator operator++(int) {
      iterator t = *this;
      ++i_;
      return t;
    }
    friend constexpr bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }

   private:
    const UOp* owner_ = nullptr;
    std::size_t i_ = 0;
  };
  constexpr explicit src_range(UOp u) : u_(u) {}
  constexpr iterator begin() const { return iterator(&u_, 0); }
  constexpr iterator end() const { return iterator(&u_, u_.nsrc()); }
  constexpr std::size_t size() const { return u_.nsrc(); }
  constexpr UOp operator[](std::size_t i) const { return u_.src(i); }
  constexpr std::vector<UOp> to_vector() const {
    std::vector<UOp> v;
    v.reserve(u_.nsrc());
    for (std::size_t i = 0; i < u_.nsrc(); ++i) v.push_back(u_.src(i));
    return v;
  }

 private:
  UOp u_;
};

/// A node's shape, read through the arena (stays valid while the arena grows).
class UOp::shape_view {
 public:
  constexpr shape_view(const Arena* a, std::uint32_t off, int rank) : a_(a), off_(off), rank_(rank) {}
  /// False for shapeless nodes (statements) and ill-formed ones.
  constexpr bool has_value() const { return rank_ >= 0; }
  constexpr bool ill_formed() const { return rank_ == -2; }
  constexpr std::size_t size() const { return rank_ < 0 ? 0 : static_cast<std::size_t>(rank_); }
  constexpr std::int64_t operator[](std::size_t i) const;
  constexpr std::int64_t numel() const {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < size(); ++i) n *= (*this)[i];
    return n;
  }
  constexpr std::vector<std::int64_t> to_vector() const {
    std::vector<std::int64_t> v;
    v.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) v.push_back((*this)[i]);
    return v;
  }
  constexpr bool operator==(std::initializer_list<std::int64_t> dims) const {
    if (!has_value() || dims.size() != size()) return false;
    std::size_t i = 0;
    for (std::int64_t d : dims)
      if ((*this)[i++] != d) return false;
    return true;
  }

 private:
  const Arena* a_;
  std::uint32_t off_;
  int rank_;
};

/// Owns the nodes of one or more graphs. Not copyable or movable: handles point at it.
class Arena {
  // The bodies of Arena() and make() (core/detail/out_of_line.hpp). Templates too, declared extern
  // with the out-of-line paths, so g++ -O0, which keeps their callers' constant-evaluation branch,
  // compiles a call, not these bodies; defined before their callers, since clang instantiates a
  // constexpr member template where it is first used.
  template <class Tag = detail::out_of_line_tag>
  constexpr void set_up() {
    // sized for a typical kernel (a pipeline run creates ~1-2k nodes): no rehash on the way
    node_table_.assign(2048, empty_slot);
    nodes_.reserve(1024);
    cold_.reserve(1024);
    sub_ops_.reserve(1024);
    ops_.reserve(1024);
    srcs_.reserve(2048);
    arg_table_.assign(64, no_node);
    init_args();
  }
  template <class Tag = detail::out_of_line_tag>
  constexpr UOp make_node(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg, const Arg& tag) {
    // small weakint literals (lane numbers, strides, sizes) are most of the nodes made again and
    // again: found by value, without hashing the arg and the node
    if (op == Ops::CONST && dtype == DType::weakint && arg.kind() == ArgKind::int_ && tag.is_none() && srcs.empty()) {
      const std::int64_t v = arg.as_int();
      if (v >= 0 && v < small_ints) {
        if (small_int_.empty()) small_int_.assign(small_ints, no_node);
        node_id& id = small_int_[static_cast<std::size_t>(v)];
        if (id == no_node) id = intern(op, dtype, srcs, intern_arg(arg), 0);
        return UOp(this, id);
      }
    }
    return UOp(this, intern(op, dtype, srcs, intern_arg(arg), intern_arg(tag)));
  }

 public:
  constexpr Arena() {
    // at run time through one out-of-line function (core/detail/out_of_line.hpp), as make()
    if (std::is_constant_evaluated()) set_up();
    else set_up_out_of_line();
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// Drops every node and arg, keeping the memory: the arena is as a new one (ids restart at 0,
  /// nothing is interned), without allocating again what the last graphs grew. For a program that
  /// compiles kernel after kernel: a new arena per kernel gives its tables back to the allocator,
  /// which may return them to the system, and the next kernel pays the page faults again. Every UOp
  /// of the arena is invalid afterwards.
  constexpr void clear() {
    nodes_.clear();
    cold_.clear();
    sub_ops_.clear();
    ops_.clear();
    srcs_.clear();
    dims_.clear();
    for (auto& e : node_table_) e = empty_slot;
    for (auto& e : small_int_) e = no_node;
    args_.clear();
    arg_hashes_.clear();
    for (auto& e : arg_table_) e = no_node;
    init_args();
    // marks_ keeps its stamps: epochs only grow, so an old stamp never equals a new epoch; the
    // pooled maps and vectors are cleared when lent
    ranges_cache.clear();
    ended_ranges_cache.clear();
    backward_slice_cache.clear();
    origin_head_.clear();
    origins_.clear();
    origin_scopes_.clear();
    origin_text_.clear();
  }

  /// Builds (or finds) the node (op, dtype, srcs, arg, tag).
  constexpr UOp make(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg = Arg(),
                     const Arg& tag = Arg()) {
    // the hashing, interning and derivations are compiled once per program that links an
    // implementation translation unit, not in every translation unit that builds a graph
    if (std::is_constant_evaluated()) return make_node(op, dtype, srcs, arg, tag);
    return make_out_of_line(op, dtype, srcs, arg, tag);
  }
  constexpr UOp make(Ops op, DType dtype, std::initializer_list<UOp> srcs, const Arg& arg = Arg(),
                     const Arg& tag = Arg()) {
    return make(op, dtype, std::span<const UOp>(srcs.begin(), srcs.size()), arg, tag);
  }
  constexpr UOp make(Ops op, DType dtype, const std::vector<UOp>& srcs, const Arg& arg = Arg(),
                     const Arg& tag = Arg()) {
    return make(op, dtype, std::span<const UOp>(srcs.data(), srcs.size()), arg, tag);
  }
  /// Same, with ids of already-interned args (fast path for rebuilding nodes).
  constexpr UOp make_raw(Ops op, DType dtype, std::span<const UOp> srcs, std::uint32_t arg_id,
                         std::uint32_t tag_id) {
    return UOp(this, intern(op, dtype, srcs, arg_id, tag_id));
  }

  constexpr std::size_t size() const { return nodes_.size(); }
  constexpr UOp node(node_id id) const {
    if (id >= nodes_.size()) fail("Arena::node: id out of range");
    return UOp(const_cast<Arena*>(this), id);
  }

  // --- raw accessors (UOp forwards here) ---------------------------------------------------------
  constexpr const detail::Node& raw(node_id id) const { return nodes_[id]; }
  constexpr const detail::NodeCold& cold(node_id id) const { return cold_[id]; }
  /// The op of node `id`, from an array of its own (1 byte a node: a graph's ops stay in cache
  /// where its 16-byte records do not; rule dispatch reads the ops of a node and its sources).
  constexpr Ops op_of(node_id id) const { return ops_[id]; }
  /// The interned tag of node `id` (0: none), as Node::arg is its arg.
  constexpr std::uint32_t tag_id(node_id id) const { return cold_[id].tag; }
  /// False when no node of an op in `ops` is `id` or below it (its whole graph); true when one may
  /// be: an O(1) test from a summary kept per node (graph_rewrite skips the subgraphs its rules
  /// cannot match; contains_op answers most questions without walking).
  constexpr bool may_contain(node_id id, OpSet ops) const {
    return (sub_ops_[id] & detail::op_bits(ops)) != 0;
  }
  /// Hints that node `id` will be read soon (traversals of graphs larger than the cache).
  constexpr void prefetch(node_id id) const {
    if (!std::is_constant_evaluated()) __builtin_prefetch(nodes_.data() + id);
  }
  constexpr node_id src_id(node_id id, std::size_t i) const {
    const auto& n = nodes_[id];
    if (i >= n.nsrc) src_index_error(id, i);
    return srcs_[n.src_off + i];
  }
  constexpr const Arg& arg_by_id(std::uint32_t arg_id) const { return args_[arg_id]; }
  /// The source ids of a node; the pointer is valid until the next node is created.
  constexpr const node_id* src_ids(node_id id) const { return srcs_.data() + nodes_[id].src_off; }
  constexpr std::uint32_t intern_arg(const Arg& a) {
    if (a.is_none()) return 0;
    // an arg read from a node of this arena (u.arg(), u.tag()) is interned already: no hashing
    if (const std::size_t k = args_.index_of(&a); k != args_.no_index) return static_cast<std::uint32_t>(k);
    std::uint64_t h = a.hash();
    std::size_t mask = arg_table_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      std::uint32_t slot = arg_table_[i];
      if (slot == no_node) break;
      if (arg_hashes_[slot] == h && args_[slot] == a) return slot;
    }
    auto id = static_cast<std::uint32_t>(args_.push_back(a));
    intern_arg_slot(id);
    return id;
  }
  constexpr std::int64_t dim(std::uint32_t off, std::size_t i) const { return dims_[off + i]; }

  /// Builds a text one-liner naming a node, for error messages: "node 12 (ADD weakint)", and, for
  /// a node read from a file, where it is there: "node 20 (RANGE weakint; k.json: post_opts node 6)".
  constexpr text describe(node_id id) const {
    text t;
    t.append("node ").append(id);
    if (id < nodes_.size()) {
      t.append(" (").append(name(nodes_[id].op)).append(' ').append(name(nodes_[id].dtype));
      append_origins(t, id);
      t.append(')');
    }
    return t;
  }

  /// Records that node `id` was read as node `index` of the graph `scope` of an input (the JSON
  /// importers do), so that errors name it as the file does: arena ids differ from a file's ids
  /// as soon as the arena holds anything else. A node read again (hash-consing: the same node in
  /// another graph of the file) keeps every place, in the order read.
  constexpr void note_origin(node_id id, std::string_view scope, std::uint32_t index) {
    if (id >= nodes_.size()) fail("Arena::note_origin: id out of range");
    // consecutive nodes come from one graph: a scope is stored once per run of them
    if (origin_scopes_.empty() || origin_scope(static_cast<std::uint32_t>(origin_scopes_.size() / 2 - 1)) != scope) {
      origin_scopes_.push_back(static_cast<std::uint32_t>(origin_text_.size()));
      origin_text_.insert(origin_text_.end(), scope.begin(), scope.end());
      origin_scopes_.push_back(static_cast<std::uint32_t>(origin_text_.size()));
    }
    if (origin_head_.size() <= id) origin_head_.resize(nodes_.size(), 0);
    const auto scope_k = static_cast<std::uint32_t>(origin_scopes_.size() / 2 - 1);
    origins_.push_back({scope_k, index, origin_head_[id]});
    origin_head_[id] = static_cast<std::uint32_t>(origins_.size());  // 1-based: 0 = none
  }
  /// Where node `id` was read (see note_origin), in the order read; empty for a node made here.
  struct origin {
    std::string_view scope;
    std::uint32_t index = 0;
  };
  constexpr std::vector<origin> origins(node_id id) const {
    std::vector<origin> out;
    for (std::uint32_t k = id < origin_head_.size() ? origin_head_[id] : 0; k != 0; k = origins_[k - 1].next)
      out.push_back({origin_scope(origins_[k - 1].scope), origins_[k - 1].index});
    return {out.rbegin(), out.rend()};
  }

  /// Per-traversal marks (epoch counters) so walks need no per-call allocation of visited sets.
  constexpr std::uint32_t new_epoch() {
    if (marks_.size() < nodes_.size()) grow_marks();
    if (++epoch_ == 0) {  // wrapped: clear
      for (auto& m : marks_) m = 0;
      epoch_ = 1;
    }
    return epoch_;
  }
  constexpr bool mark(node_id id, std::uint32_t epoch) {
    if (marks_.size() <= id) grow_marks();
    if (marks_[id] == epoch) return false;
    marks_[id] = epoch;
    return true;
  }
  constexpr bool marked(node_id id, std::uint32_t epoch) const {
    return id < marks_.size() && marks_[id] == epoch;
  }
  // geometric growth: the arena grows between traversals, an exact resize copied the marks each time
  constexpr void grow_marks() {
    const std::size_t n = 2 * marks_.size() > nodes_.size() ? 2 * marks_.size() : nodes_.size();
    marks_.resize(n, 0);
  }

  /// A node-indexed map (node id -> node id, no_node when unset) whose clearing costs what was
  /// set, not the arena's size: each slot set from empty is noted, and clear() empties just those.
  /// So a traversal of a small graph in a large arena costs O(graph), not O(arena), and a lookup
  /// is one 4-byte load (no epoch stamp beside each value: it would double the map's footprint, and
  /// its cache misses on graphs larger than the cache, and cost a compare per lookup).
  class node_map {
   public:
    constexpr node_id get(node_id id) const { return id < slots_.size() ? slots_[id] : no_node; }
    /// `hint`: the size to grow to when `id` is beyond the current size (at least id + 1).
    [[gnu::always_inline]] constexpr void set(node_id id, node_id v, std::size_t hint = 0) {
      if (id >= slots_.size()) [[unlikely]]
        grow(id, hint);
      set_unchecked(id, v);
    }
    /// Grows to at least n slots: then the unchecked accessors are valid for ids below n.
    constexpr void reserve(std::size_t n) {
      if (n > slots_.size()) grow(static_cast<node_id>(n - 1), n);
    }
    [[gnu::always_inline]] constexpr node_id get_unchecked(node_id id) const { return slots_[id]; }
    // forced inline, and the note kept in a presized buffer: g++ would outline both the setter and
    // vector::push_back, a call per traversal step
    [[gnu::always_inline]] constexpr void set_unchecked(node_id id, node_id v) {
      node_id& s = slots_[id];
      if (s == no_node) {
        if (nset_ == set_.size()) [[unlikely]]
          grow_set();
        set_[nset_++] = id;
      }
      s = v;
    }
    /// Lets set_untracked write the slots of ids lo..hi (below the size): clear() then fills
    /// that whole range instead of noting each slot. For a traversal that sets most ids of a
    /// range it has walked anyway (graph_rewrite's scan): one fill costs less than a note per slot.
    constexpr void untracked(node_id lo, node_id hi) {
      if (lo < lo_) lo_ = lo;
      if (hi + 1 > hi_) hi_ = hi + 1;
    }
    [[gnu::always_inline]] constexpr void set_untracked(node_id id, node_id v) { slots_[id] = v; }
    constexpr void clear() {
      for (std::size_t k = 0; k < nset_; ++k) slots_[set_[k]] = no_node;
      nset_ = 0;
      if (lo_ < hi_) std::fill(slots_.begin() + lo_, slots_.begin() + hi_, no_node);  // a memset
      lo_ = no_node, hi_ = 0;
    }

   private:
    // out of line: keeps set() small enough to inline into the traversals' hot loops
    [[gnu::noinline]] constexpr void grow(node_id id, std::size_t hint) {
      // at least double: the arena keeps growing while a map is lent out again and again
      std::size_t n = hint > id ? hint : static_cast<std::size_t>(id) + 1;
      if (n < 2 * slots_.size()) n = 2 * slots_.size();
      slots_.resize(n, no_node);
    }
    // resize with a value: clang 14 rejects libstdc++'s default-filling of trivial elements in
    // constant evaluation ("assignment to object outside its lifetime")
    [[gnu::noinline]] constexpr void grow_set() { set_.resize(set_.size() < 64 ? 64 : 2 * set_.size(), no_node); }
    std::vector<node_id> slots_;
    std::vector<node_id> set_;  // set_[0, nset_): the ids set from empty since the last clear
    std::size_t nset_ = 0;
    node_id lo_ = no_node, hi_ = 0;  // the untracked range [lo_, hi_), empty when lo_ >= hi_
  };
  /// Lends an empty vector from the arena's pool, returned with its capacity on destruction: the
  /// stacks of traversals that run many times per compile (a fresh stack grown per graph_rewrite and
  /// toposort would be a large share of a pipeline run's allocations).
  /// T: detail::walk_frame, UOp or node_id.
  template <class T>
  class scratch_vector {
   public:
    constexpr explicit scratch_vector(Arena& a) : a_(&a) {
      auto& pool = a.pool_of<T>();
      if (!pool.empty()) {
        v_ = std::move(pool.back());
        pool.pop_back();
        v_.clear();
      }
    }
    scratch_vector(const scratch_vector&) = delete;
    scratch_vector& operator=(const scratch_vector&) = delete;
    constexpr ~scratch_vector() { a_->pool_of<T>().push_back(std::move(v_)); }
    constexpr std::vector<T>& operator*() { return v_; }
    constexpr std::vector<T>* operator->() { return &v_; }

   private:
    Arena* a_;
    std::vector<T> v_;
  };
  /// Lends a bitmap of node ids from the arena's pool, every bit clear, at least `ids` bits long.
  /// Its user clears the words it set (then a small graph in a large arena costs O(graph), not
  /// O(arena)) and says so with cleared(); a bitmap not declared clear (its user left by an
  /// exception) is dropped instead of pooled.
  class scratch_bitmap {
   public:
    constexpr scratch_bitmap(Arena& a, std::size_t ids) : a_(&a) {
      if (!a.bitmap_pool_.empty()) {
        w_ = std::move(a.bitmap_pool_.back());
        a.bitmap_pool_.pop_back();
      }
      if (w_.size() * 32 < ids) w_.resize(ids / 32 + 1, 0);
    }
    scratch_bitmap(const scratch_bitmap&) = delete;
    scratch_bitmap& operator=(const scratch_bitmap&) = delete;
    constexpr ~scratch_bitmap() {
      if (clear_) a_->bitmap_pool_.push_back(std::move(w_));
    }
    /// The words, bit i % 32 of word i / 32 for id i.
    constexpr std::vector<std::uint32_t>& words() { return w_; }
    /// Every bit is clear again: the bitmap goes back to the pool.
    constexpr void cleared() { clear_ = true; }

   private:
    Arena* a_;
    std::vector<std::uint32_t> w_;
    bool clear_ = false;
  };
  /// Lends a cleared node_map from the arena's pool (returned on destruction), so repeated and
  /// nested traversals reuse their storage instead of allocating per call.
  class scratch_map {
   public:
    constexpr explicit scratch_map(Arena& a) : a_(&a) {
      if (!a.scratch_pool_.empty()) {
        m_ = std::move(a.scratch_pool_.back());
        a.scratch_pool_.pop_back();
        m_.clear();
      }
    }
    scratch_map(const scratch_map&) = delete;
    scratch_map& operator=(const scratch_map&) = delete;
    constexpr ~scratch_map() { a_->scratch_pool_.push_back(std::move(m_)); }
    constexpr node_id get(node_id id) const { return m_.get(id); }
    constexpr void set(node_id id, node_id v) { m_.set(id, v, a_->size()); }
    /// Makes room for every node of the arena now: then the unchecked accessors are valid for them.
    constexpr void cover_arena() { m_.reserve(a_->size()); }
    [[gnu::always_inline]] constexpr node_id get_unchecked(node_id id) const { return m_.get_unchecked(id); }
    [[gnu::always_inline]] constexpr void set_unchecked(node_id id, node_id v) { m_.set_unchecked(id, v); }
    constexpr void untracked(node_id lo, node_id hi) { m_.untracked(lo, hi); }
    [[gnu::always_inline]] constexpr void set_untracked(node_id id, node_id v) { m_.set_untracked(id, v); }

   private:
    Arena* a_;
    node_map m_;
  };

 private:
  template <class Tag = detail::out_of_line_tag>
  void set_up_out_of_line();
  template <class Tag = detail::out_of_line_tag>
  UOp make_out_of_line(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg, const Arg& tag);

  [[noreturn]] constexpr void src_index_error(node_id id, std::size_t i) const {
    text t = describe(id);
    t.append(": source index ").append(i).append(" out of range (node has ")
        .append(nodes_[id].nsrc).append(" sources)");
    fail(t.view());
  }

  constexpr void init_args() {  // arg_table_ sized and empty
    args_.push_back(Arg());        // id 0 = None
    intern_arg_slot(0);
  }
  constexpr void intern_arg_slot(std::uint32_t id) {
    if (arg_hashes_.size() <= id) arg_hashes_.resize(id + 1);
    arg_hashes_[id] = args_[id].hash();
    if ((args_.size() + 1) * 2 > arg_table_.size()) {
      std::vector<std::uint32_t> t(arg_table_.size() * 2, no_node);
      std::size_t mask = t.size() - 1;
      for (std::uint32_t k = 0; k < args_.size(); ++k) {
        if (k == id) continue;
        std::size_t i = arg_hashes_[k] & mask;
        while (t[i] != no_node) i = (i + 1) & mask;
        t[i] = k;
      }
      arg_table_ = std::move(t);
    }
    std::size_t mask = arg_table_.size() - 1;
    std::size_t i = arg_hashes_[id] & mask;
    while (arg_table_[i] != no_node) i = (i + 1) & mask;
    arg_table_[i] = id;
  }

  static constexpr std::uint64_t node_hash(Ops op, DType dtype, std::span<const UOp> srcs,
                                           std::uint32_t arg, std::uint32_t tag) {
    std::uint64_t h = detail::mix64((static_cast<std::uint64_t>(op) << 8) ^ static_cast<std::uint64_t>(dtype) ^
                                    (static_cast<std::uint64_t>(arg) << 20) ^ (static_cast<std::uint64_t>(tag) << 44));
    for (UOp s : srcs) h = detail::mix64(h ^ (s.id() + 0x9E3779B97F4A7C15ull));
    return h;
  }

  constexpr bool same_node(node_id k, Ops op, DType dtype, std::span<const UOp> srcs,
                           std::uint32_t arg, std::uint32_t tag) const {
    const auto& n = nodes_[k];
    if (n.op != op || n.dtype != dtype || n.arg != arg || n.nsrc != srcs.size() || cold_[k].tag != tag) return false;
    for (std::size_t i = 0; i < srcs.size(); ++i)
      if (srcs_[n.src_off + i] != srcs[i].id()) return false;
    return true;
  }

  constexpr node_id intern(Ops op, DType dtype, std::span<const UOp> srcs, std::uint32_t arg,
                           std::uint32_t tag) {
    for (UOp s : srcs)
      if (&s.arena() != this || s.id() >= nodes_.size()) {
        text t;
        t.append("Arena::make(").append(name(op)).append("): a source belongs to another arena or is invalid");
        fail(t.view());
      }
    std::uint64_t h = node_hash(op, dtype, srcs, arg, tag);
    const std::uint64_t tag_bits = h & 0xFFFFFFFF00000000ull;
    std::size_t mask = node_table_.size() - 1;
    std::size_t i = h & mask;
    for (;; i = (i + 1) & mask) {
      std::uint64_t e = node_table_[i];
      if (e == empty_slot) break;
      // the slot keeps the hash's upper half: most mismatches are rejected without touching nodes_
      if ((e & 0xFFFFFFFF00000000ull) == tag_bits && same_node(static_cast<node_id>(e), op, dtype, srcs, arg, tag))
        return static_cast<node_id>(e);
    }
    auto id = static_cast<node_id>(nodes_.size());
    detail::Node n{op, dtype, 0, -1, static_cast<std::uint32_t>(srcs.size()),
                   static_cast<std::uint32_t>(srcs_.size()), arg};
    std::uint64_t sub = detail::op_bit(op);
    for (UOp s : srcs) {
      srcs_.push_back(s.id());
      sub |= sub_ops_[s.id()];
    }
    nodes_.push_back(n);
    cold_.push_back({0, 0, h, tag, 0});
    sub_ops_.push_back(sub);
    ops_.push_back(op);
    derive(id);
    node_table_[i] = tag_bits | id;
    if (nodes_.size() * 2 > node_table_.size()) grow_node_table();
    return id;
  }

  constexpr void grow_node_table() {
    std::vector<std::uint64_t> t(node_table_.size() * 2, empty_slot);
    std::size_t mask = t.size() - 1;
    for (node_id k = 0; k < nodes_.size(); ++k) {
      std::size_t i = cold_[k].hash & mask;
      while (t[i] != empty_slot) i = (i + 1) & mask;
      t[i] = (cold_[k].hash & 0xFFFFFFFF00000000ull) | k;
    }
    node_table_ = std::move(t);
  }
  static constexpr std::uint64_t empty_slot = ~std::uint64_t(0);

  // --- derived properties, computed once when the node is created ------------------------------
  constexpr void derive(node_id id);
  constexpr bool as_shape(node_id id, std::vector<std::int64_t>& out) const;
  constexpr void derive_shape(node_id id);
  constexpr void derive_addrspace(node_id id);
  constexpr void derive_bounds(node_id id);

  std::vector<detail::Node> nodes_;
  std::vector<detail::NodeCold> cold_;  // per node, like nodes_
  std::vector<std::uint64_t> sub_ops_;  // per node: its ops and those below it, folded (op_bits)
  std::vector<Ops> ops_;                // per node: Node::op again, densely (op_of)
  std::vector<node_id> srcs_;
  std::vector<std::uint64_t> node_table_;  // (upper half of the hash << 32) | node id
  detail::stable_pool<Arg> args_;
  std::vector<std::uint64_t> arg_hashes_;
  std::vector<std::uint32_t> arg_table_;
  std::vector<std::int64_t> dims_;
  std::vector<std::uint32_t> marks_;
  std::uint32_t epoch_ = 0;
  std::vector<node_map> scratch_pool_;
  std::vector<std::vector<detail::walk_frame>> frame_pool_;
  std::vector<std::vector<UOp>> uop_pool_;
  std::vector<std::vector<node_id>> id_pool_;
  std::vector<std::vector<std::uint32_t>> bitmap_pool_;  // every bit clear
  template <class T>
  constexpr std::vector<std::vector<T>>& pool_of() {
    if constexpr (std::is_same_v<T, detail::walk_frame>) return frame_pool_;
    else if constexpr (std::is_same_v<T, node_id>) return id_pool_;
    else {
      static_assert(std::is_same_v<T, UOp>, "Arena::scratch_vector: no pool for this element type");
      return uop_pool_;
    }
  }
  std::vector<std::int64_t> shape_tmp_;  // derive_shape's result buffer
  // note_origin's records: per node the newest (1-based, 0 = none), each linking to the older one
  struct origin_rec {
    std::uint32_t scope, index, next;
  };
  std::vector<std::uint32_t> origin_head_;
  std::vector<origin_rec> origins_;
  std::vector<std::uint32_t> origin_scopes_;  // [begin, end) in origin_text_ per scope
  std::vector<char> origin_text_;
  constexpr std::string_view origin_scope(std::uint32_t k) const {
    return {origin_text_.data() + origin_scopes_[2 * k], origin_scopes_[2 * k + 1] - origin_scopes_[2 * k]};
  }
  constexpr void append_origins(text& t, node_id id) const {
    if (id >= origin_head_.size() || origin_head_[id] == 0) return;
    const std::vector<origin> all = origins(id);
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (k == 3 && all.size() > 4) {  // a node of every graph of a file: the first three say enough
        t.append(" and ").append(all.size() - 3).append(" more");
        break;
      }
      t.append(k == 0 ? "; " : ", ").append(all[k].scope).append(" node ").append(all[k].index);
    }
  }
  static constexpr std::int64_t small_ints = 1024;
  std::vector<node_id> small_int_;  // CONST weakint v for v in [0, small_ints), or no_node

 public:
  /// Lazily filled caches of derived properties that are too costly to compute for every node at
  /// creation (see graph.hpp). Indexed by node id; `has` says whether the entry is valid. The lists
  /// live in shared blocks that never move (one vector per node was one allocation per entry), so a
  /// list read by get() stays valid while other entries are added.
  struct lazy_cache {
    struct entry {
      const node_id* data = nullptr;
      std::uint32_t size = 0;
      bool done = false;
    };
    std::vector<entry> entries;
    std::vector<std::vector<node_id>> blocks;  // each filled up to its capacity, never reallocated
    constexpr bool has(node_id id) const { return id < entries.size() && entries[id].done; }
    constexpr void put(node_id id, std::span<const node_id> v) {
      if (entries.size() <= id) entries.resize(id + 1 > 2 * entries.size() ? id + 1 : 2 * entries.size());
      entry& e = entries[id];
      e.size = static_cast<std::uint32_t>(v.size());
      e.done = true;
      e.data = nullptr;
      if (v.empty()) return;
      if (blocks.empty() || blocks.back().capacity() - blocks.back().size() < v.size()) {
        blocks.emplace_back();
        blocks.back().reserve(v.size() > block_size ? v.size() : block_size);
      }
      std::vector<node_id>& b = blocks.back();
      const std::size_t at = b.size();
      b.insert(b.end(), v.begin(), v.end());
      e.data = b.data() + at;
    }
    constexpr std::span<const node_id> get(node_id id) const {
      const entry& e = entries[id];
      return {e.data, e.size};
    }
    constexpr void clear() {
      entries.clear();
      blocks.clear();
    }
    static constexpr std::size_t block_size = 4096;
  };
  lazy_cache ranges_cache, ended_ranges_cache, backward_slice_cache;

  friend class UOp;
};

// Not inline: see core/detail/out_of_line.hpp.
template <class Tag>
void Arena::set_up_out_of_line() {
  set_up<Tag>();
}
template <class Tag>
UOp Arena::make_out_of_line(Ops op, DType dtype, std::span<const UOp> srcs, const Arg& arg, const Arg& tag) {
  return make_node<Tag>(op, dtype, srcs, arg, tag);
}

// --- UOp accessors ----------------------------------------------------------------------------------
constexpr Ops UOp::op() const { return arena_->raw(id_).op; }
constexpr DType UOp::dtype() const { return arena_->raw(id_).dtype; }
constexpr std::size_t UOp::nsrc() const { return arena_->raw(id_).nsrc; }
constexpr UOp UOp::src(std::size_t i) const { return UOp(arena_, arena_->src_id(id_, i)); }
constexpr UOp::src_range UOp::srcs() const { return src_range(*this); }
constexpr const Arg& UOp::arg() const { return arena_->arg_by_id(arena_->raw(id_).arg); }
constexpr const Arg& UOp::tag() const { return arena_->arg_by_id(arena_->tag_id(id_)); }
// Args are interned, so a node without a tag has tag id 0 (None): one load, not tag()'s three, and
// a fraction of their code inlined into every rewriter that asks.
constexpr bool UOp::has_tag() const { return arena_->tag_id(id_) != 0; }
constexpr UOp::shape_view UOp::shape() const {
  return shape_view(arena_, arena_->cold(id_).dims_off, arena_->raw(id_).rank);
}
constexpr std::int64_t UOp::shape_view::operator[](std::size_t i) const {
  if (i >= size()) fail("shape: axis index out of range");
  return a_->dim(off_, i);
}
constexpr std::optional<AddrSpace> UOp::addrspace() const {
  auto a = arena_->raw(id_).addrspace;
  if (a == 0) return std::nullopt;
  return static_cast<AddrSpace>(a);
}
constexpr std::int64_t UOp::vmin() const { return arena_->cold(id_).vmin; }
constexpr std::int64_t UOp::vmax() const { return arena_->cold(id_).vmax; }

}  // namespace uopcg

// The derivations Arena::make runs on every new node.
#include "detail/derive_bounds.hpp"
#include "detail/derive_shape.hpp"
