// graph_rewrite with tinygrad's semantics, iteratively (an explicit stack, so deep graphs and
// constant evaluation both work):
//  - default mode: a node goes to the rules once its children are final; a replacement is itself
//    rewritten from scratch (its children, then the rules again): a per-node fixpoint; results are
//    memoized, so shared subgraphs are rewritten once. With `ordered`, the visiting order is
//    tinygrad's: a node already pushed (by an ancestor) is not pushed again, and a node whose
//    source is pending waits for it (a waitlist, released newest first), so rules that number
//    things through the context (accumulators, local buffers) number them as tinygrad does;
//  - bottom_up: the rules are applied to a node before its children, repeatedly until none applies
//    (a cycle is an error); then the children of the result are visited, and a rebuilt node goes
//    through the same procedure; a rewriter returning pat::gated stops the descent;
//  - walk: one pass, no fixpoint; a replacement is not rewritten again.
// A step limit turns a non-terminating rule set into an error naming the last rules applied.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../core/graph.hpp"
#include "rule_set.hpp"

namespace uopcg::pat {

/// Called after every rewrite when set: (pass name, node before, node after, rule).
using trace_fn = void (*)(void* user, std::string_view pass, UOp before, UOp after, const rule_info& rule);

/// A per-thread observer of every rule that fires, in every graph_rewrite of this thread while it
/// is installed (observe_rewrites): how a pipeline recorder sees the rules of stages that rewrite
/// without options. The engine reads it once per call, and never in constant evaluation.
struct rewrite_observer {
  trace_fn fn = nullptr;
  void* user = nullptr;
};

namespace detail {
inline thread_local rewrite_observer current_rewrite_observer{};
}  // namespace detail

/// Installs `observer` on this thread for its lifetime (the previous one comes back after).
class observe_rewrites {
 public:
  explicit observe_rewrites(rewrite_observer observer) : saved_(detail::current_rewrite_observer) {
    detail::current_rewrite_observer = observer;
  }
  observe_rewrites(const observe_rewrites&) = delete;
  observe_rewrites& operator=(const observe_rewrites&) = delete;
  ~observe_rewrites() { detail::current_rewrite_observer = saved_; }

 private:
  rewrite_observer saved_;
};

struct rewrite_options {
  /// Apply the rules to a node before its children (tinygrad's bottom_up=True).
  bool bottom_up = false;
  /// One pass, no fixpoint: a replacement is not rewritten again.
  bool walk = false;
  /// Named in errors and passed to the trace hook.
  std::string_view name = "graph_rewrite";
  /// Visit every node in tinygrad's order, rule-free subgraphs included (where a subgraph waits for
  /// a node pushed by an ancestor, that delays the nodes above it). Only a context that numbers
  /// what the rules create (accumulators, local buffers) can tell; without it, subgraphs no rule
  /// can match are skipped, and the rewrite's result is the same.
  bool ordered = false;
  /// Rewrites allowed in one call before it is declared non-terminating.
  std::size_t max_rewrites = 1u << 22;
  /// Opt-in counters (attempts / matches per rule); with two rule sets, those of the post-order one.
  rewrite_stats* stats = nullptr;
  trace_fn trace = nullptr;
  void* trace_user = nullptr;
};

/// The absent rule set of a one-set rewrite.
struct no_rules {
  static constexpr std::size_t size = 0;
  static constexpr OpSet root_ops{};
  constexpr rule_info info(std::size_t) const { return {}; }
  template <class Ctx>
  constexpr applied apply(UOp, Ctx&, rewrite_stats* = nullptr) const {
    return {};
  }
  using addresses = detail::rule_addresses<0, 0>;
  template <class Ctx>
  constexpr detail::rules_ref ref(addresses&) const {
    return {};
  }
};

namespace detail {

// Frames of the explicit stack (core's walk_frame, pooled by the arena); outside the engine template
// so that std::vector<frame> is one instantiation for every rule set.
using rewrite_frame = uopcg::detail::walk_frame;
struct last_rule {
  int rule = 0;
  bool post = true;
};

// pm is applied after a node's children (post-order), bpm before them (pre-order, to a fixpoint);
// HasPM / HasBPM say which are there. The engine knows the rule sets only as data (rules_ref) and
// the context only as any_context: it is instantiated once, not per rule set or context type.
template <bool HasPM, bool HasBPM>
class rewriter_engine {
  static constexpr bool has_pm = HasPM;
  static constexpr bool has_bpm = HasBPM;

