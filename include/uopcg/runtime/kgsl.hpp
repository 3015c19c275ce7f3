// uopcg's KGSL launcher: runs compiled OpenCL kernels on Qualcomm Adreno A6xx GPUs directly through
// /dev/kgsl-3d0 ioctls, without the vendor OpenCL runtime at launch time.
//
//   kgsl/abi.hpp       driver ABI: ioctl numbers, structs (static_asserted), constants, abi_lines()
//   kgsl/sys.hpp       the syscall policy (real_sys) and ioctl error reporting
//   kgsl/chip.hpp      supported chips and their fiber count / instruction cache (the chip gate)
//   kgsl/pm4.hpp       PM4 packet encoding/decoding, A6xx compute registers and opcodes
//   kgsl/program.hpp   parser of Qualcomm program binaries
//   kgsl/dispatch.hpp  derived program values, kernarg block, the launch command stream
//   kgsl/device.hpp    device, context, GPU buffer (RAII)
//   kgsl/queue.hpp     kernel, queue (launch/wait), batch (build once, patch in place)
//   kgsl/graph.hpp     capture and replay of launch sequences (rebinding buffers, variables, sizes)
//   kgsl/sandbox.hpp   seccomp filter for a process that only launches (x86_64 and aarch64)
//
// Linux-only: including this on another OS is a compile error. 64-bit processes only.
// See docs/kgsl.md for usage and what is verified without hardware.
#pragma once

#include "kgsl/abi.hpp"
#include "kgsl/sys.hpp"
#include "kgsl/chip.hpp"
#include "kgsl/pm4.hpp"
#include "kgsl/program.hpp"
#include "kgsl/dispatch.hpp"
#include "kgsl/device.hpp"
#include "kgsl/queue.hpp"
#include "kgsl/graph.hpp"
#if defined(__x86_64__) || defined(__aarch64__)
#include "kgsl/sandbox.hpp"
#endif
