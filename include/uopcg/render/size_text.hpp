// A symbolic size as tinygrad writes it (UOp.render in tinygrad/uop/render.py): the comment of a
// SPECIAL whose extent holds a variable (`/* (n<<6) */`) and a kernel name's axis sizes.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "../core/arena.hpp"
#include "../core/text.hpp"

namespace uopcg::render {

/// tinygrad's debug syntax for a symbolic size (UOp.render, tinygrad/uop/render.py): variables by
/// name, Python's operators, a binary operand's parentheses dropped where precedence allows it;
/// nullopt for a node that syntax has no form for here.
constexpr std::optional<text> size_text(UOp e, int depth = 0) {
  if (depth > 64) return std::nullopt;
  auto precedence = [](Ops o) {
    switch (o) {
      case Ops::MUL: case Ops::FLOORDIV: case Ops::FLOORMOD: return 1;
      case Ops::ADD: case Ops::SUB: return 2;
      case Ops::SHL: case Ops::SHR: return 3;
      case Ops::AND: return 4;
      case Ops::XOR: return 5;
      case Ops::OR: return 6;
      default: return 99;
    }
  };
  auto symbol = [](Ops o) -> std::string_view {
    switch (o) {
      case Ops::ADD: return "+";
      case Ops::SUB: return "-";
      case Ops::FLOORDIV: return "//";
      case Ops::FLOORMOD: return "%";
      case Ops::SHL: return "<<";
      case Ops::SHR: return ">>";
      case Ops::MUL: return "*";
      case Ops::CMPLT: return "<";
      case Ops::CMPNE: return "!=";
      case Ops::AND: return "&";
      case Ops::OR: return "|";
      case Ops::XOR: return "^";
      default: return {};
    }
  };
  // tinygrad's strip_parens: the outer pair goes when the inside does not close one first
  auto strip = [](std::string_view s) {
    if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
    const std::string_view in = s.substr(1, s.size() - 2);
    const std::size_t open = in.find('('), close = in.find(')');
    const bool first_closes = close != std::string_view::npos && (open == std::string_view::npos || close < open);
    return first_closes ? s : in;
  };
  auto operands = [&](std::size_t n) -> std::optional<std::vector<text>> {
    if (e.nsrc() != n) return std::nullopt;
    std::vector<text> out;
    for (std::size_t k = 0; k < n; ++k) {
      auto s = size_text(e.src(k), depth + 1);
      if (!s) return std::nullopt;
      out.push_back(std::move(*s));
    }
    return out;
  };
  const Ops op = e.op();
  if (op == Ops::PARAM) {
    if (e.arg().kind() != ArgKind::param_arg) return std::nullopt;
    if (!e.arg()[4].is_none()) return text(e.arg()[4].as_string());
    return text("p").append(e.arg()[0].as_int());
  }
  if (op == Ops::CONST) {
    if (e.arg().is_bool()) return text().append(e.arg().as_bool());
    if (e.arg().is_int() && e.arg().kind() != ArgKind::uint_) return text().append(e.arg().as_int());
    return std::nullopt;
  }
  if (op == Ops::CAST && e.nsrc() == 1) {
    const UOp s = e.src(0);
    if (s.is(Ops::CONST) && (is_weak(s.dtype()) || is_bool(s.dtype()))) return size_text(s, depth + 1);
    auto x = operands(1);
    if (!x) return std::nullopt;
    return text("(").append(name(e.dtype())).append(")(").append((*x)[0]).append(")");
  }
  if (!symbol(op).empty()) {
    auto x = operands(2);
    if (!x) return std::nullopt;
    const int p = precedence(op);
    const std::string_view l = p != 99 && precedence(e.src(0).op()) <= p ? strip((*x)[0].view()) : (*x)[0].view();
    const std::string_view rt = p != 99 && precedence(e.src(1).op()) < p ? strip((*x)[1].view()) : (*x)[1].view();
    return text("(").append(l).append(symbol(op)).append(rt).append(")");
  }
  if (op == Ops::MAX || op == Ops::CDIV || op == Ops::CMOD) {
    auto x = operands(2);
    if (!x) return std::nullopt;
    const std::string_view fn = op == Ops::MAX ? "max(" : op == Ops::CDIV ? "cdiv(" : "cmod(";
    return text(fn).append((*x)[0]).append(", ").append((*x)[1]).append(")");
  }
  if (op == Ops::NEG) {
    auto x = operands(1);
    if (!x) return std::nullopt;
    return text("(-").append((*x)[0]).append(")");
  }
  if (op == Ops::WHERE) {
    auto x = operands(3);
    if (!x) return std::nullopt;
    return text("(").append((*x)[1]).append(" if ").append((*x)[0]).append(" else ").append((*x)[2]).append(")");
  }
  return std::nullopt;
}

}  // namespace uopcg::render
