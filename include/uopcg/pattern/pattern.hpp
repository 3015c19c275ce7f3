// Everything of the pattern module: the DSL (upat.hpp, dsl.hpp), patterns compiled to data
// (program.hpp) and the matcher that runs them (detail/matcher.hpp), rules and their compile-time
// checks (rule.hpp), rule sets and dispatch (rule_set.hpp, applied.hpp, detail/), graph_rewrite
// (rewrite.hpp), and the short rule form rewrite(lhs, rhs) (rhs.hpp).
#pragma once

#include "applied.hpp"
#include "dsl.hpp"
#include "fixed_string.hpp"
#include "program.hpp"
#include "rewrite.hpp"
#include "rhs.hpp"
#include "rule.hpp"
#include "rule_set.hpp"
#include "upat.hpp"
