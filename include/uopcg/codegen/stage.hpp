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
// pipeline's table does) compile its rule sets, and constexpr where the stage runs in constant
// evaluation (the late stages); the name is the stage's, as the corpus dumps spell it.
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
