// Everything of the pattern module: the DSL (upat.hpp, dsl.hpp), patterns compiled to data and the
// matcher (program.hpp), rules and their compile-time checks (rule.hpp), rule sets and dispatch
// (rule_set.hpp), and graph_rewrite (rewrite.hpp).
#pragma once

#include "dsl.hpp"
#include "fixed_string.hpp"
#include "program.hpp"
#include "rewrite.hpp"
#include "rule.hpp"
#include "rule_set.hpp"
#include "upat.hpp"
