// uopcg: tinygrad's late code generation as a header-only C++20 library.
// This umbrella header includes everything except the optional runtime/ (launchers) and io/
// (JSON interchange, DOT) headers, which have external dependencies.
#pragma once

#include "core/arena.hpp"
#include "core/arg.hpp"
#include "core/builder.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/graph.hpp"
#include "core/ops.hpp"
#include "core/print.hpp"
#include "core/text.hpp"
#include "core/verify.hpp"
#include "pattern/pattern.hpp"
#include "render/float_text.hpp"
#include "render/opencl.hpp"
