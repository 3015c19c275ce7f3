// Printing graphs: a one-line form per node and a readable multi-line dump (in toposort order, with
// local numbering, shapes and address spaces). Built on uopcg::text, so it runs in constant
// evaluation too.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "arena.hpp"
#include "graph.hpp"
#include "text.hpp"

namespace uopcg {

namespace detail {
constexpr void print_shape(text& out, UOp u) {
  auto s = u.shape();
  if (s.ill_formed()) {
    out.append("<ill-formed>");
    return;
  }
  if (!s.has_value()) {
    out.append("None");
    return;
  }
  out.append('(');
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out.append(", ");
    out.append(s[i]);
  }
  if (s.size() == 1) out.append(',');
  out.append(')');
}

// `number(u)` gives the label printed for a source.
template <class Number>
constexpr void print_line(text& out, UOp u, Number&& number) {
  out.append(name(u.op())).append(' ').append(name(u.dtype())).append(" (");
  for (std::size_t i = 0; i < u.nsrc(); ++i) {
    if (i) out.append(", ");
    out.append('%').append(number(u.src(i)));
  }
  out.append(')');
  if (!u.arg().is_none()) {
    out.append(' ');
    u.arg().print(out);
  }
  if (u.has_tag()) {
    out.append(" tag=");
    u.tag().print(out);
  }
}
}  // namespace detail

/// One line: "ADD weakint (%3, %5)" with arena ids as source labels, prefixed by "%<id> = ".
constexpr text to_text(UOp u) {
  text out;
  out.append('%').append(u.id()).append(" = ");
  detail::print_line(out, u, [](UOp s) { return s.id(); });
  return out;
}

/// Multi-line dump of the graph of `root`, one node per line in toposort order:
///   %<n> <OP> <dtype> (<srcs>) <arg> [tag=...]   ; shape=<shape> <addrspace>
constexpr text print_graph(UOp root) {
  auto nodes = toposort(root);
  std::vector<std::uint32_t> local(root.arena().size(), 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) local[nodes[i].id()] = static_cast<std::uint32_t>(i);
  text out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    UOp u = nodes[i];
    out.append('%').append(i).append(' ');
    out.pad_to(6);
    detail::print_line(out, u, [&](UOp s) { return local[s.id()]; });
    out.append("   ; shape=");
    detail::print_shape(out, u);
    if (auto a = u.addrspace()) out.append(' ').append(name(*a));
    out.append('\n');
  }
  return out;
}

/// A linearized program (a list of nodes in execution order), numbered by position.
constexpr text print_program(std::span<const UOp> program) {
  text out;
  if (program.empty()) return out;
  std::vector<std::uint32_t> local(program[0].arena().size(), 0xFFFFFFFFu);
  for (std::size_t i = 0; i < program.size(); ++i) local[program[i].id()] = static_cast<std::uint32_t>(i);
  for (std::size_t i = 0; i < program.size(); ++i) {
    out.append('%').append(i).append(' ');
    out.pad_to(6);
    detail::print_line(out, program[i], [&](UOp s) { return local[s.id()]; });
    out.append('\n');
  }
  return out;
}

inline std::string to_string(UOp u) { return to_text(u).str(); }
inline std::string graph_to_string(UOp root) { return print_graph(root).str(); }

}  // namespace uopcg