 public:
  constexpr rewriter_engine(Arena& a, const rules_ref& pm, const rules_ref& bpm, any_context& ctx, const rewrite_options& opt)
      : a_(a), pm_(pm), bpm_(bpm), rule_ops_(pm.root_ops | bpm.root_ops), ctx_(ctx), opt_(opt), replace_(a), stats_(opt.stats) {
    if (!std::is_constant_evaluated()) observer_ = detail::current_rewrite_observer;
    if (opt.stats) {
      const rules_ref& counted = has_pm ? pm : bpm;
      opt.stats->ensure(counted.size);
      for (std::size_t i = opt.stats->rules.size(); i < counted.size; ++i) opt.stats->rules.push_back(counted.info(i));
    }
  }

  constexpr UOp run(UOp root) {
    covered();
    if (opt_.walk) return walk(root);
    if (opt_.ordered) return unified<true>(root);
    if constexpr (!has_bpm) return scan(root);
    else return unified<false>(root);
  }

 private:
  using frame = rewrite_frame;

  // One vector for the memo and the traversal marks: the result of a node (below pending_base);
  // no_node while not started (unordered) or never pushed (ordered); pending once pushed and not
  // final (ordered only); in_progress once its stage 0 ran (unordered only); pending_base + k
  // when frames wait for it, the newest being frame k of the waiting list (each links to the next
  // older one). It covers every node of the arena (read without a
  // bounds check): covered() is called after each event that can create nodes (a rule rewrote, a
  // node was rebuilt), and a node the engine reads was created before such an event.
  static constexpr node_id pending = no_node - 1;
  static constexpr node_id in_progress = no_node - 2;  // stage 0 ran (unordered only)
  static constexpr node_id pending_base = node_id{1} << 31;
  constexpr void covered() {
    if (a_.size() >= pending_base) fail("graph_rewrite: the arena has more nodes than the rewrite engine can index");
    replace_.cover_arena();
  }
  [[gnu::always_inline]] constexpr node_id state(node_id id) const { return replace_.get_unchecked(id); }
  static constexpr bool is_final(node_id s) { return s < pending_base; }
  [[gnu::always_inline]] constexpr node_id done(node_id id) const {
    node_id v = state(id);
    return is_final(v) ? v : no_node;
  }
  [[gnu::always_inline]] constexpr void set_state(node_id id, node_id v) { replace_.set_unchecked(id, v); }
  [[gnu::always_inline]] constexpr void set_done(node_id id, node_id v) { set_state(id, v); }

  // A node none of whose graph (it included) has an op some rule's root can match is its own
  // result: no rule is offered any node there (exactly as a visit would find), so it is not walked.
  // The node's own op is tested first (its record is read anyway); the summary only when that fails.
  [[gnu::always_inline]] constexpr bool outside_rules(node_id id) const {
    return !rule_ops_.contains(a_.op_of(id)) && !a_.may_contain(id, rule_ops_);
  }

  [[gnu::always_inline]] constexpr applied apply(const rules_ref& rs, UOp u, bool post) {
    rewrite_stats* stats = (post || !has_pm) ? stats_ : nullptr;
    if (stats) ++stats->visits;
    // a node no root can match (one the walk cannot skip: rules match below it) is not offered:
    // a bit test here instead of a call
    if (!rs.root_ops.contains(a_.op_of(u.id()))) return {};
    applied r = apply_rules(rs, u, ctx_, stats);
    if (r.rule >= 0) {
      rs.checked(r, u);
      covered();
      last_rules_[steps_ % 8] = {r.rule, post};
      if (++steps_ > opt_.max_rewrites) nonterminating("more rewrites than max_rewrites");
      if (opt_.trace) opt_.trace(opt_.trace_user, opt_.name, u, r.result, rs.info(static_cast<std::size_t>(r.rule)));
      if (observer_.fn) observer_.fn(observer_.user, opt_.name, u, r.result, rs.info(static_cast<std::size_t>(r.rule)));
    }
    return r;
  }

