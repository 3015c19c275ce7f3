// Everything of the pattern module: the DSL (upat.hpp, dsl.hpp), patterns compiled to data and the
// matcher (program.hpp), rules and their compile-time checks (rule.hpp), rule sets and dispatch
// (rule_set.hpp), graph_rewrite (rewrite.hpp), and the short rule form rewrite(lhs, rhs) (rhs.hpp).
#pragma once

#include "dsl.hpp"
#include "fixed_string.hpp"
#include "program.hpp"
#include "rewrite.hpp"
#include "rhs.hpp"
#include "rule.hpp"
#include "rule_set.hpp"
#include "upat.hpp"
