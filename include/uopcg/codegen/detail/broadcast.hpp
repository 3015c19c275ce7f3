// Numpy broadcasting as movement ops: the common shape of several shapes, and a value broadcast to
// it (used by "expand broadcast" and by the expander, whose STACKs may mix expanded and scalar
// elements).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "../../core/builder.hpp"
#include "../../core/graph.hpp"
#include "../../core/print.hpp"
#include "../../symbolic/mop_cleanup.hpp"

namespace uopcg::codegen {

/// x broadcast to `target` (numpy rules, right-aligned): the size-1 axes that grow are squeezed
/// (RESHAPE), every new or grown axis is prepended by one EXPAND, and a PERMUTE puts the grown axes
/// back in place. x itself when nothing grows.
constexpr UOp expand_to(UOp x, const std::vector<std::int64_t>& target) {
  const std::vector<std::int64_t> s = symbolic::mops::dims(x);
  if (s.size() > target.size()) fail("expand: cannot broadcast ", to_string(x), " to a lower rank");
  const std::size_t n_new = target.size() - s.size();
  std::vector<std::size_t> grown, kept;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == target[n_new + i]) kept.push_back(i);
    else if (s[i] == 1) grown.push_back(i);
    else fail("expand: cannot broadcast ", to_string(x), " to the requested shape");
  }
  if (n_new == 0 && grown.empty()) return x;
  UOp y = x;
  if (!grown.empty()) {
    std::vector<std::int64_t> squeezed;
    for (std::size_t i : kept) squeezed.push_back(s[i]);
    y = symbolic::mops::reshape(x, squeezed);
  }
  std::vector<std::int64_t> new_dims(target.begin(), target.begin() + static_cast<std::ptrdiff_t>(n_new));
  for (std::size_t i : grown) new_dims.push_back(target[n_new + i]);
  y = x.arena().make(Ops::EXPAND, x.dtype(), {y, symbolic::mops::shape_node(x.arena(), new_dims)});
  // the expanded axes are [new..., grown..., kept...]: map each output axis to its position
  std::vector<std::int64_t> perm;
  for (std::size_t j = 0; j < target.size(); ++j) {
    if (j < n_new) {
      perm.push_back(static_cast<std::int64_t>(j));
      continue;
    }
    const std::size_t i = j - n_new;
    std::size_t pos = 0;
    for (std::size_t g = 0; g < grown.size(); ++g)
      if (grown[g] == i) pos = n_new + g + 1;
    if (pos == 0)
      for (std::size_t k = 0; k < kept.size(); ++k)
        if (kept[k] == i) pos = n_new + grown.size() + k + 1;
    perm.push_back(static_cast<std::int64_t>(pos - 1));
  }
  return symbolic::mops::permute(y, perm);
}

/// The numpy broadcast of several shapes; nullopt when they are incompatible.
constexpr std::optional<std::vector<std::int64_t>> broadcast_shape(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::vector<std::int64_t> out;
  for (const auto& s : shapes) {
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    for (std::size_t k = 0; k < s.size(); ++k) {
      std::int64_t& o = out[out.size() - s.size() + k];
      if (o == 1) o = s[k];
      else if (s[k] != 1 && s[k] != o) return std::nullopt;
    }
  }
  return out;
}

}  // namespace uopcg::codegen
