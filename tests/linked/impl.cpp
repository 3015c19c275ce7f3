// The implementation translation unit of the linked program: the one place the pipeline is compiled.
#define UOPCG_IMPLEMENTATION
#include <uopcg/compile.hpp>