  // cold and out of line: its text building otherwise shapes the register allocation of the loops
  [[noreturn, gnu::cold, gnu::noinline]] constexpr void nonterminating(std::string_view why) {
    text t;
    t.append(opt_.name).append(": ").append(why).append("; the rule set does not terminate. Last rules applied:");
    std::size_t n = steps_ < 8 ? steps_ : 8;
    for (std::size_t k = 0; k < n; ++k) {
      auto [r, post] = last_rules_[(steps_ - n + k) % 8];
      rule_info info = post ? pm_.info(static_cast<std::size_t>(r)) : bpm_.info(static_cast<std::size_t>(r));
      t.append(k ? ", " : " ").append(info.label());
    }
    fail(t.view());
  }

  // Called once every source is final (so no source is in progress: state() is its result).
  // The per-node helpers are forced inline: g++'s inliner otherwise flips on unrelated edits of
  // the loop, and an out-of-line call per visit is a large share of a visit's cost.
  [[gnu::always_inline]] constexpr bool srcs_changed(UOp u) const {
    const std::uint32_t nsrc = a_.raw(u.id()).nsrc;
    const node_id* srcs = a_.src_ids(u.id());
    for (std::uint32_t i = 0; i < nsrc; ++i)
      if (state(srcs[i]) != srcs[i]) return true;
    return false;  // the common case: nothing below changed
  }
  // u with each source replaced by its result (every source final), through map_srcs: the new
  // sources are gathered on the stack (a vector filled by push_back would be a call per source: g++
  // leaves push_back out of line in the large functions a stage's rewrite inlines into).
  constexpr UOp rebuilt(UOp u) const {
    return map_srcs(u, [this](UOp s) { return UOp(&a_, done(s.id())); });
  }
  // What comes after node cur, whose sources are final: if one of them changed, cur rebuilt on
  // their results (which goes through everything again); else the post-order rules' replacement
  // (rewritten from scratch); no_node when neither.
  [[gnu::always_inline]] constexpr node_id next_of(UOp cur, bool changed) {
    if (changed) {
      const node_id next = rebuilt(cur).id();
      covered();
      return next;
    }
    if constexpr (has_pm) {
      applied r = apply(pm_, cur, true);
      if (r.rule >= 0) return r.result.id();
    }
    return no_node;
  }
  // Pushes the sources (last first, so the first is visited first) that are not started: in
  // tinygrad's order only those never pushed before (marked pending); otherwise also those pushed
  // and not started (they stay unmarked: plain children-first order, where a source is final
  // before its user's stage 1 unless the graph has a cycle).
  template <bool Ordered>
  [[gnu::always_inline]] constexpr void push_children(std::vector<frame>& st, UOp u) {
    const std::uint32_t nsrc = a_.raw(u.id()).nsrc;
    const node_id* srcs = a_.src_ids(u.id());
    for (std::uint32_t i = nsrc; i > 0; --i)
      if (state(srcs[i - 1]) == no_node) {
        a_.prefetch(srcs[i - 1]);  // visited soon: overlap the cache misses of the siblings
        if constexpr (Ordered) set_state(srcs[i - 1], pending);
        st.push_back({srcs[i - 1], 0, no_node});
      }
  }

