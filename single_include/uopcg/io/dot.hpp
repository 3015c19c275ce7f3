// uopcg single header io/dot.hpp: Graphviz DOT output of graphs and programs.
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/compile.hpp.
// Inlined, in order: 1 headers from include/
//   uopcg/io/dot.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/io/dot.hpp ----
#ifndef UOPCG_SINGLE_IO_DOT_HPP
#define UOPCG_SINGLE_IO_DOT_HPP
// Graphviz DOT output of a UOp graph or a linearized program (`uopcg compile --dot`, pipeline
// traces): one box per node labelled like the text dump, edges from each source to its user,
// labelled with the source position when a node has more than one source.

#include <span>
#include <string>
#include <vector>

#include "../compile.hpp"  // single_include/uopcg/compile.hpp

namespace uopcg::io {

namespace detail {
/// A fill colour per op family, so loops, memory and arithmetic stand out.
inline std::string_view dot_colour(Ops op) {
  switch (op) {
    case Ops::RANGE: case Ops::END: case Ops::SPECIAL: return "#c8e6c9";
    case Ops::LOAD: case Ops::STORE: case Ops::INDEX: return "#ffe0b2";
    case Ops::PARAM: case Ops::BUFFER: return "#bbdefb";
    case Ops::BARRIER: case Ops::AFTER: return "#ffcdd2";
    case Ops::CONST: return "#eeeeee";
    case Ops::SINK: case Ops::GROUP: return "#d1c4e9";
    default: return "#ffffff";
  }
}
inline void dot_escape(std::string& out, std::string_view s) {
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
}
/// "OP dtype\narg [tag]" of one node, unescaped (sources are edges).
inline std::string dot_label(UOp u) {
  text t;
  t.append(name(u.op())).append(' ').append(name(u.dtype()));
  if (!u.arg().is_none()) {
    t.append('\n');
    u.arg().print(t);
  }
  if (u.has_tag()) {
    t.append(" tag=");
    u.tag().print(t);
  }
  return t.str();
}
inline std::string dot_nodes(std::span<const UOp> nodes, std::string_view title) {
  std::string out = "digraph uopcg {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"monospace\", fontsize=10];\n";
  if (!title.empty()) {
    out += "  labelloc=t;\n  label=\"";
    dot_escape(out, title);
    out += "\";\n";
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    UOp u = nodes[i];
    out += "  n" + std::to_string(u.id()) + " [label=\"%" + std::to_string(i) + " ";
    dot_escape(out, dot_label(u));
    out += "\", fillcolor=\"";
    out += dot_colour(u.op());
    out += "\"];\n";
  }
  for (UOp u : nodes)
    for (std::size_t i = 0; i < u.nsrc(); ++i) {
      out += "  n" + std::to_string(u.src(i).id()) + " -> n" + std::to_string(u.id());
      if (u.nsrc() > 1) out += " [label=\"" + std::to_string(i) + "\"]";
      out += ";\n";
    }
  out += "}\n";
  return out;
}
}  // namespace detail

/// The graph of `root` in DOT (nodes numbered in toposort order, as in print_graph).
inline std::string to_dot(UOp root, std::string_view title = {}) {
  const std::vector<UOp> nodes = toposort(root);
  return detail::dot_nodes(nodes, title);
}

/// A linearized program in DOT (nodes numbered by position).
inline std::string to_dot(std::span<const UOp> program, std::string_view title = {}) {
  return detail::dot_nodes(program, title);
}

}  // namespace uopcg::io
#endif  // UOPCG_SINGLE_IO_DOT_HPP
// ---- end uopcg/io/dot.hpp ----
