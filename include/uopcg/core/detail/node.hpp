// Internals of the arena: the node records, the storage that never moves, and the small helpers
// its derivations and traversals share. Not part of the public interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "../arg.hpp"
#include "../dtype.hpp"
#include "../ops.hpp"

namespace uopcg {

namespace detail {

/// Storage whose elements never move (fixed-size chunks), so references handed out stay valid
/// while the arena grows.
template <class T, std::size_t Chunk = 256>
class stable_pool {
 public:
  constexpr std::size_t size() const { return size_; }
  constexpr const T& operator[](std::size_t i) const { return chunks_[i / Chunk][i % Chunk]; }
  constexpr T& operator[](std::size_t i) { return chunks_[i / Chunk][i % Chunk]; }
  constexpr std::size_t push_back(T v) {
    if (size_ % Chunk == 0 && size_ / Chunk == chunks_.size()) {  // chunks kept by clear() are reused
      chunks_.emplace_back();
      chunks_.back().reserve(Chunk);
    }
    chunks_[size_ / Chunk].push_back(std::move(v));
    return size_++;
  }
  /// Destroys every element; the chunks keep their storage.
  constexpr void clear() {
    for (auto& c : chunks_) c.clear();
    size_ = 0;
  }
  /// The index of the element `p` points at when it is one of this pool's, else no_index. Not in
  /// constant evaluation (pointers into different allocations cannot be ordered there): no_index.
  static constexpr std::size_t no_index = ~std::size_t(0);
  constexpr std::size_t index_of(const T* p) const {
    if (std::is_constant_evaluated()) return no_index;
    const std::less<const T*> less;
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const T* b = chunks_[c].data();
      if (!less(p, b) && less(p, b + chunks_[c].size())) return c * Chunk + static_cast<std::size_t>(p - b);
    }
    return no_index;
  }

 private:
  std::vector<std::vector<T>> chunks_;
  std::size_t size_ = 0;
};

constexpr std::uint64_t mix64(std::uint64_t x) { return Arg::mix(x); }

/// Ops whose result shape is the numpy broadcast of their sources' shapes.
constexpr bool broadcasts(Ops op) { return GroupOp::Broadcastable.contains(op); }

// Saturating arithmetic for value bounds (weakint is unbounded in principle).
constexpr std::int64_t sat(__int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<std::int64_t>(v);
}

// What traversals and matching read (16 bytes: 4 records per cache line). The value bounds, the
// hash, the tag and the shape's offset live beside it, in Arena::cold_, so that a graph larger than
// the cache streams only what matching reads. The op summary has an array of its own
// (Arena::sub_ops_, 8 bytes a node): graph_rewrite reads it for every node whose own op has no
// rule, and in the cold record each of those reads would be a cache miss of its own.
struct Node {
  Ops op;
  DType dtype;
  std::uint8_t addrspace;  // 0 = none, else AddrSpace value
  std::int8_t rank;        // shape rank; -1 = no shape (statement), -2 = ill-formed
  std::uint32_t nsrc;
  std::uint32_t src_off;
  std::uint32_t arg;
};
struct NodeCold {
  std::int64_t vmin, vmax;
  std::uint64_t hash;
  std::uint32_t tag;       // an interned arg, like Node::arg (most nodes have none)
  std::uint32_t dims_off;  // the shape, into Arena::dims_
};
/// An op set folded to 64 bits (bit op % 64): a summary where a clear bit proves absence and a set
/// bit only says "maybe" (ops 64 and up share bits with 0-63).
constexpr std::uint64_t op_bits(OpSet s) { return s.lo | s.hi; }
constexpr std::uint64_t op_bit(Ops op) { return std::uint64_t(1) << (static_cast<unsigned>(op) & 63u); }

}  // namespace detail

}  // namespace uopcg