  // Frame f waits until node x is final.
  constexpr void wait_for(node_id x, const frame& f, std::vector<frame>& wf, std::vector<node_id>& wn) {
    const node_id s = state(x);
    if (wf.size() >= in_progress - pending_base) fail("graph_rewrite: too many waiting frames");
    wf.push_back(f);
    wn.push_back(s >= pending_base && s < in_progress ? s - pending_base : no_node);
    set_state(x, pending_base + static_cast<node_id>(wf.size() - 1));
  }
  // n's result is r: the frames waiting for n go back on the stack, the newest on top.
  [[gnu::always_inline]] constexpr void finish(node_id n, node_id r, std::vector<frame>& st,
                                               const std::vector<frame>& wf, const std::vector<node_id>& wn) {
    const node_id s = state(n);
    set_done(n, r);
    if (s >= pending_base && s < in_progress) resume_waiters(s, st, wf, wn);
  }
  constexpr void resume_waiters(node_id s, std::vector<frame>& st, const std::vector<frame>& wf,
                                const std::vector<node_id>& wn) const {
    std::size_t count = 0;
    for (node_id k = s - pending_base; k != no_node; k = wn[k]) ++count;
    std::size_t pos = st.size() + count;
    st.resize(pos, frame{});  // with a value: libstdc++'s resize(n) of a trivial type is not constexpr on clang
    for (node_id k = s - pending_base; k != no_node; k = wn[k]) st[--pos] = wf[k];
  }

  template <bool Ordered>
  constexpr UOp unified(UOp root) {
    Arena::scratch_vector<frame> st_v(a_), wf_v(a_);
    Arena::scratch_vector<node_id> wn_v(a_);
    std::vector<frame>& st = *st_v;
    std::vector<frame>& wf = *wf_v;     // waiting frames
    std::vector<node_id>& wn = *wn_v;   // the next older waiter of the same node
    if (Ordered && state(root.id()) == no_node) set_state(root.id(), pending);
    st.push_back({root.id(), 0, no_node});
    drain<Ordered>(st, wf, wn);
    if (!is_final(state(root.id()))) nonterminating("a rewrite produced a node that is still being rewritten");
    return UOp(&a_, done(root.id()));
  }

  // The first pass of scan: marks r's graph in bits, down from r, and returns the lowest id it
  // reached and how many nodes; or, when the ids are sparse, clears the bits it set and returns
  // lo = no_node. Out of line: inside scan, whose second pass inlines the rules' dispatch, g++
  // keeps this loop's variables on the stack. It keeps no list of the words it sets below itself
  // for the sparse case (a test and a call per source): unmark finds them.
  struct marked {
    node_id lo;
    std::size_t reached;
  };
  [[gnu::noinline]] constexpr marked mark(const node_id r, std::vector<std::uint32_t>& bits) {
    std::uint32_t* const words = bits.data();
    words[r / 32] |= std::uint32_t{1} << (r % 32);
    std::size_t pending = 1, reached = 0, crossed = 0;  // pending: marked, not reached yet
    node_id lo = r, w = r / 32 + 1;
    while (w-- > 0 && pending != 0) {
      if (words[w] == 0 && ++crossed > 64 + 16 * reached) {
        unmark(r, w, words);
        return {no_node, reached};
      }
      std::uint32_t unreached = ~0u;  // the bits of this word the pass has not reached
      for (std::uint32_t todo = words[w]; todo != 0; todo = words[w] & unreached) {
        const int b = 31 - std::countl_zero(todo);
        unreached = (std::uint32_t{1} << b) - 1;
        const node_id n = w * 32 + static_cast<node_id>(b);
        --pending, ++reached;
        lo = n;
        if (outside_rules(n)) {  // its own result: no rule can match in its graph (never the root)
          set_done(n, n);
          continue;
        }
        const node_id* s = a_.src_ids(n);
        for (const node_id* const e = s + a_.raw(n).nsrc; s != e; ++s) {
          const node_id c = *s;
          const std::uint32_t old = words[c / 32], bit = std::uint32_t{1} << (c % 32);
          words[c / 32] = old | bit;
          pending += (old & bit) == 0;
        }
      }
    }
    return {lo, reached};
  }
  // Clears the bits of a first pass given up at the empty word w: every bit above w is a node the
  // pass reached; what it set below w are bits of their sources (those of a node outside_rules,
  // which it did not mark, are cleared too: harmless). Costs what the pass did so far.
  [[gnu::cold]] constexpr void unmark(const node_id r, const node_id w, std::uint32_t* const words) const {
    for (node_id k = w + 1; k <= r / 32; ++k) {
      for (std::uint32_t todo = words[k]; todo != 0; todo &= todo - 1) {
        const node_id n = k * 32 + static_cast<node_id>(std::countr_zero(todo));
        const node_id* s = a_.src_ids(n);
        for (const node_id* const e = s + a_.raw(n).nsrc; s != e; ++s) words[*s / 32] &= ~(std::uint32_t{1} << (*s % 32));
      }
      words[k] = 0;
    }
  }

