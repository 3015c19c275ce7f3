// uopcg_impl.cpp: the one translation unit that compiles the pipeline
#define UOPCG_IMPLEMENTATION
#include <uopcg/compile.hpp>
