// What a stage of the codegen path is: a name (tinygrad's graph_rewrite name, as in the corpus stage
// dumps) and an entry point `UOp stage(UOp sink, const Target&)`; and how long one took.
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