  // Default mode with post-order rules only, in two passes over a bitmap of node ids, both in id
  // order: a node is made after its sources, so its id is higher than theirs. The first pass goes
  // down from the root and marks the sources of each marked node that is not outside_rules; it
  // stops below the lowest marked id. The second goes up and offers each marked node to the rules
  // once its sources are final. A node's result depends only on the node (its sources' results,
  // then the rules to a fixpoint), so only the order in which the rules see nodes differs from the
  // depth-first loop's (`ordered` keeps tinygrad's); a replacement goes through the depth-first
  // loop, and may reach nodes not offered yet: they are final when the scan gets there. Why: the
  // depth-first loop reads a node's record, then its sources, then their memo slots, a chain of
  // cache misses per node on a graph larger than the cache; both passes read records and source
  // lists as streams, and skip 32 unmarked ids per word. A graph whose ids are sparse (a small
  // graph over old nodes of a large arena) would make the passes cross mostly empty words: the
  // first pass gives up after crossing 64 + 16 empty words per node reached, and the depth-first
  // loop runs.
  constexpr UOp scan(UOp root) {
    const node_id r = root.id();
    if (outside_rules(r)) return root;
    Arena::scratch_bitmap bm(a_, static_cast<std::size_t>(r) + 1);
    std::vector<std::uint32_t>& bits = bm.words();  // bit n: node n is marked
    const auto [lo, reached] = mark(r, bits);
    if (lo == no_node) {  // sparse: go depth-first instead
      bm.cleared();
      return unified<false>(root);
    }
    Arena::scratch_vector<frame> st_v(a_), wf_v(a_);
    Arena::scratch_vector<node_id> wn_v(a_);
    // most of lo..r is offered and is its own result: when the graph is dense there, those slots
    // are written without noting each, and the map empties the whole range when it is lent again
    // (a memset, cheaper than a note per node when at most 16 ids per node are spanned)
    const bool dense = (r - lo) / 16 < reached;
    if (dense) replace_.untracked(lo, r);
    for (node_id w = lo / 32; w <= r / 32; ++w) {
      const std::uint32_t word_bits = bits[w];
      bits[w] = 0;  // the bitmap goes back clear
      for (std::uint32_t word = word_bits; word != 0; word &= word - 1) {
        const node_id n = w * 32 + static_cast<node_id>(std::countr_zero(word));
        if (is_final(state(n))) continue;  // outside the rules, or the graph of a replacement
        // every source is final: older than n, so offered before it, or outside the rules
        const std::uint32_t nsrc = a_.raw(n).nsrc;
        const node_id* cs = a_.src_ids(n);
        bool changed = false;
        if (steps_ != 0)  // before the first rewrite, every final node is its own result
          for (std::uint32_t k = 0; k < nsrc; ++k) changed |= state(cs[k]) != cs[k];
        const node_id next = next_of(UOp(&a_, n), changed);
        if (next == no_node) {
          if (dense) replace_.set_untracked(n, n);
          else set_done(n, n);
          continue;
        }
        // n's result is that of next, rewritten depth-first (it may reach nodes not offered yet)
        set_state(n, in_progress);
        st_v->push_back({n, 2, next});
        st_v->push_back({next, 0, no_node});
        drain<false>(*st_v, *wf_v, *wn_v);
        if (!is_final(state(n))) nonterminating("a rewrite produced a node that is still being rewritten");
      }
    }
    bm.cleared();
    return UOp(&a_, done(r));
  }

