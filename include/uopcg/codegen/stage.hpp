// What a stage of the codegen path is: a name (tinygrad's graph_rewrite name, as in the corpus stage
// dumps) and an entry point; and how long one took.
//
// Every stage header defines its entry point the same way:
//
//   template <class = void>
//   UOp early_symbolic(UOp sink, const Target&) {
//     return pat::graph_rewrite(sink, symbolic::sym, {.name = "early symbolic"});
//   }
//
// A template, so that only the translation units that call a stage (or take its address, as the
// pipeline's table does) compile its rule sets, and constexpr: every stage runs in constant
// evaluation (codegen/constexpr_compile.hpp). A rule set combined for one stage is a variable
// template beside it (`template <class = void> inline constexpr auto x_rules = a + b;`), not a
// function-local static, which a constexpr function may not hold. The name is the stage's, as the
// corpus dumps spell it.
#pragma once

#include <string_view>

#include "../core/arena.hpp"
#include "target.hpp"

namespace uopcg::codegen {

struct StageInfo {
  std::string_view name;
  UOp (*run)(UOp sink, const Target& target);
};

struct StageTiming {
  std::string_view stage;
  double us = 0;
};

}  // namespace uopcg::codegen
