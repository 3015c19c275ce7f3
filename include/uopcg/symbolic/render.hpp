// Expressions as infix text, in the spelling of tinygrad's symbolic tests: `((a*2)+b)`, `(a//4)`,
// `(a%4)`, `(a<4)`, `(!(a<4))`, `max(a, b)`, `(c?a:b)`, `(int)(a)`. Variables print their name,
// RANGEs `r<id>`, SPECIALs their name.
#pragma once

#include <string>

#include "../core/arena.hpp"
#include "../core/text.hpp"

namespace uopcg::symbolic {

namespace detail {
constexpr const char* infix(Ops op) {
  using enum Ops;
  switch (op) {
    case ADD: return "+";
    case SUB: return "-";
    case MUL: return "*";
    case FLOORDIV: return "//";
    case FLOORMOD: return "%";
    case CDIV: return "/";
    case CMOD: return "%c";
    case FDIV: return "/";
    case CMPLT: return "<";
    case CMPNE: return "!=";
    case CMPEQ: return "==";
    case AND: return "&";
    case OR: return "|";
    case XOR: return "^";
    case SHL: return "<<";
    case SHR: return ">>";
    default: return nullptr;
  }
}
constexpr void render_into(text& out, UOp u, int depth) {
  using enum Ops;
  if (depth > 200) {
    out.append("...");
    return;
  }
  const Ops op = u.op();
  if (op == CONST) {
    if (u.arg().is_invalid()) out.append("Invalid");
    else if (u.arg().is_bool() || (is_bool(u.dtype()) && u.arg().is_int())) out.append(u.arg().as_int() ? "True" : "False");
    else u.arg().print(out);
    return;
  }
  if (op == PARAM && u.arg().kind() == ArgKind::param_arg && !u.arg()[4].is_none()) {
    out.append(u.arg()[4].as_string());
    return;
  }
  if (op == RANGE && u.arg().is_tuple() && u.arg().size() > 0 && u.arg()[0].is_int()) {
    out.append('r').append(u.arg()[0].as_int());
    return;
  }
  if (op == SPECIAL && u.arg().kind() == ArgKind::string) {
    out.append(u.arg().as_string());
    return;
  }
  if (op == CMPNE && u.nsrc() == 2 && u.src(1).op() == CONST && u.src(1).arg().is_bool() && u.src(1).arg().as_bool() &&
      is_bool(u.src(0).dtype())) {
    out.append("(!");
    render_into(out, u.src(0), depth + 1);
    out.append(')');
    return;
  }
  if (const char* s = infix(op); s && u.nsrc() == 2) {
    out.append('(');
    render_into(out, u.src(0), depth + 1);
    out.append(s);
    render_into(out, u.src(1), depth + 1);
    out.append(')');
    return;
  }
  if (op == WHERE && u.nsrc() == 3) {
    out.append('(');
    render_into(out, u.src(0), depth + 1);
    out.append('?');
    render_into(out, u.src(1), depth + 1);
    out.append(':');
    render_into(out, u.src(2), depth + 1);
    out.append(')');
    return;
  }
  if (op == CAST || op == BITCAST) {
    out.append(op == CAST ? "(" : "bitcast<").append(name(u.dtype())).append(op == CAST ? ")(" : ">(");
    if (u.nsrc() > 0) render_into(out, u.src(0), depth + 1);
    out.append(')');
    return;
  }
  // max(a, b), sqrt(x), ... and anything else: OP(srcs)
  if (op == MAX) out.append("max");
  else {
    for (char ch : name(op)) out.append(static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch));
  }
  out.append('(');
  for (std::size_t i = 0; i < u.nsrc(); ++i) {
    if (i) out.append(", ");
    render_into(out, u.src(i), depth + 1);
  }
  out.append(')');
}
}  // namespace detail

/// The expression of u as infix text.
constexpr text render_text(UOp u) {
  text out;
  detail::render_into(out, u, 0);
  return out;
}
inline std::string render(UOp u) { return render_text(u).str(); }

}  // namespace uopcg::symbolic