  // Runs the depth-first loop until the stack is empty.
  template <bool Ordered>
  constexpr void drain(std::vector<frame>& st, std::vector<frame>& wf, std::vector<node_id>& wn) {
    std::vector<node_id> seen;
    // A frame is rewritten in place where tinygrad pops it and pushes its successor.
    while (!st.empty()) {
      frame& f = st.back();
      if (is_final(state(f.n))) {
        st.pop_back();
        continue;
      }
      if (f.stage == 0) {
        const node_id s0 = state(f.n);
        if constexpr (Ordered) {
          if (s0 == no_node) set_state(f.n, pending);  // a rewrite's result, pushed directly
        } else {
          if (s0 != no_node) nonterminating("a rewrite produced a node that is still being rewritten");
          if (outside_rules(f.n)) {
            const node_id n = f.n;
            st.pop_back();
            set_done(n, n);  // nothing waits for it: only a cycle makes a frame wait here
            continue;
          }
          set_state(f.n, in_progress);
        }
        UOp cur(&a_, f.n);
        if constexpr (has_bpm) {
          // pre-order rules, to a fixpoint; a node seen twice is a loop
          bool gate = false;
          seen.clear();
          for (;;) {
            applied r = apply(bpm_, cur, false);
            if (r.rule < 0) break;
            if (r.gate) {  // final: the children of the result are not visited
              cur = r.result;
              gate = true;
              break;
            }
            seen.push_back(cur.id());
            for (node_id s : seen)
              if (s == r.result.id()) nonterminating("a bottom-up rewrite returned to a node it had already left");
            cur = r.result;
          }
          if (gate) {
            const node_id n = f.n;
            st.pop_back();
            finish(n, cur.id(), st, wf, wn);
            continue;
          }
        }
        f.stage = 1;  // rules never touch the stack, so f is still its top
        f.aux = cur.id();
        push_children<Ordered>(st, cur);
        continue;
      }
      if (f.stage == 1) {
        UOp cur(&a_, f.aux);
        // wait for the first source that is not final (tinygrad's waitlist); else note a change
        const std::uint32_t nsrc = a_.raw(f.aux).nsrc;
        const node_id* cs = a_.src_ids(f.aux);
        bool changed = false;
        node_id wait = no_node;
        for (std::uint32_t i = 0; i < nsrc; ++i) {
          const node_id s = state(cs[i]);
          if (!is_final(s)) {
            wait = cs[i];
            break;
          }
          changed |= s != cs[i];
        }
        if (wait != no_node) {
          const frame w = f;
          st.pop_back();
          wait_for(wait, w, wf, wn);
          continue;
        }
        const node_id next = next_of(cur, changed);
        if (next == no_node) {
          const node_id n = f.n;
          st.pop_back();
          finish(n, cur.id(), st, wf, wn);
          if (cur.id() != n && state(cur.id()) == no_node) set_done(cur.id(), cur.id());
          continue;
        }
        f.stage = 2;
        f.aux = next;
        st.push_back({next, 0, no_node});
        continue;
      }
      // stage 2: n's result is that of its replacement
      const frame w = f;
      st.pop_back();
      if (!is_final(state(w.aux))) {
        wait_for(w.aux, w, wf, wn);
        continue;
      }
      finish(w.n, done(w.aux), st, wf, wn);
    }
  }

  constexpr UOp walk(UOp root) {
    Arena::scratch_vector<frame> st_v(a_);
    std::vector<frame>& st = *st_v;
    st.push_back({root.id(), 0, no_node});
    while (!st.empty()) {
      frame& f = st.back();
      if (done(f.n) != no_node) {
        st.pop_back();
        continue;
      }
      if (f.stage == 0) {
        if (outside_rules(f.n)) {
          set_done(f.n, f.n);
          st.pop_back();
          continue;
        }
        if constexpr (has_bpm) {
          applied r = apply(bpm_, UOp(&a_, f.n), false);
          if (r.rule >= 0) {  // children not visited, the result not rewritten again
            set_done(f.n, r.result.id());
            st.pop_back();
            continue;
          }
        }
        f.stage = 1;
        // every source not final yet, pushed again if it is already on the stack (tinygrad's walk)
        const std::uint32_t nsrc = a_.raw(f.n).nsrc;
        const node_id* cs = a_.src_ids(f.n);
        for (std::uint32_t i = nsrc; i > 0; --i)
          if (!is_final(state(cs[i - 1]))) st.push_back({cs[i - 1], 0, no_node});
        continue;
      }
      UOp u(&a_, f.n);
      UOp rebuilt_u = u;
      if (srcs_changed(u)) {
        rebuilt_u = rebuilt(u);
        covered();
      }
      node_id result = rebuilt_u.id();
      if constexpr (has_pm) {
        applied r = apply(pm_, rebuilt_u, true);
        if (r.rule >= 0) result = r.result.id();
      }
      set_done(f.n, result);
      st.pop_back();
    }
    return UOp(&a_, done(root.id()));
  }

  Arena& a_;
  const rules_ref pm_, bpm_;
  const OpSet rule_ops_;  // the ops some rule's root can match
  any_context& ctx_;
  const rewrite_options& opt_;
  Arena::scratch_map replace_;  // node -> result, or a traversal mark (see state())
  rewrite_stats* const stats_;  // opt_.stats, read once per visit
  rewrite_observer observer_{};  // the thread's observer when the rewrite started (none in constant evaluation)
  std::size_t steps_ = 0;
  last_rule last_rules_[8]{};
};

template <class T>
inline constexpr bool is_options_v = std::is_same_v<std::remove_cvref_t<T>, rewrite_options>;
}  // namespace detail

namespace detail {
// One rule set's rewrite, the set as data (the graph_rewrite overloads bind it; each is one
// function templated on the set, whose name g++ must mangle: see rule_set::ref).
constexpr UOp rewrite_with(UOp root, const rules_ref& set, any_context& ctx, const rewrite_options& options) {
  const rules_ref none{};
  if (options.bottom_up) {
    rewriter_engine<false, true> e(root.arena(), none, set, ctx, options);
    return e.run(root);
  }
  rewriter_engine<true, false> e(root.arena(), set, none, ctx, options);
  return e.run(root);
}
}  // namespace detail

/// Rewrites the graph of `root` with `rules`: children first (default), bottom-up or walk.
template <class RS, class Ctx>
  requires(!detail::is_options_v<Ctx>)
constexpr UOp graph_rewrite(UOp root, const RS& rules, Ctx& ctx, const rewrite_options& options = {}) {
  typename RS::addresses at;
  detail::context_of<Ctx> box(ctx);
  return detail::rewrite_with(root, rules.template ref<Ctx>(at), box, options);
}
template <class RS>
constexpr UOp graph_rewrite(UOp root, const RS& rules, const rewrite_options& options = {}) {
  no_context ctx;
  typename RS::addresses at;
  detail::context_of<no_context> box(ctx);
  return detail::rewrite_with(root, rules.template ref<no_context>(at), box, options);
}
/// The signature of the design: graph_rewrite(arena, sink, rules, ctx, options).
template <class RS, class Ctx>
  requires(!detail::is_options_v<Ctx>)
constexpr UOp graph_rewrite(Arena& arena, UOp root, const RS& rules, Ctx& ctx, const rewrite_options& options = {}) {
  if (&root.arena() != &arena) fail("graph_rewrite: the root belongs to another arena");
  typename RS::addresses at;
  detail::context_of<Ctx> box(ctx);
  return detail::rewrite_with(root, rules.template ref<Ctx>(at), box, options);
}
/// Both rule sets at once: `bpm` before a node's children, `pm` after them (tinygrad's pm + bpm).
template <class PM, class BPM, class Ctx>
  requires(!detail::is_options_v<Ctx>)
constexpr UOp graph_rewrite(UOp root, const PM& pm, const BPM& bpm, Ctx& ctx, const rewrite_options& options = {}) {
  // sizes from the addresses types, not from the sets' static size (g++ emits that once code
  // names it: see rule_set::size)
  typename PM::addresses pm_at;
  typename BPM::addresses bpm_at;
  constexpr bool has_pm = PM::addresses::size > 0, has_bpm = BPM::addresses::size > 0;
  detail::context_of<Ctx> box(ctx);
  detail::rewriter_engine<has_pm, has_bpm> e(root.arena(), pm.template ref<Ctx>(pm_at), bpm.template ref<Ctx>(bpm_at), box, options);
  return e.run(root);
}

/// tinygrad's `substitute` (see core/graph.hpp).
using uopcg::substitute;

}  // namespace uopcg::pat
