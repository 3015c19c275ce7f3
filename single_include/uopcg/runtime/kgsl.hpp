// uopcg single header runtime/kgsl.hpp: the KGSL launcher (Adreno A6xx, Linux/Android).
// Generated from include/ by tools/amalgamate.py — do not edit; regenerate with
// `python3 tools/amalgamate.py`. Do not mix with include/'s headers in one translation unit;
// the single headers combine with each other (shared include guards).
// Includes single_include/uopcg/compile.hpp.
// Inlined, in order: 11 headers from include/
//   uopcg/runtime/kgsl.hpp
//   uopcg/runtime/kgsl/abi.hpp
//   uopcg/runtime/kgsl/sys.hpp
//   uopcg/runtime/kgsl/chip.hpp
//   uopcg/runtime/kgsl/pm4.hpp
//   uopcg/runtime/kgsl/program.hpp
//   uopcg/runtime/kgsl/dispatch.hpp
//   uopcg/runtime/kgsl/device.hpp
//   uopcg/runtime/kgsl/queue.hpp
//   uopcg/runtime/kgsl/graph.hpp
//   uopcg/runtime/kgsl/sandbox.hpp
#pragma once
#ifndef UOPCG_SINGLE_HEADER
#define UOPCG_SINGLE_HEADER 1
#endif

// ---- begin uopcg/runtime/kgsl.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_HPP
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

// ---- begin uopcg/runtime/kgsl/abi.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_ABI_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_ABI_HPP
// The KGSL driver ABI as this build assumes it: ioctl request numbers, argument structs and
// constants of the msm_kgsl.h uapi header, written out here (the header is not vendored) and
// checked with static_asserts against the numbers of the kernel's uapi header msm_kgsl.h.
//
// Names follow the uapi header on purpose, so that `uopcg kgsl-abi` output and compiler errors can
// be compared line by line with a device's own header. Do not include the real <linux/msm_kgsl.h>
// in the same translation unit: its macros would clash with these constants.
//
// Only the 64-bit (LP64) layout is described. This header itself uses no system calls, so tools
// (the `uopcg kgsl-abi` command) can include it on any host.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

static_assert(sizeof(void*) == 8 && sizeof(long) == 8,
              "uopcg's KGSL ABI describes 64-bit (LP64) processes only; 32-bit ARM layouts differ");

namespace uopcg::kgsl::abi {

// --- ioctl request encoding (the generic Linux _IOC layout used by arm64 and x86_64) ---------------

inline constexpr std::uint32_t IOC_NRBITS = 8, IOC_TYPEBITS = 8, IOC_SIZEBITS = 14;
inline constexpr std::uint32_t IOC_NRSHIFT = 0, IOC_TYPESHIFT = 8, IOC_SIZESHIFT = 16, IOC_DIRSHIFT = 30;
inline constexpr std::uint32_t IOC_WRITE = 1, IOC_READ = 2;
inline constexpr std::uint32_t KGSL_IOC_TYPE = 0x09;

constexpr std::uint32_t ioc(std::uint32_t dir, std::uint32_t type, std::uint32_t nr, std::size_t size) {
  return (dir << IOC_DIRSHIFT) | (static_cast<std::uint32_t>(size) << IOC_SIZESHIFT) |
         (type << IOC_TYPESHIFT) | (nr << IOC_NRSHIFT);
}
// Like _IOW/_IOWR: the struct size is part of the number, so a layout mistake changes the request.
template <class T>
constexpr std::uint32_t iow(std::uint32_t nr) {
  static_assert(sizeof(T) < (1u << IOC_SIZEBITS));
  return ioc(IOC_WRITE, KGSL_IOC_TYPE, nr, sizeof(T));
}
template <class T>
constexpr std::uint32_t iowr(std::uint32_t nr) {
  static_assert(sizeof(T) < (1u << IOC_SIZEBITS));
  return ioc(IOC_READ | IOC_WRITE, KGSL_IOC_TYPE, nr, sizeof(T));
}
constexpr std::uint32_t ioc_nr(std::uint32_t req) { return req & ((1u << IOC_NRBITS) - 1); }
constexpr std::uint32_t ioc_type(std::uint32_t req) { return (req >> IOC_TYPESHIFT) & ((1u << IOC_TYPEBITS) - 1); }
constexpr std::uint32_t ioc_size(std::uint32_t req) { return (req >> IOC_SIZESHIFT) & ((1u << IOC_SIZEBITS) - 1); }
constexpr std::uint32_t ioc_dir(std::uint32_t req) { return req >> IOC_DIRSHIFT; }

// --- structures (field names and order as in msm_kgsl.h) -------------------------------------------

struct kgsl_devinfo {
  std::uint32_t device_id;
  std::uint32_t chip_id;
  std::uint32_t mmu_enabled;
  std::uint64_t gmem_gpubaseaddr;  // unsigned long
  std::uint32_t gpu_id;
  std::uint64_t gmem_sizebytes;  // size_t
};
struct kgsl_device_getproperty {
  std::uint32_t type;
  std::uint64_t value;  // void __user *
  std::uint64_t sizebytes;  // size_t
};
struct kgsl_device_constraint {
  std::uint32_t type;
  std::uint32_t context_id;
  std::uint64_t data;  // void __user *
  std::uint64_t size;  // size_t
};
struct kgsl_device_constraint_pwrlevel {
  std::uint32_t level;
};
struct kgsl_device_waittimestamp {
  std::uint32_t timestamp;
  std::uint32_t timeout;
};
struct kgsl_device_waittimestamp_ctxtid {
  std::uint32_t context_id;
  std::uint32_t timestamp;
  std::uint32_t timeout;  // milliseconds; 0 waits forever
};
struct kgsl_cmdstream_readtimestamp {
  std::uint32_t type;
  std::uint32_t timestamp;
};
struct kgsl_cmdstream_readtimestamp_ctxtid {
  std::uint32_t context_id;
  std::uint32_t type;
  std::uint32_t timestamp;
};
struct kgsl_drawctxt_create {
  std::uint32_t flags;
  std::uint32_t drawctxt_id;
};
struct kgsl_drawctxt_destroy {
  std::uint32_t drawctxt_id;
};
struct kgsl_map_user_mem {
  std::int32_t fd;
  std::uint64_t gpuaddr;  // unsigned long
  std::uint64_t len;      // size_t
  std::uint64_t offset;   // size_t
  std::uint64_t hostptr;  // unsigned long
  std::int32_t memtype;   // enum kgsl_user_mem_type
  std::uint32_t flags;
};
struct kgsl_sharedmem_free {
  std::uint64_t gpuaddr;  // unsigned long
};
struct kgsl_timestamp_event {
  std::int32_t type;
  std::uint32_t timestamp;
  std::uint32_t context_id;
  std::uint64_t priv;  // void __user *
  std::uint64_t len;   // size_t
};
struct kgsl_gpumem_alloc_id {
  std::uint32_t id;
  std::uint32_t flags;
  std::uint64_t size;      // size_t
  std::uint64_t mmapsize;  // size_t
  std::uint64_t gpuaddr;   // unsigned long
  std::uint64_t pad[2];    // unsigned long __pad[2]
};
struct kgsl_gpumem_free_id {
  std::uint32_t id;
  std::uint32_t pad;  // __pad
};
struct kgsl_gpumem_get_info {
  std::uint64_t gpuaddr;  // unsigned long
  std::uint32_t id;
  std::uint32_t flags;
  std::uint64_t size;      // size_t
  std::uint64_t mmapsize;  // size_t
  std::uint64_t useraddr;  // unsigned long
  std::uint64_t pad[4];    // unsigned long __pad[4]
};
struct kgsl_gpumem_sync_cache {
  std::uint64_t gpuaddr;  // unsigned long
  std::uint32_t id;
  std::uint32_t op;
  std::uint64_t offset;  // size_t
  std::uint64_t length;  // size_t
};
struct kgsl_perfcounter_read {
  std::uint64_t reads;  // struct kgsl_perfcounter_read_group __user *
  std::uint32_t count;
  std::uint32_t pad[2];  // __pad[2]
};
struct kgsl_submit_commands {
  std::uint32_t context_id;
  std::uint32_t flags;
  std::uint64_t cmdlist;  // struct kgsl_ibdesc __user *
  std::uint32_t numcmds;
  std::uint64_t synclist;  // struct kgsl_cmd_syncpoint __user *
  std::uint32_t numsyncs;
  std::uint32_t timestamp;
  std::uint32_t pad[4];  // __pad[4]
};
struct kgsl_gpuobj_alloc {
  std::uint64_t size;
  std::uint64_t flags;
  std::uint64_t va_len;
  std::uint64_t mmapsize;
  std::uint32_t id;
  std::uint32_t metadata_len;
  std::uint64_t metadata;
};
struct kgsl_gpu_event_timestamp {
  std::uint32_t context_id;
  std::uint32_t timestamp;
};
struct kgsl_gpuobj_free {
  std::uint64_t flags;
  std::uint64_t priv;
  std::uint32_t id;
  std::uint32_t type;
  std::uint32_t len;
};
struct kgsl_gpuobj_info {
  std::uint64_t gpuaddr;
  std::uint64_t flags;
  std::uint64_t size;
  std::uint64_t va_len;
  std::uint64_t va_addr;
  std::uint32_t id;
};
struct kgsl_gpuobj_import {
  std::uint64_t priv;
  std::uint64_t priv_len;
  std::uint64_t flags;
  std::uint32_t type;
  std::uint32_t id;
};
struct kgsl_gpuobj_import_dma_buf {
  std::int32_t fd;
};
struct kgsl_gpuobj_import_useraddr {
  std::uint64_t virtaddr;
};
struct kgsl_gpuobj_sync_obj {
  std::uint64_t offset;
  std::uint64_t length;
  std::uint32_t id;
  std::uint32_t op;
};
struct kgsl_gpuobj_sync {
  std::uint64_t objs;
  std::uint32_t obj_len;
  std::uint32_t count;
};
struct kgsl_command_object {
  std::uint64_t offset;
  std::uint64_t gpuaddr;
  std::uint64_t size;
  std::uint32_t flags;
  std::uint32_t id;
};
struct kgsl_command_syncpoint {
  std::uint64_t priv;
  std::uint64_t size;
  std::uint32_t type;
};
struct kgsl_cmd_syncpoint_timestamp {
  std::uint32_t context_id;
  std::uint32_t timestamp;
};
struct kgsl_cmd_syncpoint_fence {
  std::int32_t fd;
};
struct kgsl_gpu_command {
  std::uint64_t flags;
  std::uint64_t cmdlist;
  std::uint32_t cmdsize;
  std::uint32_t numcmds;
  std::uint64_t objlist;
  std::uint32_t objsize;
  std::uint32_t numobjs;
  std::uint64_t synclist;
  std::uint32_t syncsize;
  std::uint32_t numsyncs;
  std::uint32_t context_id;
  std::uint32_t timestamp;
};
struct kgsl_cmdbatch_profiling_buffer {
  std::uint64_t wall_clock_s;
  std::uint64_t wall_clock_ns;
  std::uint64_t gpu_ticks_queued;
  std::uint64_t gpu_ticks_submitted;
  std::uint64_t gpu_ticks_retired;
};

// --- sizes and offsets, literally from msm_kgsl.h (a layout slip fails the build here) ------------

#define UOPCG_KGSL_AT(S, F, OFF, SZ) static_assert(offsetof(S, F) == (OFF) && sizeof(S::F) == (SZ), #S "::" #F)
static_assert(sizeof(kgsl_devinfo) == 40 && alignof(kgsl_devinfo) == 8);
UOPCG_KGSL_AT(kgsl_devinfo, device_id, 0, 4);
UOPCG_KGSL_AT(kgsl_devinfo, chip_id, 4, 4);
UOPCG_KGSL_AT(kgsl_devinfo, mmu_enabled, 8, 4);
UOPCG_KGSL_AT(kgsl_devinfo, gmem_gpubaseaddr, 16, 8);
UOPCG_KGSL_AT(kgsl_devinfo, gpu_id, 24, 4);
UOPCG_KGSL_AT(kgsl_devinfo, gmem_sizebytes, 32, 8);
static_assert(sizeof(kgsl_device_getproperty) == 24 && alignof(kgsl_device_getproperty) == 8);
UOPCG_KGSL_AT(kgsl_device_getproperty, type, 0, 4);
UOPCG_KGSL_AT(kgsl_device_getproperty, value, 8, 8);
UOPCG_KGSL_AT(kgsl_device_getproperty, sizebytes, 16, 8);
static_assert(sizeof(kgsl_device_constraint) == 24 && alignof(kgsl_device_constraint) == 8);
UOPCG_KGSL_AT(kgsl_device_constraint, type, 0, 4);
UOPCG_KGSL_AT(kgsl_device_constraint, context_id, 4, 4);
UOPCG_KGSL_AT(kgsl_device_constraint, data, 8, 8);
UOPCG_KGSL_AT(kgsl_device_constraint, size, 16, 8);
static_assert(sizeof(kgsl_device_constraint_pwrlevel) == 4);
UOPCG_KGSL_AT(kgsl_device_constraint_pwrlevel, level, 0, 4);
static_assert(sizeof(kgsl_device_waittimestamp) == 8);
UOPCG_KGSL_AT(kgsl_device_waittimestamp, timestamp, 0, 4);
UOPCG_KGSL_AT(kgsl_device_waittimestamp, timeout, 4, 4);
static_assert(sizeof(kgsl_device_waittimestamp_ctxtid) == 12 && alignof(kgsl_device_waittimestamp_ctxtid) == 4);
UOPCG_KGSL_AT(kgsl_device_waittimestamp_ctxtid, context_id, 0, 4);
UOPCG_KGSL_AT(kgsl_device_waittimestamp_ctxtid, timestamp, 4, 4);
UOPCG_KGSL_AT(kgsl_device_waittimestamp_ctxtid, timeout, 8, 4);
static_assert(sizeof(kgsl_cmdstream_readtimestamp) == 8);
UOPCG_KGSL_AT(kgsl_cmdstream_readtimestamp, type, 0, 4);
UOPCG_KGSL_AT(kgsl_cmdstream_readtimestamp, timestamp, 4, 4);
static_assert(sizeof(kgsl_cmdstream_readtimestamp_ctxtid) == 12 && alignof(kgsl_cmdstream_readtimestamp_ctxtid) == 4);
UOPCG_KGSL_AT(kgsl_cmdstream_readtimestamp_ctxtid, context_id, 0, 4);
UOPCG_KGSL_AT(kgsl_cmdstream_readtimestamp_ctxtid, type, 4, 4);
UOPCG_KGSL_AT(kgsl_cmdstream_readtimestamp_ctxtid, timestamp, 8, 4);
static_assert(sizeof(kgsl_drawctxt_create) == 8 && alignof(kgsl_drawctxt_create) == 4);
UOPCG_KGSL_AT(kgsl_drawctxt_create, flags, 0, 4);
UOPCG_KGSL_AT(kgsl_drawctxt_create, drawctxt_id, 4, 4);
static_assert(sizeof(kgsl_drawctxt_destroy) == 4);
UOPCG_KGSL_AT(kgsl_drawctxt_destroy, drawctxt_id, 0, 4);
static_assert(sizeof(kgsl_map_user_mem) == 48 && alignof(kgsl_map_user_mem) == 8);
UOPCG_KGSL_AT(kgsl_map_user_mem, fd, 0, 4);
UOPCG_KGSL_AT(kgsl_map_user_mem, gpuaddr, 8, 8);
UOPCG_KGSL_AT(kgsl_map_user_mem, len, 16, 8);
UOPCG_KGSL_AT(kgsl_map_user_mem, offset, 24, 8);
UOPCG_KGSL_AT(kgsl_map_user_mem, hostptr, 32, 8);
UOPCG_KGSL_AT(kgsl_map_user_mem, memtype, 40, 4);
UOPCG_KGSL_AT(kgsl_map_user_mem, flags, 44, 4);
static_assert(sizeof(kgsl_sharedmem_free) == 8);
UOPCG_KGSL_AT(kgsl_sharedmem_free, gpuaddr, 0, 8);
static_assert(sizeof(kgsl_timestamp_event) == 32 && alignof(kgsl_timestamp_event) == 8);
UOPCG_KGSL_AT(kgsl_timestamp_event, type, 0, 4);
UOPCG_KGSL_AT(kgsl_timestamp_event, timestamp, 4, 4);
UOPCG_KGSL_AT(kgsl_timestamp_event, context_id, 8, 4);
UOPCG_KGSL_AT(kgsl_timestamp_event, priv, 16, 8);
UOPCG_KGSL_AT(kgsl_timestamp_event, len, 24, 8);
static_assert(sizeof(kgsl_gpumem_alloc_id) == 48 && alignof(kgsl_gpumem_alloc_id) == 8);
UOPCG_KGSL_AT(kgsl_gpumem_alloc_id, id, 0, 4);
UOPCG_KGSL_AT(kgsl_gpumem_alloc_id, flags, 4, 4);
UOPCG_KGSL_AT(kgsl_gpumem_alloc_id, size, 8, 8);
UOPCG_KGSL_AT(kgsl_gpumem_alloc_id, mmapsize, 16, 8);
UOPCG_KGSL_AT(kgsl_gpumem_alloc_id, gpuaddr, 24, 8);
UOPCG_KGSL_AT(kgsl_gpumem_alloc_id, pad, 32, 16);
static_assert(sizeof(kgsl_gpumem_free_id) == 8);
UOPCG_KGSL_AT(kgsl_gpumem_free_id, id, 0, 4);
static_assert(sizeof(kgsl_gpumem_get_info) == 72 && alignof(kgsl_gpumem_get_info) == 8);
UOPCG_KGSL_AT(kgsl_gpumem_get_info, gpuaddr, 0, 8);
UOPCG_KGSL_AT(kgsl_gpumem_get_info, id, 8, 4);
UOPCG_KGSL_AT(kgsl_gpumem_get_info, flags, 12, 4);
UOPCG_KGSL_AT(kgsl_gpumem_get_info, size, 16, 8);
UOPCG_KGSL_AT(kgsl_gpumem_get_info, mmapsize, 24, 8);
UOPCG_KGSL_AT(kgsl_gpumem_get_info, useraddr, 32, 8);
static_assert(sizeof(kgsl_gpumem_sync_cache) == 32);
UOPCG_KGSL_AT(kgsl_gpumem_sync_cache, gpuaddr, 0, 8);
UOPCG_KGSL_AT(kgsl_gpumem_sync_cache, id, 8, 4);
UOPCG_KGSL_AT(kgsl_gpumem_sync_cache, op, 12, 4);
UOPCG_KGSL_AT(kgsl_gpumem_sync_cache, offset, 16, 8);
UOPCG_KGSL_AT(kgsl_gpumem_sync_cache, length, 24, 8);
static_assert(sizeof(kgsl_perfcounter_read) == 24);
UOPCG_KGSL_AT(kgsl_perfcounter_read, reads, 0, 8);
UOPCG_KGSL_AT(kgsl_perfcounter_read, count, 8, 4);
static_assert(sizeof(kgsl_submit_commands) == 56);
UOPCG_KGSL_AT(kgsl_submit_commands, context_id, 0, 4);
UOPCG_KGSL_AT(kgsl_submit_commands, flags, 4, 4);
UOPCG_KGSL_AT(kgsl_submit_commands, cmdlist, 8, 8);
UOPCG_KGSL_AT(kgsl_submit_commands, numcmds, 16, 4);
UOPCG_KGSL_AT(kgsl_submit_commands, synclist, 24, 8);
UOPCG_KGSL_AT(kgsl_submit_commands, numsyncs, 32, 4);
UOPCG_KGSL_AT(kgsl_submit_commands, timestamp, 36, 4);
static_assert(sizeof(kgsl_gpuobj_alloc) == 48 && alignof(kgsl_gpuobj_alloc) == 8);
UOPCG_KGSL_AT(kgsl_gpuobj_alloc, size, 0, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_alloc, flags, 8, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_alloc, va_len, 16, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_alloc, mmapsize, 24, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_alloc, id, 32, 4);
UOPCG_KGSL_AT(kgsl_gpuobj_alloc, metadata_len, 36, 4);
UOPCG_KGSL_AT(kgsl_gpuobj_alloc, metadata, 40, 8);
static_assert(sizeof(kgsl_gpu_event_timestamp) == 8);
UOPCG_KGSL_AT(kgsl_gpu_event_timestamp, context_id, 0, 4);
UOPCG_KGSL_AT(kgsl_gpu_event_timestamp, timestamp, 4, 4);
static_assert(sizeof(kgsl_gpuobj_free) == 32 && alignof(kgsl_gpuobj_free) == 8);
UOPCG_KGSL_AT(kgsl_gpuobj_free, flags, 0, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_free, priv, 8, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_free, id, 16, 4);
UOPCG_KGSL_AT(kgsl_gpuobj_free, type, 20, 4);
UOPCG_KGSL_AT(kgsl_gpuobj_free, len, 24, 4);
static_assert(sizeof(kgsl_gpuobj_info) == 48 && alignof(kgsl_gpuobj_info) == 8);
UOPCG_KGSL_AT(kgsl_gpuobj_info, gpuaddr, 0, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_info, flags, 8, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_info, size, 16, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_info, va_len, 24, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_info, va_addr, 32, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_info, id, 40, 4);
static_assert(sizeof(kgsl_gpuobj_import) == 32 && alignof(kgsl_gpuobj_import) == 8);
UOPCG_KGSL_AT(kgsl_gpuobj_import, priv, 0, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_import, priv_len, 8, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_import, flags, 16, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_import, type, 24, 4);
UOPCG_KGSL_AT(kgsl_gpuobj_import, id, 28, 4);
static_assert(sizeof(kgsl_gpuobj_import_dma_buf) == 4);
UOPCG_KGSL_AT(kgsl_gpuobj_import_dma_buf, fd, 0, 4);
static_assert(sizeof(kgsl_gpuobj_import_useraddr) == 8);
UOPCG_KGSL_AT(kgsl_gpuobj_import_useraddr, virtaddr, 0, 8);
static_assert(sizeof(kgsl_gpuobj_sync_obj) == 24);
UOPCG_KGSL_AT(kgsl_gpuobj_sync_obj, offset, 0, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_sync_obj, length, 8, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_sync_obj, id, 16, 4);
UOPCG_KGSL_AT(kgsl_gpuobj_sync_obj, op, 20, 4);
static_assert(sizeof(kgsl_gpuobj_sync) == 16);
UOPCG_KGSL_AT(kgsl_gpuobj_sync, objs, 0, 8);
UOPCG_KGSL_AT(kgsl_gpuobj_sync, obj_len, 8, 4);
UOPCG_KGSL_AT(kgsl_gpuobj_sync, count, 12, 4);
static_assert(sizeof(kgsl_command_object) == 32 && alignof(kgsl_command_object) == 8);
UOPCG_KGSL_AT(kgsl_command_object, offset, 0, 8);
UOPCG_KGSL_AT(kgsl_command_object, gpuaddr, 8, 8);
UOPCG_KGSL_AT(kgsl_command_object, size, 16, 8);
UOPCG_KGSL_AT(kgsl_command_object, flags, 24, 4);
UOPCG_KGSL_AT(kgsl_command_object, id, 28, 4);
static_assert(sizeof(kgsl_command_syncpoint) == 24 && alignof(kgsl_command_syncpoint) == 8);
UOPCG_KGSL_AT(kgsl_command_syncpoint, priv, 0, 8);
UOPCG_KGSL_AT(kgsl_command_syncpoint, size, 8, 8);
UOPCG_KGSL_AT(kgsl_command_syncpoint, type, 16, 4);
static_assert(sizeof(kgsl_cmd_syncpoint_timestamp) == 8);
UOPCG_KGSL_AT(kgsl_cmd_syncpoint_timestamp, context_id, 0, 4);
UOPCG_KGSL_AT(kgsl_cmd_syncpoint_timestamp, timestamp, 4, 4);
static_assert(sizeof(kgsl_cmd_syncpoint_fence) == 4);
UOPCG_KGSL_AT(kgsl_cmd_syncpoint_fence, fd, 0, 4);
static_assert(sizeof(kgsl_gpu_command) == 64 && alignof(kgsl_gpu_command) == 8);
UOPCG_KGSL_AT(kgsl_gpu_command, flags, 0, 8);
UOPCG_KGSL_AT(kgsl_gpu_command, cmdlist, 8, 8);
UOPCG_KGSL_AT(kgsl_gpu_command, cmdsize, 16, 4);
UOPCG_KGSL_AT(kgsl_gpu_command, numcmds, 20, 4);
UOPCG_KGSL_AT(kgsl_gpu_command, objlist, 24, 8);
UOPCG_KGSL_AT(kgsl_gpu_command, objsize, 32, 4);
UOPCG_KGSL_AT(kgsl_gpu_command, numobjs, 36, 4);
UOPCG_KGSL_AT(kgsl_gpu_command, synclist, 40, 8);
UOPCG_KGSL_AT(kgsl_gpu_command, syncsize, 48, 4);
UOPCG_KGSL_AT(kgsl_gpu_command, numsyncs, 52, 4);
UOPCG_KGSL_AT(kgsl_gpu_command, context_id, 56, 4);
UOPCG_KGSL_AT(kgsl_gpu_command, timestamp, 60, 4);
static_assert(sizeof(kgsl_cmdbatch_profiling_buffer) == 40);
UOPCG_KGSL_AT(kgsl_cmdbatch_profiling_buffer, wall_clock_s, 0, 8);
UOPCG_KGSL_AT(kgsl_cmdbatch_profiling_buffer, wall_clock_ns, 8, 8);
UOPCG_KGSL_AT(kgsl_cmdbatch_profiling_buffer, gpu_ticks_queued, 16, 8);
UOPCG_KGSL_AT(kgsl_cmdbatch_profiling_buffer, gpu_ticks_submitted, 24, 8);
UOPCG_KGSL_AT(kgsl_cmdbatch_profiling_buffer, gpu_ticks_retired, 32, 8);
#undef UOPCG_KGSL_AT

// --- ioctl request numbers (direction as in the uapi header: an _IOWR sent as _IOW loses results) --

inline constexpr std::uint32_t IOCTL_KGSL_DEVICE_GETPROPERTY = iowr<kgsl_device_getproperty>(0x02);
inline constexpr std::uint32_t IOCTL_KGSL_DEVICE_WAITTIMESTAMP = iow<kgsl_device_waittimestamp>(0x06);
inline constexpr std::uint32_t IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID = iow<kgsl_device_waittimestamp_ctxtid>(0x07);
inline constexpr std::uint32_t IOCTL_KGSL_CMDSTREAM_READTIMESTAMP = iowr<kgsl_cmdstream_readtimestamp>(0x11);
inline constexpr std::uint32_t IOCTL_KGSL_DRAWCTXT_CREATE = iowr<kgsl_drawctxt_create>(0x13);
inline constexpr std::uint32_t IOCTL_KGSL_DRAWCTXT_DESTROY = iow<kgsl_drawctxt_destroy>(0x14);
inline constexpr std::uint32_t IOCTL_KGSL_MAP_USER_MEM = iowr<kgsl_map_user_mem>(0x15);
inline constexpr std::uint32_t IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID =
    iowr<kgsl_cmdstream_readtimestamp_ctxtid>(0x16);
inline constexpr std::uint32_t IOCTL_KGSL_SHAREDMEM_FREE = iow<kgsl_sharedmem_free>(0x21);
inline constexpr std::uint32_t IOCTL_KGSL_SETPROPERTY = iow<kgsl_device_getproperty>(0x32);
inline constexpr std::uint32_t IOCTL_KGSL_TIMESTAMP_EVENT = iowr<kgsl_timestamp_event>(0x33);
inline constexpr std::uint32_t IOCTL_KGSL_GPUMEM_ALLOC_ID = iowr<kgsl_gpumem_alloc_id>(0x34);
inline constexpr std::uint32_t IOCTL_KGSL_GPUMEM_FREE_ID = iowr<kgsl_gpumem_free_id>(0x35);
inline constexpr std::uint32_t IOCTL_KGSL_GPUMEM_GET_INFO = iowr<kgsl_gpumem_get_info>(0x36);
inline constexpr std::uint32_t IOCTL_KGSL_GPUMEM_SYNC_CACHE = iow<kgsl_gpumem_sync_cache>(0x37);
inline constexpr std::uint32_t IOCTL_KGSL_PERFCOUNTER_READ = iowr<kgsl_perfcounter_read>(0x3B);
inline constexpr std::uint32_t IOCTL_KGSL_SUBMIT_COMMANDS = iowr<kgsl_submit_commands>(0x3D);
inline constexpr std::uint32_t IOCTL_KGSL_GPUOBJ_ALLOC = iowr<kgsl_gpuobj_alloc>(0x45);
inline constexpr std::uint32_t IOCTL_KGSL_GPUOBJ_FREE = iow<kgsl_gpuobj_free>(0x46);
inline constexpr std::uint32_t IOCTL_KGSL_GPUOBJ_INFO = iowr<kgsl_gpuobj_info>(0x47);
inline constexpr std::uint32_t IOCTL_KGSL_GPUOBJ_IMPORT = iowr<kgsl_gpuobj_import>(0x48);
inline constexpr std::uint32_t IOCTL_KGSL_GPUOBJ_SYNC = iow<kgsl_gpuobj_sync>(0x49);
inline constexpr std::uint32_t IOCTL_KGSL_GPU_COMMAND = iowr<kgsl_gpu_command>(0x4A);

// --- constants (msm_kgsl.h) ---------------------------------------------------------------------

// Context flags (kgsl_drawctxt_create.flags).
inline constexpr std::uint32_t KGSL_CONTEXT_SAVE_GMEM = 0x00000001;
inline constexpr std::uint32_t KGSL_CONTEXT_NO_GMEM_ALLOC = 0x00000002;
inline constexpr std::uint32_t KGSL_CONTEXT_CTX_SWITCH = 0x00000008;
inline constexpr std::uint32_t KGSL_CONTEXT_PREAMBLE = 0x00000010;
inline constexpr std::uint32_t KGSL_CONTEXT_PER_CONTEXT_TS = 0x00000040;
inline constexpr std::uint32_t KGSL_CONTEXT_USER_GENERATED_TS = 0x00000080;
inline constexpr std::uint32_t KGSL_CONTEXT_NO_FAULT_TOLERANCE = 0x00000200;
inline constexpr std::uint32_t KGSL_CONTEXT_PWR_CONSTRAINT = 0x00000800;
inline constexpr std::uint32_t KGSL_CONTEXT_PRIORITY_MASK = 0x0000F000;
inline constexpr std::uint32_t KGSL_CONTEXT_PRIORITY_SHIFT = 12;
inline constexpr std::uint32_t KGSL_CONTEXT_PRIORITY_UNDEF = 0;
inline constexpr std::uint32_t KGSL_CONTEXT_IFH_NOP = 0x00010000;
inline constexpr std::uint32_t KGSL_CONTEXT_SECURE = 0x00020000;
inline constexpr std::uint32_t KGSL_CONTEXT_NO_SNAPSHOT = 0x00040000;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_MASK = 0x01F00000;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_SHIFT = 20;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_ANY = 0;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_GL = 1;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_CL = 2;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_C2D = 3;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_RS = 4;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_VK = 5;
inline constexpr std::uint32_t KGSL_CONTEXT_TYPE_UNKNOWN = 0x1E;
inline constexpr std::uint32_t KGSL_CONTEXT_PREEMPT_STYLE_MASK = 0x0E000000;
inline constexpr std::uint32_t KGSL_CONTEXT_PREEMPT_STYLE_SHIFT = 25;
inline constexpr std::uint32_t KGSL_CONTEXT_PREEMPT_STYLE_DEFAULT = 0;
inline constexpr std::uint32_t KGSL_CONTEXT_PREEMPT_STYLE_RINGBUFFER = 1;
inline constexpr std::uint32_t KGSL_CONTEXT_PREEMPT_STYLE_FINEGRAIN = 2;
inline constexpr std::uint32_t KGSL_CONTEXT_INVALIDATE_ON_FAULT = 0x10000000;
inline constexpr std::uint32_t KGSL_CONTEXT_LPAC = 0x20000000;
inline constexpr std::uint32_t KGSL_CONTEXT_FAULT_INFO = 0x40000000;

// Submission flags (kgsl_gpu_command.flags) and command/object list entry flags.
inline constexpr std::uint64_t KGSL_CMDBATCH_MEMLIST = 0x00000001;
inline constexpr std::uint64_t KGSL_CMDBATCH_MARKER = 0x00000002;
inline constexpr std::uint64_t KGSL_CMDBATCH_SUBMIT_IB_LIST = 0x00000004;
inline constexpr std::uint64_t KGSL_CMDBATCH_CTX_SWITCH = 0x00000008;
inline constexpr std::uint64_t KGSL_CMDBATCH_PROFILING = 0x00000010;
inline constexpr std::uint64_t KGSL_CMDBATCH_PROFILING_KTIME = 0x00000020;
inline constexpr std::uint64_t KGSL_CMDBATCH_END_OF_FRAME = 0x00000100;
inline constexpr std::uint64_t KGSL_CMDBATCH_SYNC = 0x00000400;
inline constexpr std::uint64_t KGSL_CMDBATCH_PWR_CONSTRAINT = 0x00000800;
inline constexpr std::uint32_t KGSL_CMDLIST_IB = 0x00000001;
inline constexpr std::uint32_t KGSL_CMDLIST_CTXTSWITCH_PREAMBLE = 0x00000002;
inline constexpr std::uint32_t KGSL_CMDLIST_IB_PREAMBLE = 0x00000004;
inline constexpr std::uint32_t KGSL_OBJLIST_MEMOBJ = 0x00000008;
inline constexpr std::uint32_t KGSL_OBJLIST_PROFILE = 0x00000010;
inline constexpr std::uint32_t KGSL_CMD_SYNCPOINT_TYPE_TIMESTAMP = 0;
inline constexpr std::uint32_t KGSL_CMD_SYNCPOINT_TYPE_FENCE = 1;
inline constexpr std::uint32_t KGSL_CMD_SYNCPOINT_TYPE_TIMELINE = 2;

// Memory flags (kgsl_gpuobj_alloc.flags; 64-bit).
inline constexpr std::uint64_t KGSL_MEMFLAGS_SECURE = 1ull << 3;
inline constexpr std::uint64_t KGSL_MEMTYPE_MASK = 0x0000FF00;
inline constexpr std::uint64_t KGSL_MEMTYPE_SHIFT = 8;
inline constexpr std::uint64_t KGSL_MEMTYPE_OBJECTANY = 0;
inline constexpr std::uint64_t KGSL_MEMTYPE_CL = 10;
inline constexpr std::uint64_t KGSL_MEMTYPE_CL_BUFFER_MAP = 11;
inline constexpr std::uint64_t KGSL_MEMTYPE_CL_BUFFER_NOMAP = 12;
inline constexpr std::uint64_t KGSL_MEMTYPE_CL_KERNEL_STACK = 15;
inline constexpr std::uint64_t KGSL_MEMTYPE_COMMAND = 16;
inline constexpr std::uint64_t KGSL_MEMALIGN_MASK = 0x00FF0000;
inline constexpr std::uint64_t KGSL_MEMALIGN_SHIFT = 16;
inline constexpr std::uint64_t KGSL_MEMFLAGS_GPUREADONLY = 1ull << 24;
inline constexpr std::uint64_t KGSL_MEMFLAGS_GPUWRITEONLY = 1ull << 25;
inline constexpr std::uint64_t KGSL_CACHEMODE_MASK = 0x0C000000;
inline constexpr std::uint64_t KGSL_CACHEMODE_SHIFT = 26;
inline constexpr std::uint64_t KGSL_CACHEMODE_WRITECOMBINE = 0;
inline constexpr std::uint64_t KGSL_CACHEMODE_UNCACHED = 1;
inline constexpr std::uint64_t KGSL_CACHEMODE_WRITETHROUGH = 2;
inline constexpr std::uint64_t KGSL_CACHEMODE_WRITEBACK = 3;
inline constexpr std::uint64_t KGSL_MEMFLAGS_USE_CPU_MAP = 1ull << 28;
inline constexpr std::uint64_t KGSL_MEMFLAGS_SPARSE_PHYS = 1ull << 29;
inline constexpr std::uint64_t KGSL_MEMFLAGS_SPARSE_VIRT = 1ull << 30;
inline constexpr std::uint64_t KGSL_MEMFLAGS_IOCOHERENT = 1ull << 31;
inline constexpr std::uint64_t KGSL_MEMFLAGS_FORCE_32BIT = 1ull << 32;
inline constexpr std::uint64_t KGSL_MEMFLAGS_GUARD_PAGE = 1ull << 33;
inline constexpr std::uint64_t KGSL_MEMFLAGS_VBO = 1ull << 34;
inline constexpr std::uint64_t KGSL_MEMFLAGS_VBO_NO_MAP_ZERO = 1ull << 35;
inline constexpr std::int32_t KGSL_USER_MEM_TYPE_PMEM = 0;
inline constexpr std::int32_t KGSL_USER_MEM_TYPE_ASHMEM = 1;
inline constexpr std::int32_t KGSL_USER_MEM_TYPE_ADDR = 2;
inline constexpr std::int32_t KGSL_USER_MEM_TYPE_ION = 3;
inline constexpr std::int32_t KGSL_USER_MEM_TYPE_DMABUF = 3;

// Deferred free and cache maintenance.
inline constexpr std::uint64_t KGSL_GPUOBJ_FREE_ON_EVENT = 1;
inline constexpr std::uint32_t KGSL_GPU_EVENT_TIMESTAMP = 1;
inline constexpr std::uint32_t KGSL_GPU_EVENT_FENCE = 2;
inline constexpr std::uint32_t KGSL_GPUMEM_CACHE_CLEAN = 1;
inline constexpr std::uint32_t KGSL_GPUMEM_CACHE_INV = 2;
inline constexpr std::uint32_t KGSL_GPUMEM_CACHE_FLUSH = 3;
inline constexpr std::int32_t KGSL_TIMESTAMP_EVENT_FENCE = 2;

// Properties.
inline constexpr std::uint32_t KGSL_PROP_DEVICE_INFO = 0x1;
inline constexpr std::uint32_t KGSL_PROP_DEVICE_SHADOW = 0x2;
inline constexpr std::uint32_t KGSL_PROP_DEVICE_POWER = 0x3;
inline constexpr std::uint32_t KGSL_PROP_MMU_ENABLE = 0x6;
inline constexpr std::uint32_t KGSL_PROP_INTERRUPT_WAITS = 0x7;
inline constexpr std::uint32_t KGSL_PROP_VERSION = 0x8;
inline constexpr std::uint32_t KGSL_PROP_GPU_RESET_STAT = 0x9;
inline constexpr std::uint32_t KGSL_PROP_PWRCTRL = 0xE;
inline constexpr std::uint32_t KGSL_PROP_PWR_CONSTRAINT = 0x12;
inline constexpr std::uint32_t KGSL_PROP_UCHE_GMEM_VADDR = 0x13;
inline constexpr std::uint32_t KGSL_PROP_SP_GENERIC_MEM = 0x14;
inline constexpr std::uint32_t KGSL_PROP_UCODE_VERSION = 0x15;
inline constexpr std::uint32_t KGSL_PROP_GPMU_VERSION = 0x16;
inline constexpr std::uint32_t KGSL_PROP_HIGHEST_BANK_BIT = 0x17;
inline constexpr std::uint32_t KGSL_PROP_DEVICE_BITNESS = 0x18;
inline constexpr std::uint32_t KGSL_PROP_MIN_ACCESS_LENGTH = 0x1A;
inline constexpr std::uint32_t KGSL_PROP_UBWC_MODE = 0x1B;
inline constexpr std::uint32_t KGSL_PROP_DEVICE_QTIMER = 0x20;
inline constexpr std::uint32_t KGSL_PROP_SPEED_BIN = 0x25;
inline constexpr std::uint32_t KGSL_PROP_QUERY_CAPABILITIES = 0x27;
inline constexpr std::uint32_t KGSL_PROP_CONTEXT_PROPERTY = 0x28;
inline constexpr std::uint32_t KGSL_PROP_GPU_MODEL = 0x29;
inline constexpr std::uint32_t KGSL_PROP_VK_DEVICE_ID = 0x2A;
inline constexpr std::uint32_t KGSL_PROP_GPU_VA64_SIZE = 0x2C;
inline constexpr std::uint32_t KGSL_PROP_IS_RAYTRACING_ENABLED = 0x2D;
inline constexpr std::uint32_t KGSL_CTX_STAT_NO_ERROR = 0;
inline constexpr std::uint32_t KGSL_CTX_STAT_GUILTY_CONTEXT_RESET_EXT = 1;
inline constexpr std::uint32_t KGSL_CTX_STAT_INNOCENT_CONTEXT_RESET_EXT = 2;
inline constexpr std::uint32_t KGSL_CTX_STAT_UNKNOWN_CONTEXT_RESET_EXT = 3;
inline constexpr std::uint32_t KGSL_CONSTRAINT_NONE = 0;
inline constexpr std::uint32_t KGSL_CONSTRAINT_PWRLEVEL = 1;
inline constexpr std::uint32_t KGSL_CONSTRAINT_PWR_MIN = 0;
inline constexpr std::uint32_t KGSL_CONSTRAINT_PWR_MAX = 1;
inline constexpr std::uint32_t KGSL_TIMESTAMP_CONSUMED = 1;
inline constexpr std::uint32_t KGSL_TIMESTAMP_RETIRED = 2;
inline constexpr std::uint32_t KGSL_TIMESTAMP_QUEUED = 3;

// Composites. tinygrad's context: PREAMBLE | PWR_CONSTRAINT | NO_FAULT_TOLERANCE | NO_GMEM_ALLOC,
// priority 8, FINEGRAIN preemption. Its buffers: MEMALIGN(12) | USE_CPU_MAP.
constexpr std::uint32_t context_priority(std::uint32_t prio) {
  return (prio << KGSL_CONTEXT_PRIORITY_SHIFT) & KGSL_CONTEXT_PRIORITY_MASK;
}
constexpr std::uint32_t context_preempt_style(std::uint32_t style) {
  return (style << KGSL_CONTEXT_PREEMPT_STYLE_SHIFT) & KGSL_CONTEXT_PREEMPT_STYLE_MASK;
}
constexpr std::uint64_t memalign(std::uint32_t log2) {
  return (static_cast<std::uint64_t>(log2) << KGSL_MEMALIGN_SHIFT) & KGSL_MEMALIGN_MASK;
}
constexpr std::uint64_t cachemode(std::uint64_t mode) {
  return (mode << KGSL_CACHEMODE_SHIFT) & KGSL_CACHEMODE_MASK;
}
inline constexpr std::uint32_t tinygrad_context_flags =
    KGSL_CONTEXT_PREAMBLE | KGSL_CONTEXT_PWR_CONSTRAINT | KGSL_CONTEXT_NO_FAULT_TOLERANCE |
    KGSL_CONTEXT_NO_GMEM_ALLOC | context_priority(8) |
    context_preempt_style(KGSL_CONTEXT_PREEMPT_STYLE_FINEGRAIN);
static_assert(tinygrad_context_flags == 0x04008A12);
inline constexpr std::uint64_t tinygrad_alloc_flags = memalign(12) | KGSL_MEMFLAGS_USE_CPU_MAP;
static_assert(tinygrad_alloc_flags == 0x100C0000);

// Driver limits the launcher and the fake driver rely on (msm_kgsl.h and the driver's kgsl.c).
inline constexpr std::uint32_t max_ib_dwords = 0xFFFFF;
inline constexpr std::uint32_t max_list_entries = 2000;
inline constexpr std::uint32_t max_inflight_per_context = 49;

// --- the table `uopcg kgsl-abi` prints ------------------------------------------------------------

struct ioctl_row {
  const char* name;  // as in the uapi header, e.g. "IOCTL_KGSL_GPU_COMMAND"
  std::uint32_t request;
  std::uint32_t size;  // sizeof the argument struct
};
struct field_row {
  const char* structure;  // e.g. "kgsl_gpu_command"
  const char* field;
  std::uint32_t offset;
  std::uint32_t size;
};

#define UOPCG_KGSL_IOCTL(N, T) ioctl_row{#N, N, static_cast<std::uint32_t>(sizeof(T))}
inline constexpr std::array ioctl_rows{
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_DEVICE_GETPROPERTY, kgsl_device_getproperty),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_DEVICE_WAITTIMESTAMP, kgsl_device_waittimestamp),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, kgsl_device_waittimestamp_ctxtid),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_CMDSTREAM_READTIMESTAMP, kgsl_cmdstream_readtimestamp),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_DRAWCTXT_CREATE, kgsl_drawctxt_create),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_DRAWCTXT_DESTROY, kgsl_drawctxt_destroy),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_MAP_USER_MEM, kgsl_map_user_mem),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID, kgsl_cmdstream_readtimestamp_ctxtid),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_SHAREDMEM_FREE, kgsl_sharedmem_free),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_SETPROPERTY, kgsl_device_getproperty),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_TIMESTAMP_EVENT, kgsl_timestamp_event),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUMEM_ALLOC_ID, kgsl_gpumem_alloc_id),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUMEM_FREE_ID, kgsl_gpumem_free_id),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUMEM_GET_INFO, kgsl_gpumem_get_info),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUMEM_SYNC_CACHE, kgsl_gpumem_sync_cache),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_PERFCOUNTER_READ, kgsl_perfcounter_read),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_SUBMIT_COMMANDS, kgsl_submit_commands),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUOBJ_ALLOC, kgsl_gpuobj_alloc),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUOBJ_FREE, kgsl_gpuobj_free),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUOBJ_INFO, kgsl_gpuobj_info),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUOBJ_IMPORT, kgsl_gpuobj_import),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPUOBJ_SYNC, kgsl_gpuobj_sync),
    UOPCG_KGSL_IOCTL(IOCTL_KGSL_GPU_COMMAND, kgsl_gpu_command),
};
#undef UOPCG_KGSL_IOCTL

#define UOPCG_KGSL_FIELD(S, F) \
  field_row{#S, #F, static_cast<std::uint32_t>(offsetof(S, F)), static_cast<std::uint32_t>(sizeof(S::F))}
// Padding members are left out: they are not named fields in the uapi header.
inline constexpr std::array field_rows{
    UOPCG_KGSL_FIELD(kgsl_devinfo, device_id), UOPCG_KGSL_FIELD(kgsl_devinfo, chip_id),
    UOPCG_KGSL_FIELD(kgsl_devinfo, mmu_enabled), UOPCG_KGSL_FIELD(kgsl_devinfo, gmem_gpubaseaddr),
    UOPCG_KGSL_FIELD(kgsl_devinfo, gpu_id), UOPCG_KGSL_FIELD(kgsl_devinfo, gmem_sizebytes),
    UOPCG_KGSL_FIELD(kgsl_device_getproperty, type), UOPCG_KGSL_FIELD(kgsl_device_getproperty, value),
    UOPCG_KGSL_FIELD(kgsl_device_getproperty, sizebytes),
    UOPCG_KGSL_FIELD(kgsl_device_constraint, type), UOPCG_KGSL_FIELD(kgsl_device_constraint, context_id),
    UOPCG_KGSL_FIELD(kgsl_device_constraint, data), UOPCG_KGSL_FIELD(kgsl_device_constraint, size),
    UOPCG_KGSL_FIELD(kgsl_device_constraint_pwrlevel, level),
    UOPCG_KGSL_FIELD(kgsl_device_waittimestamp, timestamp), UOPCG_KGSL_FIELD(kgsl_device_waittimestamp, timeout),
    UOPCG_KGSL_FIELD(kgsl_device_waittimestamp_ctxtid, context_id),
    UOPCG_KGSL_FIELD(kgsl_device_waittimestamp_ctxtid, timestamp),
    UOPCG_KGSL_FIELD(kgsl_device_waittimestamp_ctxtid, timeout),
    UOPCG_KGSL_FIELD(kgsl_cmdstream_readtimestamp, type), UOPCG_KGSL_FIELD(kgsl_cmdstream_readtimestamp, timestamp),
    UOPCG_KGSL_FIELD(kgsl_cmdstream_readtimestamp_ctxtid, context_id),
    UOPCG_KGSL_FIELD(kgsl_cmdstream_readtimestamp_ctxtid, type),
    UOPCG_KGSL_FIELD(kgsl_cmdstream_readtimestamp_ctxtid, timestamp),
    UOPCG_KGSL_FIELD(kgsl_drawctxt_create, flags), UOPCG_KGSL_FIELD(kgsl_drawctxt_create, drawctxt_id),
    UOPCG_KGSL_FIELD(kgsl_drawctxt_destroy, drawctxt_id),
    UOPCG_KGSL_FIELD(kgsl_map_user_mem, fd), UOPCG_KGSL_FIELD(kgsl_map_user_mem, gpuaddr),
    UOPCG_KGSL_FIELD(kgsl_map_user_mem, len), UOPCG_KGSL_FIELD(kgsl_map_user_mem, offset),
    UOPCG_KGSL_FIELD(kgsl_map_user_mem, hostptr), UOPCG_KGSL_FIELD(kgsl_map_user_mem, memtype),
    UOPCG_KGSL_FIELD(kgsl_map_user_mem, flags),
    UOPCG_KGSL_FIELD(kgsl_sharedmem_free, gpuaddr),
    UOPCG_KGSL_FIELD(kgsl_timestamp_event, type), UOPCG_KGSL_FIELD(kgsl_timestamp_event, timestamp),
    UOPCG_KGSL_FIELD(kgsl_timestamp_event, context_id), UOPCG_KGSL_FIELD(kgsl_timestamp_event, priv),
    UOPCG_KGSL_FIELD(kgsl_timestamp_event, len),
    UOPCG_KGSL_FIELD(kgsl_gpumem_alloc_id, id), UOPCG_KGSL_FIELD(kgsl_gpumem_alloc_id, flags),
    UOPCG_KGSL_FIELD(kgsl_gpumem_alloc_id, size), UOPCG_KGSL_FIELD(kgsl_gpumem_alloc_id, mmapsize),
    UOPCG_KGSL_FIELD(kgsl_gpumem_alloc_id, gpuaddr),
    UOPCG_KGSL_FIELD(kgsl_gpumem_free_id, id),
    UOPCG_KGSL_FIELD(kgsl_gpumem_get_info, gpuaddr), UOPCG_KGSL_FIELD(kgsl_gpumem_get_info, id),
    UOPCG_KGSL_FIELD(kgsl_gpumem_get_info, flags), UOPCG_KGSL_FIELD(kgsl_gpumem_get_info, size),
    UOPCG_KGSL_FIELD(kgsl_gpumem_get_info, mmapsize), UOPCG_KGSL_FIELD(kgsl_gpumem_get_info, useraddr),
    UOPCG_KGSL_FIELD(kgsl_gpumem_sync_cache, gpuaddr), UOPCG_KGSL_FIELD(kgsl_gpumem_sync_cache, id),
    UOPCG_KGSL_FIELD(kgsl_gpumem_sync_cache, op), UOPCG_KGSL_FIELD(kgsl_gpumem_sync_cache, offset),
    UOPCG_KGSL_FIELD(kgsl_gpumem_sync_cache, length),
    UOPCG_KGSL_FIELD(kgsl_perfcounter_read, reads), UOPCG_KGSL_FIELD(kgsl_perfcounter_read, count),
    UOPCG_KGSL_FIELD(kgsl_submit_commands, context_id), UOPCG_KGSL_FIELD(kgsl_submit_commands, flags),
    UOPCG_KGSL_FIELD(kgsl_submit_commands, cmdlist), UOPCG_KGSL_FIELD(kgsl_submit_commands, numcmds),
    UOPCG_KGSL_FIELD(kgsl_submit_commands, synclist), UOPCG_KGSL_FIELD(kgsl_submit_commands, numsyncs),
    UOPCG_KGSL_FIELD(kgsl_submit_commands, timestamp),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_alloc, size), UOPCG_KGSL_FIELD(kgsl_gpuobj_alloc, flags),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_alloc, va_len), UOPCG_KGSL_FIELD(kgsl_gpuobj_alloc, mmapsize),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_alloc, id), UOPCG_KGSL_FIELD(kgsl_gpuobj_alloc, metadata_len),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_alloc, metadata),
    UOPCG_KGSL_FIELD(kgsl_gpu_event_timestamp, context_id), UOPCG_KGSL_FIELD(kgsl_gpu_event_timestamp, timestamp),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_free, flags), UOPCG_KGSL_FIELD(kgsl_gpuobj_free, priv),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_free, id), UOPCG_KGSL_FIELD(kgsl_gpuobj_free, type),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_free, len),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_info, gpuaddr), UOPCG_KGSL_FIELD(kgsl_gpuobj_info, flags),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_info, size), UOPCG_KGSL_FIELD(kgsl_gpuobj_info, va_len),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_info, va_addr), UOPCG_KGSL_FIELD(kgsl_gpuobj_info, id),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_import, priv), UOPCG_KGSL_FIELD(kgsl_gpuobj_import, priv_len),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_import, flags), UOPCG_KGSL_FIELD(kgsl_gpuobj_import, type),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_import, id),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_import_dma_buf, fd),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_import_useraddr, virtaddr),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_sync_obj, offset), UOPCG_KGSL_FIELD(kgsl_gpuobj_sync_obj, length),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_sync_obj, id), UOPCG_KGSL_FIELD(kgsl_gpuobj_sync_obj, op),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_sync, objs), UOPCG_KGSL_FIELD(kgsl_gpuobj_sync, obj_len),
    UOPCG_KGSL_FIELD(kgsl_gpuobj_sync, count),
    UOPCG_KGSL_FIELD(kgsl_command_object, offset), UOPCG_KGSL_FIELD(kgsl_command_object, gpuaddr),
    UOPCG_KGSL_FIELD(kgsl_command_object, size), UOPCG_KGSL_FIELD(kgsl_command_object, flags),
    UOPCG_KGSL_FIELD(kgsl_command_object, id),
    UOPCG_KGSL_FIELD(kgsl_command_syncpoint, priv), UOPCG_KGSL_FIELD(kgsl_command_syncpoint, size),
    UOPCG_KGSL_FIELD(kgsl_command_syncpoint, type),
    UOPCG_KGSL_FIELD(kgsl_cmd_syncpoint_timestamp, context_id),
    UOPCG_KGSL_FIELD(kgsl_cmd_syncpoint_timestamp, timestamp),
    UOPCG_KGSL_FIELD(kgsl_cmd_syncpoint_fence, fd),
    UOPCG_KGSL_FIELD(kgsl_gpu_command, flags), UOPCG_KGSL_FIELD(kgsl_gpu_command, cmdlist),
    UOPCG_KGSL_FIELD(kgsl_gpu_command, cmdsize), UOPCG_KGSL_FIELD(kgsl_gpu_command, numcmds),
    UOPCG_KGSL_FIELD(kgsl_gpu_command, objlist), UOPCG_KGSL_FIELD(kgsl_gpu_command, objsize),
    UOPCG_KGSL_FIELD(kgsl_gpu_command, numobjs), UOPCG_KGSL_FIELD(kgsl_gpu_command, synclist),
    UOPCG_KGSL_FIELD(kgsl_gpu_command, syncsize), UOPCG_KGSL_FIELD(kgsl_gpu_command, numsyncs),
    UOPCG_KGSL_FIELD(kgsl_gpu_command, context_id), UOPCG_KGSL_FIELD(kgsl_gpu_command, timestamp),
    UOPCG_KGSL_FIELD(kgsl_cmdbatch_profiling_buffer, wall_clock_s),
    UOPCG_KGSL_FIELD(kgsl_cmdbatch_profiling_buffer, wall_clock_ns),
    UOPCG_KGSL_FIELD(kgsl_cmdbatch_profiling_buffer, gpu_ticks_queued),
    UOPCG_KGSL_FIELD(kgsl_cmdbatch_profiling_buffer, gpu_ticks_submitted),
    UOPCG_KGSL_FIELD(kgsl_cmdbatch_profiling_buffer, gpu_ticks_retired),
};
#undef UOPCG_KGSL_FIELD

/// Name of an ioctl by its number (`nr` only, the way the driver dispatches), or "" if unknown.
constexpr const char* ioctl_name(std::uint32_t request) {
  for (const auto& r : ioctl_rows)
    if (ioc_nr(r.request) == ioc_nr(request) && ioc_type(request) == KGSL_IOC_TYPE) return r.name;
  return "";
}

namespace detail {
inline void append_hex32(std::string& s, std::uint32_t v) {
  static constexpr char digits[] = "0123456789ABCDEF";
  s += "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xF];
}
}  // namespace detail

/// The lines `uopcg kgsl-abi` prints: `ioctl NAME 0xREQUEST SIZE` and `field STRUCT FIELD OFFSET SIZE`,
/// tab-separated, ioctls first, in uapi order.
inline std::vector<std::string> abi_lines() {
  std::vector<std::string> out;
  out.reserve(ioctl_rows.size() + field_rows.size());
  for (const auto& r : ioctl_rows) {
    std::string s = "ioctl\t";
    s += r.name;
    s += '\t';
    detail::append_hex32(s, r.request);
    s += '\t';
    s += std::to_string(r.size);
    out.push_back(std::move(s));
  }
  for (const auto& f : field_rows) {
    std::string s = "field\t";
    s += f.structure;
    s += '\t';
    s += f.field;
    s += '\t';
    s += std::to_string(f.offset);
    s += '\t';
    s += std::to_string(f.size);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace uopcg::kgsl::abi
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_ABI_HPP
// ---- end uopcg/runtime/kgsl/abi.hpp ----
// ---- begin uopcg/runtime/kgsl/sys.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_SYS_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_SYS_HPP
// The system-call policy of the KGSL launcher and the ioctl error reporting.
//
// Every syscall the launcher makes goes through a policy object, so tests can swap the real driver
// for an in-process fake. A policy provides (all with libc conventions: -1 and errno on failure):
//   int   open(const char* path, int flags);
//   int   close(int fd);
//   int   ioctl(int fd, std::uint32_t request, void* arg);
//   void* mmap(void* addr, std::size_t len, int prot, int flags, int fd, std::int64_t offset);
//   int   munmap(void* addr, std::size_t len);
//   long  page_size();            // sysconf(_SC_PAGESIZE)
//   std::int64_t now_ns();        // monotonic clock, for wait deadlines

#if !defined(__linux__)
#error "uopcg/runtime/kgsl is Linux-only (it talks to the msm KGSL driver)"
#endif

#include <cerrno>
#include <concepts>
#include <ctime>
#include <system_error>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../compile.hpp"  // single_include/uopcg/compile.hpp

namespace uopcg::kgsl {

template <class S>
concept syscall_policy = requires(S& s, const char* path, int i, std::uint32_t req, void* p, std::size_t n,
                                  std::int64_t off) {
  { s.open(path, i) } -> std::same_as<int>;
  { s.close(i) } -> std::same_as<int>;
  { s.ioctl(i, req, p) } -> std::same_as<int>;
  { s.mmap(p, n, i, i, i, off) } -> std::same_as<void*>;
  { s.munmap(p, n) } -> std::same_as<int>;
  { s.page_size() } -> std::same_as<long>;
  { s.now_ns() } -> std::same_as<std::int64_t>;
};

/// The real thing: libc calls straight to the kernel.
struct real_sys {
  int open(const char* path, int flags) { return ::open(path, flags | O_CLOEXEC); }
  int close(int fd) { return ::close(fd); }
  int ioctl(int fd, std::uint32_t request, void* arg) {
    // glibc declares the request as unsigned long, bionic as int; both accept the 32-bit value.
    return ::ioctl(fd, request, arg);
  }
  void* mmap(void* addr, std::size_t len, int prot, int flags, int fd, std::int64_t offset) {
    return ::mmap(addr, len, prot, flags, fd, static_cast<off_t>(offset));
  }
  int munmap(void* addr, std::size_t len) { return ::munmap(addr, len); }
  long page_size() { return ::sysconf(_SC_PAGESIZE); }
  std::int64_t now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  /// The process-wide instance used when no policy object is given.
  static real_sys& instance() {
    static real_sys s;
    return s;
  }
};
static_assert(syscall_policy<real_sys>);

/// "ENOMEM" for ENOMEM, ... (the symbolic names users grep dmesg and headers for).
inline const char* errno_name(int e) {
  switch (e) {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EINTR: return "EINTR";
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case ENODEV: return "ENODEV";
    case EINVAL: return "EINVAL";
    case ENFILE: return "ENFILE";
    case EMFILE: return "EMFILE";
    case ENOTTY: return "ENOTTY";
    case ENOSPC: return "ENOSPC";
    case ERANGE: return "ERANGE";
    case EDEADLK: return "EDEADLK";
    case ENOSYS: return "ENOSYS";
    case EPROTO: return "EPROTO";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ECANCELED: return "ECANCELED";
    default: return nullptr;
  }
}

/// "ENOMEM (Cannot allocate memory)"; unknown values read "errno 1234 (...)".
inline std::string errno_text(int e) {
  std::string s;
  if (const char* n = errno_name(e)) {
    s = n;
  } else {
    s = "errno " + std::to_string(e);
  }
  s += " (";
  s += std::generic_category().message(e);
  s += ')';
  return s;
}

namespace detail {

// What each failure means for the user, where the errno alone is cryptic (the driver's kgsl.c).
inline const char* errno_hint(std::uint32_t request, int e) {
  using namespace abi;
  if (e == EDEADLK) return "the context was invalidated by a GPU fault or hang; results are lost, recreate the queue";
  if (request == IOCTL_KGSL_GPU_COMMAND && e == EPROTO)
    return "the command was queued, but the context faulted earlier";
  if (request == IOCTL_KGSL_GPU_COMMAND && e == ETIMEDOUT) return "the context queue stayed full for 10 s; GPU hang?";
  if (request == IOCTL_KGSL_DRAWCTXT_CREATE && e == ENOSPC) return "too many contexts in this process";
  return nullptr;
}

[[noreturn]] inline void fail_ioctl(std::uint32_t request, int e, const std::string& detail = {}) {
  std::string msg = abi::ioctl_name(request);
  if (msg.empty()) msg = "ioctl";
  msg += " failed: ";
  msg += errno_text(e);
  if (!detail.empty()) msg += ": " + detail;
  if (const char* hint = errno_hint(request, e)) {
    msg += " -- ";
    msg += hint;
  }
  fail_runtime(std::move(msg));
}

/// One ioctl, retried on EINTR/EAGAIN (blocking calls can be interrupted). Returns 0 or the errno.
template <class Sys>
int ioctl_errno(Sys& sys, int fd, std::uint32_t request, void* arg) noexcept {
  for (;;) {
    if (sys.ioctl(fd, request, arg) == 0) return 0;
    const int e = errno;
    if (e != EINTR && e != EAGAIN) return e != 0 ? e : EIO;
  }
}

/// One ioctl that must succeed; on failure a uopcg::error names the ioctl and the errno.
template <class Sys>
void ioctl_or_fail(Sys& sys, int fd, std::uint32_t request, void* arg) {
  if (const int e = ioctl_errno(sys, fd, request, arg)) fail_ioctl(request, e);
}

}  // namespace detail
}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_SYS_HPP
// ---- end uopcg/runtime/kgsl/sys.hpp ----
// ---- begin uopcg/runtime/kgsl/chip.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_CHIP_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_CHIP_HPP
// Which Adreno GPUs the launcher drives, and the per-chip numbers its dispatch stream depends on.
// Private-memory sizes scale with the fibers (hardware threads) of a shader processor and the shader
// preload with the instruction cache, so a chip missing from the table is refused instead of being
// given A630's numbers: on a chip with more fibers, the shader processors' private regions overlap.



namespace uopcg::kgsl {

/// Adreno chip id: core.major.minor.patch, one byte each (A630 = 0x06030001).
struct chip_id {
  std::uint32_t raw = 0;
  constexpr std::uint32_t core() const { return raw >> 24; }
  constexpr std::uint32_t major() const { return (raw >> 16) & 0xFF; }
  constexpr std::uint32_t minor() const { return (raw >> 8) & 0xFF; }
  constexpr std::uint32_t patch() const { return raw & 0xFF; }
  /// Whether the id is the classic decimal-digit form (later parts use a letter-like top byte).
  constexpr bool classic() const { return core() >= 1 && core() <= 9 && major() <= 9 && minor() <= 9; }
  /// 630 for 0x0603xxxx (core·100 + major·10 + minor, as turnip computes it); 0 if not classic.
  constexpr std::uint32_t gpu_id() const { return classic() ? core() * 100 + major() * 10 + minor() : 0; }
  /// "A630" for classic ids, otherwise "chip 0x43050A01".
  std::string name() const {
    // Appended, not `"A" + std::to_string(...)`: g++ 12 at -O3 warns falsely (-Wrestrict) on that
    // operator+ once inlined here, which -Werror builds turn into an error.
    if (classic()) return std::string("A").append(std::to_string(gpu_id()));
    std::string s = "chip ";
    abi::detail::append_hex32(s, raw);
    return s;
  }
};

/// What the dispatch stream needs to know about one chip.
struct chip_traits {
  std::uint32_t gpu_id;             // e.g. 630; matches every patch level
  std::uint32_t fibers_per_sp;      // private memory per shader processor = per-fiber bytes × this
  std::uint32_t instr_cache_units;  // instruction cache in 128-byte units: the most the shader preload may load
};

// Every number is freedreno's, from mesa src/freedreno/common/a6xx_gpu.py: fibers_per_sp of the
// chip's GPUConfig, instr_cache_size of its a6xx_gen1 template (freedreno_devices.py in older mesa).
// For A630 tinygrad agrees: the factors 128*2 and 128*16 in tinygrad/runtime/ops_qcom.py
// (QCOMProgram's totalpvtmemsize and hw_stack_offset) are 2048 fibers. Only a6xx_gen1 chips are
// listed: they share A630's register file (reg_size_vec4 96), which layout_of's work-group bound
// assumes; other A6xx sub-generations differ in fibers, register file and instruction cache.
inline constexpr chip_traits known_chips[] = {
    {615, 128 * 16, 64}, {616, 128 * 16, 64}, {618, 128 * 16, 64},
    {619, 128 * 16, 64}, {620, 128 * 16, 64}, {630, 128 * 16, 64},
};

/// The table entry of a chip, or nullptr when the launcher does not know it.
constexpr const chip_traits* find_chip_traits(chip_id c) {
  if (!c.classic()) return nullptr;
  for (const chip_traits& t : known_chips)
    if (t.gpu_id == c.gpu_id()) return &t;
  return nullptr;
}

/// The one place that decides which GPUs the launcher drives: "" when supported, else the reason,
/// naming the chip id. The stream is A6xx-only (A7xx moved the compute registers), and within A6xx
/// only chips whose fiber count and instruction cache are known.
inline std::string unsupported_chip_reason(chip_id c) {
  if (find_chip_traits(c)) return {};
  std::string s = "Adreno ";
  s.append(c.name()).append(" (chip id ");
  abi::detail::append_hex32(s, c.raw);
  if (c.core() != 6) return s + ") is not supported: the KGSL launcher emits A6xx compute state only";
  s += ") is not supported: its fibers per shader processor, which size private memory, are not in the "
       "KGSL launcher's chip table (known:";
  for (const chip_traits& t : known_chips) s += " A" + std::to_string(t.gpu_id);
  return s + ")";
}

/// The traits of a supported chip; a uopcg::error naming the chip otherwise.
inline const chip_traits& chip_traits_of(chip_id c) {
  if (const chip_traits* t = find_chip_traits(c)) return *t;
  fail_runtime(unsupported_chip_reason(c));
}

}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_CHIP_HPP
// ---- end uopcg/runtime/kgsl/chip.hpp ----
// ---- begin uopcg/runtime/kgsl/pm4.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_PM4_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_PM4_HPP
// PM4 command-stream encoding for Adreno A5xx/A6xx (type-4 register writes, type-7 opcode packets),
// the A6xx compute registers and opcodes the launcher uses, a dword writer and a packet decoder.
// Pure computation: no system calls, usable in constant evaluation.

#include <initializer_list>
#include <span>

namespace uopcg::kgsl::pm4 {

/// Odd parity over a field: 1 when the field has an even number of set bits, so that the field plus
/// this bit always has an odd number of ones (fold to a nibble, then look it up in ~0x6996).
constexpr std::uint32_t parity(std::uint32_t v) {
  v ^= v >> 16;
  v ^= v >> 8;
  v ^= v >> 4;
  v &= 0xF;
  return (~0x6996u >> v) & 1u;
}

inline constexpr std::uint32_t type4_max_count = 0x7F;
inline constexpr std::uint32_t type4_max_reg = 0x3FFFF;
inline constexpr std::uint32_t type7_max_count = 0x3FFF;
inline constexpr std::uint32_t type7_max_opcode = 0x7F;
inline constexpr std::uint32_t register_file_size = 0x40000;

/// Type-4 header: write `count` consecutive registers starting at dword offset `reg`.
constexpr std::uint32_t type4(std::uint32_t reg, std::uint32_t count) {
  return 0x40000000u | (count & 0x7F) | (parity(count) << 7) | ((reg & 0x3FFFF) << 8) | (parity(reg) << 27);
}
/// Type-7 header: opcode packet with `count` payload dwords.
constexpr std::uint32_t type7(std::uint32_t opcode, std::uint32_t count) {
  return 0x70000000u | (count & 0x3FFF) | (parity(count) << 15) | ((opcode & 0x7F) << 16) |
         (parity(opcode) << 23);
}

// Opcodes (adreno_pm4.xml).
enum opcode : std::uint32_t {
  CP_NOP = 0x10,
  CP_WAIT_MEM_WRITES = 0x12,
  CP_WAIT_FOR_IDLE = 0x26,
  CP_RUN_OPENCL = 0x31,
  CP_EXEC_CS = 0x33,
  CP_LOAD_STATE6_FRAG = 0x34,
  CP_WAIT_REG_MEM = 0x3C,
  CP_REG_TO_MEM = 0x3E,
  CP_EVENT_WRITE = 0x46,
  CP_SET_MARKER = 0x65,
};

// Events (CP_EVENT_WRITE dword 0, bits 0-7).
inline constexpr std::uint32_t CACHE_FLUSH_TS = 4;
inline constexpr std::uint32_t CACHE_INVALIDATE = 0x31;  // A6xx numbering
inline constexpr std::uint32_t RM6_COMPUTE = 8;          // CP_SET_MARKER mode

// CP_WAIT_REG_MEM dword 0: function WRITE_GE (5) on memory (POLL_MEMORY = 1 in bits 4-5).
inline constexpr std::uint32_t WAIT_REG_MEM_GE_MEMORY = 0x15;
inline constexpr std::uint32_t WAIT_REG_MEM_POLL_CYCLES = 32;
// CP_REG_TO_MEM dword 0 for the 64-bit always-on counter.
inline constexpr std::uint32_t CP_ALWAYS_ON_COUNTER = 0x0980;
inline constexpr std::uint32_t REG_TO_MEM_ALWAYS_ON_64 = 0x40080980;

// A6xx compute registers (new Mesa names; dword offsets).
namespace reg {
inline constexpr std::uint32_t SP_CS_CNTL_0 = 0xA9B0;
inline constexpr std::uint32_t SP_CS_CNTL_1 = 0xA9B1;
inline constexpr std::uint32_t SP_CS_BOOLEAN_CF_MASK = 0xA9B2;
inline constexpr std::uint32_t SP_CS_PROGRAM_COUNTER_OFFSET = 0xA9B3;
inline constexpr std::uint32_t SP_CS_BASE = 0xA9B4;
inline constexpr std::uint32_t SP_CS_PVT_MEM_PARAM = 0xA9B6;
inline constexpr std::uint32_t SP_CS_PVT_MEM_BASE = 0xA9B7;
inline constexpr std::uint32_t SP_CS_PVT_MEM_SIZE = 0xA9B9;
inline constexpr std::uint32_t SP_CS_TSIZE = 0xA9BA;
inline constexpr std::uint32_t SP_CS_CONFIG = 0xA9BB;
inline constexpr std::uint32_t SP_CS_INSTR_SIZE = 0xA9BC;
inline constexpr std::uint32_t SP_CS_PVT_MEM_STACK_OFFSET = 0xA9BD;
inline constexpr std::uint32_t SP_CS_SAMPLER_BASE = 0xA9E2;
inline constexpr std::uint32_t SP_CS_TEXMEMOBJ_BASE = 0xA9E6;
inline constexpr std::uint32_t SP_CS_UAV_BASE = 0xA9F2;
inline constexpr std::uint32_t SP_CS_USIZE = 0xAA00;
inline constexpr std::uint32_t SP_MODE_CNTL = 0xAB00;
inline constexpr std::uint32_t SP_PERFCTR_SHADER_MASK = 0xAE0F;
inline constexpr std::uint32_t TPL1_CS_BORDER_COLOR_BASE = 0xB180;
inline constexpr std::uint32_t TPL1_MODE_CNTL = 0xB309;
inline constexpr std::uint32_t TPL1_DBG_ECO_CNTL = 0xB600;
inline constexpr std::uint32_t SP_REG_PROG_ID_0 = 0xB983;
inline constexpr std::uint32_t SP_CS_CONST_CONFIG = 0xB987;
inline constexpr std::uint32_t SP_CS_NDRANGE_0 = 0xB990;
inline constexpr std::uint32_t SP_CS_NDRANGE_1 = 0xB991;  // GLOBALSIZE_X; 2..6 follow
inline constexpr std::uint32_t SP_CS_CONST_CONFIG_0 = 0xB997;
inline constexpr std::uint32_t SP_CS_WGE_CNTL = 0xB998;
inline constexpr std::uint32_t SP_CS_KERNEL_GROUP_X = 0xB999;
inline constexpr std::uint32_t SP_UPDATE_CNTL = 0xBB08;

/// The name of a register the launcher writes (freedreno's a6xx.xml names; the two dwords of a 64-bit
/// address are NAME_LO and NAME_HI), or nullptr. Used by tools that print a stream.
constexpr const char* name(std::uint32_t r) {
  switch (r) {
    case SP_CS_CNTL_0: return "SP_CS_CNTL_0";
    case SP_CS_CNTL_1: return "SP_CS_CNTL_1";
    case SP_CS_BOOLEAN_CF_MASK: return "SP_CS_BOOLEAN_CF_MASK";
    case SP_CS_PROGRAM_COUNTER_OFFSET: return "SP_CS_PROGRAM_COUNTER_OFFSET";
    case SP_CS_BASE: return "SP_CS_BASE_LO";
    case SP_CS_BASE + 1: return "SP_CS_BASE_HI";
    case SP_CS_PVT_MEM_PARAM: return "SP_CS_PVT_MEM_PARAM";
    case SP_CS_PVT_MEM_BASE: return "SP_CS_PVT_MEM_BASE_LO";
    case SP_CS_PVT_MEM_BASE + 1: return "SP_CS_PVT_MEM_BASE_HI";
    case SP_CS_PVT_MEM_SIZE: return "SP_CS_PVT_MEM_SIZE";
    case SP_CS_TSIZE: return "SP_CS_TSIZE";
    case SP_CS_CONFIG: return "SP_CS_CONFIG";
    case SP_CS_INSTR_SIZE: return "SP_CS_INSTR_SIZE";
    case SP_CS_PVT_MEM_STACK_OFFSET: return "SP_CS_PVT_MEM_STACK_OFFSET";
    case SP_CS_SAMPLER_BASE: return "SP_CS_SAMPLER_BASE_LO";
    case SP_CS_SAMPLER_BASE + 1: return "SP_CS_SAMPLER_BASE_HI";
    case SP_CS_TEXMEMOBJ_BASE: return "SP_CS_TEXMEMOBJ_BASE_LO";
    case SP_CS_TEXMEMOBJ_BASE + 1: return "SP_CS_TEXMEMOBJ_BASE_HI";
    case SP_CS_UAV_BASE: return "SP_CS_UAV_BASE_LO";
    case SP_CS_UAV_BASE + 1: return "SP_CS_UAV_BASE_HI";
    case SP_CS_USIZE: return "SP_CS_USIZE";
    case SP_MODE_CNTL: return "SP_MODE_CNTL";
    case SP_PERFCTR_SHADER_MASK: return "SP_PERFCTR_SHADER_MASK";
    case TPL1_CS_BORDER_COLOR_BASE: return "TPL1_CS_BORDER_COLOR_BASE_LO";
    case TPL1_CS_BORDER_COLOR_BASE + 1: return "TPL1_CS_BORDER_COLOR_BASE_HI";
    case TPL1_MODE_CNTL: return "TPL1_MODE_CNTL";
    case TPL1_DBG_ECO_CNTL: return "TPL1_DBG_ECO_CNTL";
    case SP_REG_PROG_ID_0: return "SP_REG_PROG_ID_0";
    case SP_REG_PROG_ID_0 + 1: return "SP_REG_PROG_ID_1";
    case SP_REG_PROG_ID_0 + 2: return "SP_REG_PROG_ID_2";
    case SP_REG_PROG_ID_0 + 3: return "SP_REG_PROG_ID_3";
    case SP_CS_CONST_CONFIG: return "SP_CS_CONST_CONFIG";
    case SP_CS_NDRANGE_0: return "SP_CS_NDRANGE_0";
    case SP_CS_NDRANGE_1: return "SP_CS_NDRANGE_1";
    case SP_CS_NDRANGE_1 + 1: return "SP_CS_NDRANGE_2";
    case SP_CS_NDRANGE_1 + 2: return "SP_CS_NDRANGE_3";
    case SP_CS_NDRANGE_1 + 3: return "SP_CS_NDRANGE_4";
    case SP_CS_NDRANGE_1 + 4: return "SP_CS_NDRANGE_5";
    case SP_CS_NDRANGE_1 + 5: return "SP_CS_NDRANGE_6";
    case SP_CS_CONST_CONFIG_0: return "SP_CS_CONST_CONFIG_0";
    case SP_CS_WGE_CNTL: return "SP_CS_WGE_CNTL";
    case SP_CS_KERNEL_GROUP_X: return "SP_CS_KERNEL_GROUP_X";
    case SP_CS_KERNEL_GROUP_X + 1: return "SP_CS_KERNEL_GROUP_Y";
    case SP_CS_KERNEL_GROUP_X + 2: return "SP_CS_KERNEL_GROUP_Z";
    case SP_UPDATE_CNTL: return "SP_UPDATE_CNTL";
    default: return nullptr;
  }
}
}  // namespace reg

// CP_LOAD_STATE6 control dword fields.
enum class state_type : std::uint32_t { shader = 0, constants = 1, uav = 3 };
enum class state_src : std::uint32_t { direct = 0, bindless = 1, indirect = 2, ubo = 3 };
inline constexpr std::uint32_t SB6_CS_TEX = 5;
inline constexpr std::uint32_t SB6_CS_SHADER = 13;

constexpr std::uint32_t load_state6_ctrl(state_type type, state_src src, std::uint32_t block,
                                         std::uint32_t num_unit, std::uint32_t dst_off = 0) {
  return (dst_off & 0x3FFF) | (static_cast<std::uint32_t>(type) << 14) | (static_cast<std::uint32_t>(src) << 16) |
         ((block & 0xF) << 18) | ((num_unit & 0x3FF) << 22);
}
struct load_state6_fields {
  std::uint32_t dst_off, type, src, block, num_unit;
};
constexpr load_state6_fields decode_load_state6(std::uint32_t ctrl) {
  return {ctrl & 0x3FFF, (ctrl >> 14) & 3, (ctrl >> 16) & 3, (ctrl >> 18) & 0xF, ctrl >> 22};
}
/// Bytes one NUM_UNIT covers for a (type, block) pair used by compute; 0 if not a compute load.
constexpr std::uint32_t load_state6_unit_bytes(std::uint32_t type, std::uint32_t block) {
  if (block == SB6_CS_SHADER) return type == 0 ? 128 : type == 1 ? 16 : type == 3 ? 64 : 0;
  if (block == SB6_CS_TEX) return type == 0 ? 16 : type == 1 ? 64 : 0;
  return 0;
}

constexpr std::uint32_t lo(std::uint64_t a) { return static_cast<std::uint32_t>(a); }
constexpr std::uint32_t hi(std::uint64_t a) { return static_cast<std::uint32_t>(a >> 32); }

/// Appends packets to caller-owned dword storage. Never allocates; overflow is a logic error the
/// caller prevents by sizing the storage (the launcher computes an upper bound per launch).
class writer {
 public:
  constexpr writer(std::uint32_t* data, std::size_t capacity) : data_(data), cap_(capacity) {}
  constexpr explicit writer(std::span<std::uint32_t> s) : writer(s.data(), s.size()) {}

  constexpr std::size_t size() const { return n_; }
  constexpr std::size_t capacity() const { return cap_; }
  constexpr std::uint32_t* data() const { return data_; }

  /// Type-4 burst; returns the index of the first payload dword (for patching in place).
  constexpr std::size_t reg(std::uint32_t r, std::initializer_list<std::uint32_t> values) {
    put(type4(r, static_cast<std::uint32_t>(values.size())));
    const std::size_t at = n_;
    for (std::uint32_t v : values) put(v);
    return at;
  }
  constexpr std::size_t reg64(std::uint32_t r, std::uint64_t addr) { return reg(r, {lo(addr), hi(addr)}); }
  /// Type-7 packet; returns the index of the first payload dword.
  constexpr std::size_t op(std::uint32_t opcode, std::initializer_list<std::uint32_t> payload = {}) {
    put(type7(opcode, static_cast<std::uint32_t>(payload.size())));
    const std::size_t at = n_;
    for (std::uint32_t v : payload) put(v);
    return at;
  }

 private:
  constexpr void put(std::uint32_t v) {
    // Overflow would corrupt memory; stop instead (a bounded-size bug, caught by tests).
    if (n_ >= cap_) __builtin_trap();
    data_[n_++] = v;
  }
  std::uint32_t* data_;
  std::size_t cap_;
  std::size_t n_ = 0;
};

/// One decoded packet of a stream.
struct packet {
  enum kind_t : std::uint8_t { type4_regs, type7_op, invalid } kind = invalid;
  std::uint32_t header = 0;
  std::uint32_t reg = 0;     // type 4: first register
  std::uint32_t opcode = 0;  // type 7
  std::uint32_t count = 0;   // payload dwords
  std::size_t offset = 0;    // index of the header in the stream
  std::span<const std::uint32_t> payload;
  const char* error = nullptr;  // set when kind == invalid
};

/// Decodes the packet at `at`. Validates the type nibble, both parity bits, the unused bits and
/// that the payload fits in the stream (no partial packet at the end).
constexpr packet decode_at(std::span<const std::uint32_t> s, std::size_t at) {
  packet p;
  p.offset = at;
  if (at >= s.size()) {
    p.error = "read past the end of the stream";
    return p;
  }
  const std::uint32_t h = s[at];
  p.header = h;
  const std::uint32_t t = h >> 28;
  if (t == 4) {
    p.count = h & 0x7F;
    p.reg = (h >> 8) & 0x3FFFF;
    if (((h >> 7) & 1) != parity(p.count)) p.error = "type-4 count parity bit wrong";
    else if (((h >> 27) & 1) != parity(p.reg)) p.error = "type-4 register parity bit wrong";
    else if (h & (1u << 26)) p.error = "type-4 reserved bit 26 set";
    else p.kind = packet::type4_regs;
  } else if (t == 7) {
    p.count = h & 0x3FFF;
    p.opcode = (h >> 16) & 0x7F;
    if (((h >> 15) & 1) != parity(p.count)) p.error = "type-7 count parity bit wrong";
    else if (((h >> 23) & 1) != parity(p.opcode)) p.error = "type-7 opcode parity bit wrong";
    else if (h & ((1u << 14) | (0xFu << 24))) p.error = "type-7 reserved bits set";
    else p.kind = packet::type7_op;
  } else {
    p.error = "packet type is neither 4 nor 7";
  }
  if (p.kind != packet::invalid && p.count > s.size() - at - 1) {
    p.kind = packet::invalid;
    p.error = "packet payload runs past the end of the stream";
  }
  if (p.kind != packet::invalid) p.payload = s.subspan(at + 1, p.count);
  return p;
}

/// Iterates the packets of a stream: `for (auto p : pm4::packets(dwords))`. Iteration stops after
/// the first invalid packet (which is yielded, with `error` set).
class packets {
 public:
  constexpr explicit packets(std::span<const std::uint32_t> s) : s_(s) {}
  class iterator {
   public:
    constexpr iterator(std::span<const std::uint32_t> s, std::size_t at) : s_(s), at_(at) {
      if (at_ < s_.size()) p_ = decode_at(s_, at_);
    }
    constexpr const packet& operator*() const { return p_; }
    constexpr const packet* operator->() const { return &p_; }
    constexpr iterator& operator++() {
      at_ = p_.kind == packet::invalid ? s_.size() : at_ + 1 + p_.count;
      if (at_ < s_.size()) p_ = decode_at(s_, at_);
      return *this;
    }
    constexpr bool operator==(const iterator& o) const { return at_ == o.at_; }

   private:
    std::span<const std::uint32_t> s_;
    std::size_t at_;
    packet p_{};
  };
  constexpr iterator begin() const { return {s_, 0}; }
  constexpr iterator end() const { return {s_, s_.size()}; }

 private:
  std::span<const std::uint32_t> s_;
};

}  // namespace uopcg::kgsl::pm4
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_PM4_HPP
// ---- end uopcg/runtime/kgsl/pm4.hpp ----
// ---- begin uopcg/runtime/kgsl/program.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_PROGRAM_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_PROGRAM_HPP
// Parser of Qualcomm "program library" blobs (what clGetProgramInfo(CL_PROGRAM_BINARIES) or
// libllvm-qcom return), following the fixed offsets tinygrad/runtime/ops_qcom.py reads: machine code, register
// footprint, private/shared memory, branch stack, argument slots in the constant file and the
// immediate constants the driver must pre-load. Every offset is bounds-checked; a malformed blob is
// a uopcg::error naming the field and offset, never an out-of-bounds read.

#include <cstring>


namespace uopcg::kgsl {

/// What a kernel parameter is, as recorded in the blob (argument record `type`).
enum class arg_kind : std::uint32_t {
  value = 0,    // buffer pointer or scalar, stored in the constant file
  texture = 1,  // read-only image: a texture descriptor
  image = 2,    // writable image: an IBO/UAV descriptor
};

struct program_arg {
  arg_kind kind;
  std::uint32_t const_offset;  // byte offset in the constant file (value kinds)
};

/// A constant the compiler expects the driver to store before every launch.
struct program_immediate {
  std::uint32_t value;
  std::uint32_t const_offset;  // byte offset in the constant file
  std::uint32_t size;          // 2 or 4 bytes
};

struct program_info {
  std::string name;
  std::vector<std::byte> image;  // machine code, copied verbatim into GPU memory
  std::uint32_t image_offset = 0;
  std::uint32_t fregs = 0;        // full-precision register footprint
  std::uint32_t hregs = 0;        // half-precision register footprint
  std::uint32_t entry_offset = 0; // -> SP_CS_PROGRAM_COUNTER_OFFSET
  std::uint32_t pvtmem = 0;       // private bytes per work-item
  std::uint32_t shmem = 0;        // local (shared) bytes per work-group
  std::uint32_t samplers = 0;     // 0 or 1
  std::uint32_t branchstack = 0;
  std::vector<program_arg> args;  // in kernel-parameter order
  std::vector<program_immediate> immediates;

  std::uint32_t image_size() const { return static_cast<std::uint32_t>(image.size()); }
  std::uint32_t count(arg_kind k) const {
    std::uint32_t n = 0;
    for (const auto& a : args) n += a.kind == k;
    return n;
  }
  std::uint32_t ntex() const { return count(arg_kind::texture); }
  std::uint32_t nibo() const { return count(arg_kind::image); }
};

/// Where the parser reads (absolute file offsets of u32 little-endian values; tinygrad/runtime/ops_qcom.py, QCOMProgram).
namespace blob_layout {
inline constexpr std::uint32_t section_count = 0x18;
inline constexpr std::uint32_t section_table = 0x30;
inline constexpr std::uint32_t section_record = 20;
inline constexpr std::uint32_t min_sections = 12;         // slot 11 (IMAGE_DESC) is used
inline constexpr std::uint32_t program_offset = 0x34;     // slot 0 offset
inline constexpr std::uint32_t consts_offset = 0xAC;      // slot 6 offset
inline constexpr std::uint32_t consts_size = 0xB0;        // slot 6 size
inline constexpr std::uint32_t image_offset = 0xC0;       // slot 7 offset
inline constexpr std::uint32_t image_size = 0x100;        // slot 10 size
inline constexpr std::uint32_t desc_offset = 0x110;       // slot 11 offset
inline constexpr std::uint32_t prog_fregs = 0x14, prog_hregs = 0x18;
inline constexpr std::uint32_t desc_entry = 0xC4, desc_pvtmem = 0xC8, desc_shmem = 0xD8, desc_samplers = 0xDC;
inline constexpr std::uint32_t desc_branchstack = 0x108, desc_name = 0x158;
inline constexpr std::uint32_t arg_record_min = 32;
inline constexpr std::uint32_t imm_record = 40;
inline constexpr std::uint32_t descriptor_tables = 2048;  // constant-file bytes below this hold arguments
}  // namespace blob_layout

namespace detail {

class blob_reader {
 public:
  explicit blob_reader(std::span<const std::byte> b) : b_(b) {}
  std::size_t size() const { return b_.size(); }
  bool fits(std::uint64_t off, std::uint64_t len) const { return off <= b_.size() && len <= b_.size() - off; }
  std::uint32_t u32(std::uint64_t off, const char* what) const {
    if (!fits(off, 4)) bad(what, off, "reads past the end");
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(b_[off + static_cast<std::size_t>(i)]);
    return v;
  }
  [[noreturn]] void bad(const char* what, std::uint64_t off, const char* problem) const {
    fail_runtime("malformed Qualcomm program binary (" + std::to_string(b_.size()) + " bytes): " + what +
                 " at offset " + hex(off) + " " + problem);
  }
  static std::string hex(std::uint64_t v) {
    static constexpr char d[] = "0123456789abcdef";
    std::string s;
    do s.insert(s.begin(), d[v & 0xF]); while (v >>= 4);
    return "0x" + s;
  }
  std::span<const std::byte> bytes() const { return b_; }

 private:
  std::span<const std::byte> b_;
};

}  // namespace detail

/// Parses a Qualcomm program blob. Throws uopcg::error on malformed or unsupported input.
///
/// `kernel_name` should be the kernel's function name when the caller knows it (uopcg programs do):
/// the argument records start at the name's end rounded up to 4 bytes, so a name whose length is a
/// multiple of 4 has no terminator in the blob (tinygrad likewise uses the known name's length).
/// Without it the name is recovered by scanning; see below.
inline program_info parse_program(std::span<const std::byte> blob, std::string_view kernel_name = {}) {
  namespace L = blob_layout;
  const detail::blob_reader r(blob);
  program_info p;

  const std::uint32_t nsect = r.u32(L::section_count, "section count");
  if (nsect < L::min_sections) r.bad("section count", L::section_count, ("is " + std::to_string(nsect) + ", need at least 12").c_str());
  if (!r.fits(L::section_table, std::uint64_t{nsect} * L::section_record))
    r.bad("section table", L::section_table, ("with " + std::to_string(nsect) + " records runs past the end").c_str());

  const std::uint32_t prog = r.u32(L::program_offset, "program record offset (section 0)");
  p.fregs = r.u32(std::uint64_t{prog} + L::prog_fregs, "program.fregs");
  p.hregs = r.u32(std::uint64_t{prog} + L::prog_hregs, "program.hregs");

  p.image_offset = r.u32(L::image_offset, "machine code offset (section 7)");
  const std::uint32_t image_size = r.u32(L::image_size, "machine code size (section 10)");
  if (image_size == 0) r.bad("machine code size (section 10)", L::image_size, "is zero");
  if (image_size % 4 != 0) r.bad("machine code size (section 10)", L::image_size, "is not a multiple of 4");
  if (!r.fits(p.image_offset, image_size))
    r.bad("machine code", p.image_offset, ("of " + std::to_string(image_size) + " bytes runs past the end").c_str());
  p.image.assign(blob.begin() + p.image_offset, blob.begin() + p.image_offset + image_size);

  const std::uint32_t desc = r.u32(L::desc_offset, "kernel descriptor offset (section 11)");
  p.entry_offset = r.u32(std::uint64_t{desc} + L::desc_entry, "descriptor.entry_offset");
  p.pvtmem = r.u32(std::uint64_t{desc} + L::desc_pvtmem, "descriptor.pvtmem");
  p.shmem = r.u32(std::uint64_t{desc} + L::desc_shmem, "descriptor.shmem");
  p.samplers = r.u32(std::uint64_t{desc} + L::desc_samplers, "descriptor.sampler_count");
  p.branchstack = r.u32(std::uint64_t{desc} + L::desc_branchstack, "descriptor.branch_stack") / 2;

  // Register fields are 6 bits wide in SP_CS_CNTL_0; larger values cannot be encoded.
  if (p.fregs > 63) r.bad("program.fregs", std::uint64_t{prog} + L::prog_fregs, ("is " + std::to_string(p.fregs) + " (> 63)").c_str());
  if (p.hregs > 63) r.bad("program.hregs", std::uint64_t{prog} + L::prog_hregs, ("is " + std::to_string(p.hregs) + " (> 63)").c_str());
  if (p.branchstack > 63)
    r.bad("descriptor.branch_stack", std::uint64_t{desc} + L::desc_branchstack, "is larger than 126");
  if (p.samplers > 1)
    r.bad("descriptor.sampler_count", std::uint64_t{desc} + L::desc_samplers,
          ("is " + std::to_string(p.samplers) + "; kernels with more than one sampler are not supported").c_str());
  if (p.shmem > 0x8000) r.bad("descriptor.shmem", std::uint64_t{desc} + L::desc_shmem, "exceeds 32 KiB of local memory");

  // Kernel name, padded with NULs to 4 bytes (no terminator when its length is a multiple of 4).
  const std::uint64_t name_at = std::uint64_t{desc} + L::desc_name;
  if (!r.fits(name_at, 1)) r.bad("kernel name", name_at, "is past the end");
  if (!kernel_name.empty()) {
    if (!r.fits(name_at, kernel_name.size()) ||
        std::memcmp(blob.data() + name_at, kernel_name.data(), kernel_name.size()) != 0)
      r.bad("kernel name", name_at, ("does not match the expected name '" + std::string(kernel_name) + "'").c_str());
    p.name = kernel_name;
  } else {
    std::uint64_t end = name_at;
    while (end < blob.size() && blob[end] != std::byte{0}) ++end;
    if (end == blob.size()) r.bad("kernel name", name_at, "is not NUL-terminated");
    p.name.assign(reinterpret_cast<const char*>(blob.data()) + name_at, end - name_at);
    // An unterminated 4k-byte name runs into the low byte of the first record's length; that byte
    // (a length >= 32) is not an identifier character unless the length happens to be one.
    auto ident = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    };
    if (p.name.size() % 4 == 1 && !ident(p.name.back())) p.name.pop_back();
  }

  // Argument records, in parameter order, after the (4-aligned) name and the sampler words.
  std::uint64_t off = ((name_at + p.name.size() + 3) & ~std::uint64_t{3}) + 8ull * p.samplers;
  while (r.fits(off, L::arg_record_min)) {
    const std::uint32_t length = r.u32(off, "argument record length");
    if (length == 0) break;
    if (length < L::arg_record_min)
      r.bad("argument record", off, ("has length " + std::to_string(length) + " (< 32)").c_str());
    const std::uint32_t offset_words = r.u32(off + 12, "argument record offset");
    const std::uint32_t type = r.u32(off + 28, "argument record type");
    if (type > 2) r.bad("argument record type", off + 28, ("is " + std::to_string(type) + " (not 0, 1 or 2)").c_str());
    program_arg a{static_cast<arg_kind>(type), offset_words * 4};
    // A value argument holds up to 8 bytes and must stay below the descriptor tables.
    if (a.kind == arg_kind::value && (offset_words > L::descriptor_tables / 4 || a.const_offset + 8 > L::descriptor_tables))
      r.bad("argument record offset", off + 12,
            ("places argument " + std::to_string(p.args.size()) + " at constant byte " +
             std::to_string(std::uint64_t{offset_words} * 4) + ", beyond the 2048-byte argument area")
                .c_str());
    p.args.push_back(a);
    off += length;
  }

  // Immediate constants, 40-byte records between the CONSTS section and the machine code.
  if (r.u32(L::consts_size, "immediate constants size (section 6)") != 0) {
    std::uint64_t rec = r.u32(L::consts_offset, "immediate constants offset (section 6)");
    while (rec + L::imm_record <= p.image_offset) {
      const std::uint32_t value = r.u32(rec, "immediate value");
      const std::uint32_t units = r.u32(rec + 16, "immediate offset");
      const std::uint32_t size = r.u32(rec + 24, "immediate width") == 0 ? 2 : 4;
      const std::uint64_t at = std::uint64_t{units} * size;
      if (at + size > L::descriptor_tables)
        r.bad("immediate offset", rec + 16, ("places a constant at byte " + std::to_string(at) + ", beyond 2048").c_str());
      p.immediates.push_back({value, static_cast<std::uint32_t>(at), size});
      rec += L::imm_record;
    }
  }
  return p;
}

inline program_info parse_program(std::span<const std::uint8_t> blob, std::string_view kernel_name = {}) {
  return parse_program(std::as_bytes(blob), kernel_name);
}

}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_PROGRAM_HPP
// ---- end uopcg/runtime/kgsl/program.hpp ----
// ---- begin uopcg/runtime/kgsl/dispatch.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_DISPATCH_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_DISPATCH_HPP
// A6xx compute dispatch: per-program derived values (tinygrad/runtime/ops_qcom.py, QCOMProgram), the kernel-argument block
// (§11, image descriptors §9.5) and the PM4 sequence of one launch (§9.1, §9.2). Pure functions over
// caller-provided memory: no syscalls, so tests check the exact dwords without a driver.

#include <algorithm>
#include <bit>
#include <type_traits>


namespace uopcg::kgsl {

struct dims3 {
  std::uint32_t x = 1, y = 1, z = 1;
  constexpr std::uint32_t operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
  constexpr bool operator==(const dims3&) const = default;
};

/// A launch size: `global` counts work-items per dimension (OpenCL's global size), `local` the
/// work-group size. uopcg/tinygrad programs carry the number of work-groups; use from_groups().
struct launch_dims {
  dims3 global;
  dims3 local;
  static constexpr launch_dims from_groups(dims3 groups, dims3 local) {
    return {{groups.x * local.x, groups.y * local.y, groups.z * local.z}, local};
  }
};

/// How the dispatch is kicked off. CP_RUN_OPENCL is what Qualcomm's own CL driver emits for its
/// compiler's kernels (and what tinygrad runs on A630); CP_EXEC_CS is freedreno's compute kick,
/// which takes the group counts in the packet. Both read the same SP_CS_* state.
enum class kick_packet : std::uint8_t { run_opencl, exec_cs };

/// Encoding of the two register fields where tinygrad and freedreno disagree (docs/kgsl.md).
/// freedreno's register database (a6xx.xml) declares SP_CS_CONST_CONFIG.CONSTLEN as vec4 >> 2 and
/// SP_CS_PVT_MEM_STACK_OFFSET as bytes >> 11; tinygrad writes the raw numbers, which overflows
/// CONSTLEN (256 in an 8-bit field leaves only the ENABLED bit). The register database is the
/// documented hardware contract, so it is the default; `tinygrad` reproduces the dwords tinygrad
/// sends, for side-by-side debugging on a device. SP_CS_PVT_MEM_SIZE is the same in both: tinygrad's
/// memsizeperitem * 128 * 2 already is the per-SP bytes >> 12 that the database asks for.
enum class register_encoding : std::uint8_t { freedreno, tinygrad };

struct dispatch_options {
  kick_packet kick = kick_packet::run_opencl;
  register_encoding encoding = register_encoding::freedreno;
  /// Preload at most the instruction cache (program_layout::preload_units), as turnip does. false
  /// preloads the whole shader, as tinygrad does: only for comparing streams with tinygrad's, since
  /// a shader larger than the cache may then hang the GPU.
  bool cap_preload = true;
};

/// Values derived from a parsed program and the chip (§9.6) and the layout of its kernel-argument
/// block (§11).
struct program_layout {
  std::uint32_t instr_units = 0;      // ceil(image_size / 128): SP_CS_INSTR_SIZE
  std::uint32_t preload_units = 0;    // shader units the CP_LOAD_STATE6 preloads (the rest is fetched on demand)
  std::uint32_t memsizeperitem = 0;   // SP_CS_PVT_MEM_PARAM: private bytes per fiber >> 9
  std::uint32_t totalpvtmemsize = 0;  // SP_CS_PVT_MEM_SIZE: private bytes per shader processor >> 12
  std::uint32_t hw_stack_offset = 0;  // bytes
  std::uint32_t stack_bytes = 0;      // private stack buffer the launch needs (4 * hw_stack_offset)
  std::uint32_t shared_size = 0;      // SP_CS_CNTL_1.SHARED_SIZE
  std::uint32_t max_threads = 0;      // largest work-group the register footprint allows
  std::uint32_t ntex = 0, nibo = 0;
  std::uint32_t sampler_slots = 0;    // 2 when the kernel samples (the real one plus a zero sampler)
  std::uint32_t ibo_off = 2048, tex_off = 2048, samp_off = 2048;  // byte offsets in the block
  std::uint32_t kernarg_size = 0;     // bytes of the block (the constant load itself reads 4096)
  std::uint32_t cs_cntl_0 = 0, cs_cntl_1 = 0;
};

inline constexpr std::uint32_t constant_file_bytes = 4096;  // 256 vec4 loaded from the kernarg block
inline constexpr std::uint32_t max_shader_units = 0x3FF;    // larger shaders are refused: NUM_UNIT's range, never run beyond

constexpr std::uint32_t round_up(std::uint32_t v, std::uint32_t a) { return (v + a - 1) / a * a; }

// The largest private stack layout_of computes (four 128 KiB-per-fiber shares) fits its 32-bit sizes
// on every chip of the table.
static_assert([] {
  for (const chip_traits& c : known_chips)
    if (4ull * 0x20000 * c.fibers_per_sp > 0xFFFFFFFFull) return false;
  return true;
}());

/// The §9.6 values of program `p` on chip `c`. Private memory follows freedreno's layout: each fiber
/// gets round_up(pvtmem, 512) bytes and each shader processor all its fibers' shares, in 4 KiB units;
/// on A630 that is tinygrad's memsizeperitem * 128 * 2. The shader preload stops at the instruction
/// cache, as turnip's and freedreno's compute paths do (the hardware fetches the rest on demand).
inline program_layout layout_of(const program_info& p, const chip_traits& c) {
  program_layout l;
  if (p.image.empty()) fail_runtime("KGSL program '" + p.name + "' has no machine code");
  l.instr_units = (p.image_size() + 127) / 128;
  if (l.instr_units > max_shader_units)
    fail_runtime("KGSL program '" + p.name + "' has " + std::to_string(p.image_size()) +
                 " bytes of machine code; at most 130944 (1023 units of 128 bytes) are supported");
  l.preload_units = std::min(l.instr_units, c.instr_cache_units);
  if (p.pvtmem > 0x20000 || round_up(p.pvtmem, 512) >> 9 > 0xFF)
    fail_runtime("KGSL program '" + p.name + "' needs " + std::to_string(p.pvtmem) +
                 " bytes of private memory per item; the A6xx limit encodable here is 127.5 KiB");
  const std::uint32_t per_fiber = round_up(p.pvtmem, 512);
  l.memsizeperitem = per_fiber >> 9;
  l.totalpvtmemsize = round_up(per_fiber * c.fibers_per_sp, 4096) >> 12;
  // tinygrad's hw_stack_offset: a power-of-two share per fiber (1 byte when there is no private memory).
  const std::uint32_t pow2 = std::bit_ceil(std::max<std::uint32_t>(per_fiber, 1));
  l.hw_stack_offset = round_up(pow2 * c.fibers_per_sp, 4096);
  l.stack_bytes = 4 * l.hw_stack_offset;
  l.shared_size = p.shmem == 0 ? 1 : std::max<std::uint32_t>(1, (p.shmem - 1) / 1024);
  // 12288 = A630's register file (96 vec4, shared by all chips in chip.hpp's table) * 128.
  const std::uint32_t regs = std::max<std::uint32_t>(1, p.fregs + round_up(p.hregs, 2) / 2);
  l.max_threads = std::min<std::uint32_t>(1024, (12288 / (regs * 128)) * 128);
  l.ntex = p.ntex();
  l.nibo = p.nibo();
  if (l.ntex > 16) fail_runtime("KGSL program '" + p.name + "' reads " + std::to_string(l.ntex) + " images; at most 16 are supported");
  if (l.nibo > 32) fail_runtime("KGSL program '" + p.name + "' writes " + std::to_string(l.nibo) + " images; at most 32 are supported");
  l.sampler_slots = p.samplers ? 2 : 0;
  l.ibo_off = 2048;
  l.tex_off = 2048 + 64 * l.nibo;
  l.samp_off = 2048 + 64 * (l.nibo + l.ntex);
  l.kernarg_size = round_up(2048 + 64 * (l.ntex + l.nibo) + 4 * 4 * l.sampler_slots, 256);
  l.cs_cntl_0 = (p.hregs << 1) | (p.fregs << 7) | (p.branchstack << 14);  // THREAD64, no merged regs
  l.cs_cntl_1 = l.shared_size | (2u << 5);                                 // CONSTANTRAMMODE = 256 vec4
  return l;
}

// --- kernel arguments ----------------------------------------------------------------------------

enum class image_format : std::uint32_t { rgba_f32 = 130, rgba_f16 = 98 };  // FMT6_32_32_32_32_FLOAT, FMT6_16_16_16_16_FLOAT

/// A 2D RGBA image in GPU memory; pitch = width * 4 * element size, a multiple of 64 bytes.
struct image_view {
  std::uint64_t address = 0;
  std::uint32_t width = 0, height = 0;
  image_format format = image_format::rgba_f32;
};

/// One kernel argument, in the order of the program's parameters.
struct kernel_arg {
  enum class kind : std::uint8_t { buffer, scalar, image } k = kind::buffer;
  std::uint8_t size = 8;     // scalar width in bytes
  std::uint64_t bits = 0;    // buffer GPU address, or the scalar's bytes (little-endian)
  image_view img{};
};

constexpr kernel_arg buffer_arg(std::uint64_t gpu_address) { return {kernel_arg::kind::buffer, 8, gpu_address, {}}; }
template <class T>
  requires(std::is_arithmetic_v<T> && sizeof(T) <= 8)
constexpr kernel_arg scalar_arg(T v) {
  using U = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                               std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
  return {kernel_arg::kind::scalar, static_cast<std::uint8_t>(sizeof(T)), static_cast<std::uint64_t>(std::bit_cast<U>(v)), {}};
}
constexpr kernel_arg image_arg(image_view v) { return {kernel_arg::kind::image, 0, 0, v}; }

/// The 16-dword texture (read) or IBO (write) descriptor of an image (§9.5).
inline std::array<std::uint32_t, 16> image_descriptor(const image_view& v, bool writable) {
  const std::uint32_t elem = v.format == image_format::rgba_f32 ? 4 : 2;
  const std::uint64_t pitch = std::uint64_t{v.width} * 4 * elem;
  if (v.width == 0 || v.height == 0 || v.width > 0x7FFF || v.height > 0x7FFF)
    fail_runtime("KGSL image argument: size " + std::to_string(v.width) + "x" + std::to_string(v.height) +
                 " is outside 1..32767");
  if (pitch % 64 != 0)
    fail_runtime("KGSL image argument: row pitch " + std::to_string(pitch) + " bytes is not a multiple of 64");
  const auto fmt = static_cast<std::uint32_t>(v.format);
  std::array<std::uint32_t, 16> d{};
  d[0] = writable ? fmt << 22 : (0x00006888u | fmt << 22);  // swizzle xyzw for textures
  d[1] = v.width | v.height << 15;
  d[2] = (1u << 29) | static_cast<std::uint32_t>(pitch << 7) | static_cast<std::uint32_t>(std::countr_zero(pitch) - 6);
  d[4] = pm4::lo(v.address);
  d[5] = pm4::hi(v.address);
  d[6] = 0x40000000;
  d[7] = 13;
  return d;
}
/// Clamp-to-border, unnormalized coordinates, no seamless-cube filtering.
inline constexpr std::array<std::uint32_t, 4> sampler_words{0x1B60, 0x30, 0, 0};

/// Where argument i goes in the kernarg block, precomputed so a batch can patch one argument fast.
struct arg_slot {
  arg_kind kind;
  std::uint32_t offset;  // byte offset of the value or of the 64-byte descriptor
};

inline std::vector<arg_slot> arg_slots(const program_info& p, const program_layout& l) {
  std::vector<arg_slot> s;
  std::uint32_t ntex = 0, nibo = 0;
  for (const auto& a : p.args) {
    if (a.kind == arg_kind::value) s.push_back({a.kind, a.const_offset});
    else if (a.kind == arg_kind::texture) s.push_back({a.kind, l.tex_off + 64 * ntex++});
    else s.push_back({a.kind, l.ibo_off + 64 * nibo++});
  }
  return s;
}

namespace detail {
inline const char* kind_name(kernel_arg::kind k) {
  return k == kernel_arg::kind::buffer ? "buffer" : k == kernel_arg::kind::scalar ? "scalar" : "image";
}
inline const char* kind_name(arg_kind k) {
  return k == arg_kind::value ? "buffer/scalar" : k == arg_kind::texture ? "read-only image" : "writable image";
}
}  // namespace detail

/// Writes one argument into a kernarg block (checks that it fits the parameter's kind).
inline void write_arg(std::byte* block, const program_info& p, const arg_slot& slot, std::size_t index,
                      const kernel_arg& a) {
  const bool is_image = a.k == kernel_arg::kind::image;
  if (is_image != (slot.kind != arg_kind::value))
    fail_runtime("KGSL kernel '" + p.name + "': argument " + std::to_string(index) + " is a " +
                 detail::kind_name(a.k) + " but the parameter is a " + detail::kind_name(slot.kind));
  if (is_image) {
    const auto d = image_descriptor(a.img, slot.kind == arg_kind::image);
    std::memcpy(block + slot.offset, d.data(), sizeof d);
  } else {
    if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
      fail_runtime("KGSL kernel '" + p.name + "': argument " + std::to_string(index) + " has width " +
                   std::to_string(a.size));
    // Little-endian store of the low `size` bytes (the constant file is little-endian, as is arm64).
    std::memcpy(block + slot.offset, &a.bits, a.size);
  }
}

/// Fills a whole kernarg block: zeroes, immediates, sampler words, then every argument (§11).
inline void fill_kernargs(std::byte* block, const program_info& p, const program_layout& l,
                          std::span<const arg_slot> slots, std::span<const kernel_arg> args) {
  if (args.size() != slots.size())
    fail_runtime("KGSL kernel '" + p.name + "' takes " + std::to_string(slots.size()) + " arguments, " +
                 std::to_string(args.size()) + " given");
  std::memset(block, 0, l.kernarg_size);
  for (const auto& im : p.immediates) {
    if (im.size == 4) std::memcpy(block + im.const_offset, &im.value, 4);
    else {
      const auto h = static_cast<std::uint16_t>(im.value);
      std::memcpy(block + im.const_offset, &h, 2);
    }
  }
  if (l.sampler_slots) std::memcpy(block + l.samp_off, sampler_words.data(), sizeof sampler_words);
  for (std::size_t i = 0; i < args.size(); ++i) write_arg(block, p, slots[i], i, args[i]);
}

// --- geometry ------------------------------------------------------------------------------------

struct geometry_regs {
  std::uint32_t ndrange0;
  std::array<std::uint32_t, 3> global;  // GLOBALSIZE_X/Y/Z
  std::array<std::uint32_t, 3> groups;  // SP_CS_KERNEL_GROUP_X/Y/Z
};

/// Checks a launch size against the program (refusals of §9.6) and computes the register values.
inline geometry_regs geometry_of(const program_info& p, const program_layout& l, const launch_dims& d) {
  geometry_regs g{};
  std::uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    const std::uint32_t loc = d.local[i], glob = d.global[i];
    if (loc == 0 || loc > 1024)
      fail_runtime("KGSL launch of '" + p.name + "': local size " + std::to_string(loc) + " in dimension " +
                   std::to_string(i) + " is outside 1..1024");
    if (glob == 0)
      fail_runtime("KGSL launch of '" + p.name + "': global size is 0 in dimension " + std::to_string(i));
    threads *= loc;
    g.global[static_cast<std::size_t>(i)] = glob;
    g.groups[static_cast<std::size_t>(i)] = glob / loc + (glob % loc != 0);
  }
  if (threads > l.max_threads)
    fail_runtime("KGSL launch of '" + p.name + "': too many resources: a work-group of " + std::to_string(threads) +
                 " threads exceeds the " + std::to_string(l.max_threads) + " this kernel's " +
                 std::to_string(p.fregs) + " full / " + std::to_string(p.hregs) + " half registers allow");
  g.ndrange0 = 3u | (d.local.x - 1) << 2 | (d.local.y - 1) << 12 | (d.local.z - 1) << 22;
  return g;
}

// --- the launch stream ---------------------------------------------------------------------------

/// GPU addresses one dispatch refers to.
struct dispatch_addrs {
  std::uint64_t kernargs = 0;      // K: the kernarg block (4096 bytes readable)
  std::uint64_t shader = 0;        // S: machine code
  std::uint64_t stack = 0;         // P: private stack
  std::uint64_t border_color = 0;  // only read when the program samples
};

/// Dword indices (into the stream) of the fields a batch patches in place.
struct dispatch_patch {
  std::size_t ndrange = 0;  // 12-dword burst at SP_CS_NDRANGE_0
  std::size_t cs_cntl = 0;  // 10-dword burst at SP_CS_CNTL_0 (private stack address at +7, +8)
  std::size_t exec_cs = 0;  // CP_EXEC_CS payload (0 when the kick is CP_RUN_OPENCL)
};

inline constexpr std::size_t wait_dwords = 7;
inline constexpr std::size_t barrier_dwords = 5 + 2 + 1 + 1;
inline constexpr std::size_t signal_dwords = 1 + 5 + 5;
/// Upper bound of one dispatch body (samplers, textures and IBOs all present, CP_EXEC_CS kick).
inline constexpr std::size_t max_dispatch_dwords =
    2 + 2 * 2 + 6 * 2 + 1 + 13 + 11 + 4 + 4 + 6 + 2 + 2 + (4 + 3 + 3) + (4 + 3) + (4 + 3) + 2 + 5 + 5;
/// Upper bound of a single-launch IB.
inline constexpr std::size_t max_launch_dwords = wait_dwords + barrier_dwords + max_dispatch_dwords + signal_dwords;

/// §9.1 step 1: wait until the timeline signal reached the previous launch's value. Returns the
/// index of the reference dword.
inline std::size_t emit_wait(pm4::writer& w, std::uint64_t signal, std::uint32_t previous) {
  return w.op(pm4::CP_WAIT_REG_MEM, {pm4::WAIT_REG_MEM_GE_MEMORY, pm4::lo(signal), pm4::hi(signal), previous,
                                     0xFFFFFFFFu, pm4::WAIT_REG_MEM_POLL_CYCLES}) + 3;
}

/// §9.1 step 2: make earlier writes visible and drop stale cache lines before the next dispatch.
inline void emit_barrier(pm4::writer& w, std::uint64_t dummy) {
  w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_FLUSH_TS, pm4::lo(dummy), pm4::hi(dummy), 0});
  w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_INVALIDATE});
  w.op(pm4::CP_WAIT_MEM_WRITES);
  w.op(pm4::CP_WAIT_FOR_IDLE);
}

/// §9.1 step 6: after the work is idle, flush and write `value` to the signal. Returns the index of
/// the value dword.
inline std::size_t emit_signal(pm4::writer& w, std::uint64_t signal, std::uint64_t dummy, std::uint32_t value) {
  w.op(pm4::CP_WAIT_FOR_IDLE);
  const std::size_t at = w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_FLUSH_TS, pm4::lo(signal), pm4::hi(signal), value}) + 3;
  w.op(pm4::CP_EVENT_WRITE, {pm4::CACHE_FLUSH_TS, pm4::lo(dummy), pm4::hi(dummy), 0});
  return at;
}

/// §9.2: the dispatch body, ending with the flush of the results.
inline dispatch_patch emit_dispatch(pm4::writer& w, const program_info& p, const program_layout& l,
                                    const dispatch_addrs& a, const geometry_regs& g, std::uint64_t dummy,
                                    const dispatch_options& o = {}) {
  using namespace pm4;
  const bool fd = o.encoding == register_encoding::freedreno;
  dispatch_patch patch;
  w.op(CP_SET_MARKER, {RM6_COMPUTE});
  w.reg(reg::SP_UPDATE_CNTL, {0x60});  // invalidate cached CS state and CS UAVs
  w.reg(reg::SP_UPDATE_CNTL, {0});
  w.reg(reg::SP_CS_TSIZE, {0x80});
  w.reg(reg::SP_CS_USIZE, {0x40});
  w.reg(reg::SP_MODE_CNTL, {0x2});       // ISAMMODE = CL
  w.reg(reg::SP_PERFCTR_SHADER_MASK, {0x20});
  w.reg(reg::TPL1_MODE_CNTL, {0x1});     // ISAMMODE = CL
  w.reg(reg::TPL1_DBG_ECO_CNTL, {0});
  w.op(CP_WAIT_FOR_IDLE);
  patch.ndrange = w.reg(reg::SP_CS_NDRANGE_0, {g.ndrange0, g.global[0], 0, g.global[1], 0, g.global[2], 0,
                                               0x00CCC0CF, 0xFC, g.groups[0], g.groups[1], g.groups[2]});
  patch.cs_cntl = w.reg(reg::SP_CS_CNTL_0, {l.cs_cntl_0, l.cs_cntl_1, 0, p.entry_offset, lo(a.shader), hi(a.shader),
                            l.memsizeperitem, lo(a.stack), hi(a.stack), l.totalpvtmemsize});
  w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::constants, state_src::indirect, SB6_CS_SHADER,
                                              constant_file_bytes / 16),
                             lo(a.kernargs), hi(a.kernargs)});
  w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::shader, state_src::indirect, SB6_CS_SHADER,
                                              o.cap_preload ? l.preload_units : l.instr_units),
                             lo(a.shader), hi(a.shader)});
  // SP_REG_PROG_ID_0..3 unused for compute; SP_CS_CONST_CONFIG = ENABLED | CONSTLEN(256 vec4).
  const std::uint32_t const_config = fd ? 0x100u | (256u >> 2) : 0x100u;
  w.reg(reg::SP_REG_PROG_ID_0, {0xFCFCFCFC, 0xFCFCFCFC, 0xFCFCFCFC, 0xFC, const_config});
  w.reg(reg::SP_CS_PVT_MEM_STACK_OFFSET, {fd ? l.hw_stack_offset >> 11 : l.hw_stack_offset});
  w.reg(reg::SP_CS_INSTR_SIZE, {l.instr_units});
  if (l.sampler_slots) {
    const std::uint64_t s = a.kernargs + l.samp_off;
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::shader, state_src::indirect, SB6_CS_TEX, l.sampler_slots),
                               lo(s), hi(s)});
    w.reg64(reg::SP_CS_SAMPLER_BASE, s);
    w.reg64(reg::TPL1_CS_BORDER_COLOR_BASE, a.border_color);
  }
  if (l.ntex) {
    const std::uint64_t t = a.kernargs + l.tex_off;
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::constants, state_src::indirect, SB6_CS_TEX, l.ntex),
                               lo(t), hi(t)});
    w.reg64(reg::SP_CS_TEXMEMOBJ_BASE, t);
  }
  if (l.nibo) {
    const std::uint64_t u = a.kernargs + l.ibo_off;
    w.op(CP_LOAD_STATE6_FRAG, {load_state6_ctrl(state_type::uav, state_src::indirect, SB6_CS_SHADER, l.nibo),
                               lo(u), hi(u)});
    w.reg64(reg::SP_CS_UAV_BASE, u);
  }
  w.reg(reg::SP_CS_CONFIG, {0x100u | l.ntex << 9 | l.sampler_slots << 17 | l.nibo << 22});
  if (o.kick == kick_packet::exec_cs)
    patch.exec_cs = w.op(CP_EXEC_CS, {0, g.groups[0], g.groups[1], g.groups[2]});
  else
    w.op(CP_RUN_OPENCL, {0});
  w.op(CP_EVENT_WRITE, {CACHE_FLUSH_TS, lo(dummy), hi(dummy), 0});
  return patch;
}

/// Rewrites the launch size of an already emitted dispatch in place.
inline void patch_geometry(std::uint32_t* ib, const dispatch_patch& at, const geometry_regs& g) {
  std::uint32_t* n = ib + at.ndrange;
  n[0] = g.ndrange0;
  n[1] = g.global[0];
  n[3] = g.global[1];
  n[5] = g.global[2];
  n[9] = g.groups[0];
  n[10] = g.groups[1];
  n[11] = g.groups[2];
  if (at.exec_cs) {
    ib[at.exec_cs + 1] = g.groups[0];
    ib[at.exec_cs + 2] = g.groups[1];
    ib[at.exec_cs + 3] = g.groups[2];
  }
}

}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_DISPATCH_HPP
// ---- end uopcg/runtime/kgsl/dispatch.hpp ----
// ---- begin uopcg/runtime/kgsl/device.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_DEVICE_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_DEVICE_HPP
// RAII objects over the KGSL driver: the device (open + GETPROPERTY), draw contexts
// (DRAWCTXT_CREATE/DESTROY, power constraint), GPU memory (GPUOBJ_ALLOC/FREE/INFO/SYNC + mmap) and
// submission/wait primitives (GPU_COMMAND, WAITTIMESTAMP_CTXTID, READTIMESTAMP_CTXTID).
//
// Every syscall goes through the policy `Sys` (see sys.hpp). Objects share the device's file
// descriptor through a reference-counted state, so a buffer or context may outlive the device
// object that created it; the descriptor closes when the last of them is gone.
// Not thread-safe: use one device (and everything made from it) from one thread at a time.

#include <memory>
#include <optional>
#include <utility>


namespace uopcg::kgsl {

inline constexpr const char* default_device_path = "/dev/kgsl-3d0";

struct device_options {
  const char* path = default_device_path;
  bool check_chip = true;  // refuse chips missing from chip.hpp's table at open (off: only to inspect properties)
};

/// Options of a draw context. The defaults are tinygrad's flags (0x04008A12); tinygrad/runtime/ops_qcom.py, QCOMDevice.
struct context_options {
  std::uint32_t priority = 8;    // 0 (most urgent) .. 15
  bool power_constraint = true;  // keep the GPU at its top clock while this context submits
  bool fault_tolerance = false;  // false: NO_FAULT_TOLERANCE (no replay, no long-IB watchdog)
  std::uint32_t extra_flags = 0; // OR-ed in as is (e.g. KGSL_CONTEXT_NO_SNAPSHOT)

  constexpr std::uint32_t flags() const {
    using namespace abi;
    std::uint32_t f = KGSL_CONTEXT_PREAMBLE | KGSL_CONTEXT_NO_GMEM_ALLOC | context_priority(priority) |
                      context_preempt_style(KGSL_CONTEXT_PREEMPT_STYLE_FINEGRAIN) | extra_flags;
    if (power_constraint) f |= KGSL_CONTEXT_PWR_CONSTRAINT;
    if (!fault_tolerance) f |= KGSL_CONTEXT_NO_FAULT_TOLERANCE;
    return f;
  }
};
static_assert(context_options{}.flags() == abi::tinygrad_context_flags);

enum class cache_mode : std::uint8_t { write_combine = 0, uncached = 1, write_through = 2, write_back = 3 };

struct alloc_options {
  cache_mode cache = cache_mode::write_combine;
  bool io_coherent = false;    // with write_back: the GPU snoops CPU caches (where supported)
  bool gpu_read_only = false;
  bool cpu_map = true;         // USE_CPU_MAP: the CPU pointer is the GPU address
  std::uint32_t memtype = 0;   // debug usage tag (KGSL_MEMTYPE_*)
  std::string_view label{};    // debug label (<= 64 bytes), visible in the driver's debugfs

  constexpr std::uint64_t flags() const {
    using namespace abi;
    std::uint64_t f = memalign(12) | cachemode(static_cast<std::uint64_t>(cache)) |
                      ((std::uint64_t{memtype} << KGSL_MEMTYPE_SHIFT) & KGSL_MEMTYPE_MASK);
    if (cpu_map) f |= KGSL_MEMFLAGS_USE_CPU_MAP;
    if (gpu_read_only) f |= KGSL_MEMFLAGS_GPUREADONLY;
    if (io_coherent) f |= KGSL_MEMFLAGS_IOCOHERENT;
    return f;
  }
};
static_assert(alloc_options{}.flags() == abi::tinygrad_alloc_flags);

/// Wrap-aware timestamp order: is `a` at or after `b`?
constexpr bool timestamp_reached(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }

namespace detail {

/// What a queue tells the device about its outstanding work, so buffers can defer their free.
struct work_tracker {
  std::uint32_t context_id = 0;
  const std::uint32_t* signal = nullptr;  // GPU-written timeline value
  std::uint32_t submitted_value = 0;      // last value a submission will write
  std::uint32_t last_timestamp = 0;       // its KGSL timestamp
  bool lost = false;                      // context invalidated: nothing will retire
  bool pending() const {
    return !lost && signal && __atomic_load_n(signal, __ATOMIC_ACQUIRE) < submitted_value;
  }
};

template <class Sys>
struct device_state {
  Sys* sys = nullptr;
  int fd = -1;
  std::uint64_t page_size = 4096;
  abi::kgsl_devinfo info{};
  std::vector<work_tracker*> trackers;

  device_state() = default;
  device_state(const device_state&) = delete;
  device_state& operator=(const device_state&) = delete;
  ~device_state() {
    if (fd >= 0) sys->close(fd);
  }

  /// The timestamp event a buffer free must wait for, if any queue still has work in flight.
  /// With work pending on several contexts, all but the newest are waited for here (a free can
  /// carry one event only).
  std::optional<abi::kgsl_gpu_event_timestamp> pending_event() noexcept {
    work_tracker* last = nullptr;
    for (work_tracker* t : trackers) {
      if (!t->pending()) continue;
      if (last) {
        abi::kgsl_device_waittimestamp_ctxtid w{last->context_id, last->last_timestamp, 10000};
        (void)ioctl_errno(*sys, fd, abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, &w);
      }
      last = t;
    }
    if (!last) return std::nullopt;
    return abi::kgsl_gpu_event_timestamp{last->context_id, last->last_timestamp};
  }
};

}  // namespace detail

template <class Sys>
class basic_device;

/// A GPU memory object (GPUOBJ_ALLOC) mapped into this process. Move-only; unmapped and freed on
/// destruction, deferred to the retirement of in-flight work when some queue still has any.
template <class Sys = real_sys>
class basic_buffer {
 public:
  basic_buffer() = default;
  basic_buffer(basic_buffer&& o) noexcept { swap(o); }
  basic_buffer& operator=(basic_buffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  ~basic_buffer() { release(); }

  explicit operator bool() const { return state_ != nullptr; }
  void* data() const { return cpu_; }
  std::byte* bytes() const { return static_cast<std::byte*>(cpu_); }
  std::uint64_t gpu_address() const { return gpu_; }
  std::uint64_t size() const { return size_; }          // page-rounded size the driver allocated
  std::uint64_t mmap_size() const { return mmapsize_; }
  std::uint32_t id() const { return id_; }
  std::uint64_t flags() const { return flags_; }        // effective flags echoed by the driver
  /// True until this buffer is freed (destroyed or assigned over); shared with whoever keeps the
  /// buffer's address beyond a call, such as a captured graph, so a freed buffer is noticed.
  std::shared_ptr<const bool> liveness() const { return alive_; }

  /// Whether CPU writes need an explicit clean (and GPU writes an invalidate) to be coherent.
  bool needs_cache_maintenance() const {
    const auto mode = (flags_ & abi::KGSL_CACHEMODE_MASK) >> abi::KGSL_CACHEMODE_SHIFT;
    return mode == abi::KGSL_CACHEMODE_WRITEBACK && !(flags_ & abi::KGSL_MEMFLAGS_IOCOHERENT);
  }
  /// GPUOBJ_SYNC over [offset, offset+length) with KGSL_GPUMEM_CACHE_CLEAN / _INV / _FLUSH.
  void sync(std::uint32_t op, std::uint64_t offset = 0, std::uint64_t length = ~0ull) {
    if (length == ~0ull) length = size_ - offset;
    abi::kgsl_gpuobj_sync_obj obj{offset, length, id_, op};
    abi::kgsl_gpuobj_sync s{reinterpret_cast<std::uint64_t>(&obj), sizeof obj, 1};
    detail::ioctl_or_fail(*state_->sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_SYNC, &s);
  }
  /// Before the GPU reads what the CPU wrote (no-op for write-combined/coherent memory).
  void flush_for_gpu() {
    if (needs_cache_maintenance()) sync(abi::KGSL_GPUMEM_CACHE_CLEAN);
  }
  /// Before the CPU reads what the GPU wrote (no-op for write-combined/coherent memory).
  void invalidate_for_cpu() {
    if (needs_cache_maintenance()) sync(abi::KGSL_GPUMEM_CACHE_INV);
  }
  /// GPUOBJ_INFO: the driver's view of this object.
  abi::kgsl_gpuobj_info info() const {
    abi::kgsl_gpuobj_info i{};
    i.id = id_;
    detail::ioctl_or_fail(*state_->sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_INFO, &i);
    return i;
  }

 private:
  friend class basic_device<Sys>;
  void swap(basic_buffer& o) noexcept {
    std::swap(state_, o.state_);
    std::swap(cpu_, o.cpu_);
    std::swap(gpu_, o.gpu_);
    std::swap(size_, o.size_);
    std::swap(mmapsize_, o.mmapsize_);
    std::swap(flags_, o.flags_);
    std::swap(id_, o.id_);
    std::swap(alive_, o.alive_);
  }
  void release() noexcept {
    if (!state_) return;
    Sys& sys = *state_->sys;
    abi::kgsl_gpuobj_free f{};
    f.id = id_;
    const auto event = state_->pending_event();
    if (event) {
      f.flags = abi::KGSL_GPUOBJ_FREE_ON_EVENT;
      f.priv = reinterpret_cast<std::uint64_t>(&*event);
      f.type = abi::KGSL_GPU_EVENT_TIMESTAMP;
      f.len = sizeof *event;
    }
    // Failures cannot be reported from a destructor; closing the fd reclaims the object anyway.
    (void)detail::ioctl_errno(sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_FREE, &f);
    if (cpu_) sys.munmap(cpu_, mmapsize_);
    state_.reset();
    cpu_ = nullptr;
    if (alive_) *alive_ = false;
    alive_.reset();
  }

  std::shared_ptr<detail::device_state<Sys>> state_;
  std::shared_ptr<bool> alive_;
  void* cpu_ = nullptr;
  std::uint64_t gpu_ = 0, size_ = 0, mmapsize_ = 0, flags_ = 0;
  std::uint32_t id_ = 0;
};

/// Result of a GPU_COMMAND: err 0, or EPROTO with a recovered timestamp (the command was queued but
/// the context had faulted before), or another errno (nothing queued).
struct submit_result {
  int err = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t reset_status = abi::KGSL_CTX_STAT_NO_ERROR;  // from GPU_RESET_STAT after EPROTO
};

/// A KGSL draw context (DRAWCTXT_CREATE). Move-only; destroyed on destruction.
template <class Sys = real_sys>
class basic_context {
 public:
  basic_context() = default;
  basic_context(basic_context&& o) noexcept
      : state_(std::move(o.state_)), id_(std::exchange(o.id_, 0)), flags_(o.flags_) {}
  basic_context& operator=(basic_context&& o) noexcept {
    if (this != &o) {
      destroy();
      state_ = std::move(o.state_);
      id_ = std::exchange(o.id_, 0);
      flags_ = o.flags_;
    }
    return *this;
  }
  ~basic_context() { destroy(); }

  std::uint32_t id() const { return id_; }
  std::uint32_t flags() const { return flags_; }  // as applied by the driver
  explicit operator bool() const { return state_ != nullptr; }

  /// IOCTL_KGSL_GPU_COMMAND over the given IBs. Never throws; see submit_result.
  submit_result submit(const abi::kgsl_command_object* cmds, std::uint32_t count) noexcept {
    abi::kgsl_gpu_command c{};
    c.cmdlist = reinterpret_cast<std::uint64_t>(cmds);
    c.cmdsize = sizeof(abi::kgsl_command_object);
    c.numcmds = count;
    c.context_id = id_;
    submit_result r;
    r.err = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_GPU_COMMAND, &c);
    if (r.err == 0) {
      r.timestamp = c.timestamp;
    } else if (r.err == EPROTO) {
      // Queued, but the driver did not copy the timestamp back (the driver's kgsl.c): recover it.
      abi::kgsl_cmdstream_readtimestamp_ctxtid t{id_, abi::KGSL_TIMESTAMP_QUEUED, 0};
      if (detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID, &t) == 0)
        r.timestamp = t.timestamp;
      r.reset_status = reset_status_nothrow();
    }
    return r;
  }
  /// WAITTIMESTAMP_CTXTID; returns 0 or the errno (EINTR/EAGAIN are returned, not retried, so the
  /// caller can recompute its remaining timeout).
  int wait_timestamp(std::uint32_t timestamp, std::uint32_t timeout_ms) noexcept {
    abi::kgsl_device_waittimestamp_ctxtid w{id_, timestamp, timeout_ms};
    if (state_->sys->ioctl(state_->fd, abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, &w) == 0) return 0;
    return errno != 0 ? errno : EIO;
  }
  /// READTIMESTAMP_CTXTID of type KGSL_TIMESTAMP_RETIRED / _QUEUED / _CONSUMED.
  std::uint32_t read_timestamp(std::uint32_t type = abi::KGSL_TIMESTAMP_RETIRED) const {
    abi::kgsl_cmdstream_readtimestamp_ctxtid t{id_, type, 0};
    detail::ioctl_or_fail(*state_->sys, state_->fd, abi::IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID, &t);
    return t.timestamp;
  }
  /// GETPROPERTY(GPU_RESET_STAT): KGSL_CTX_STAT_*; the driver reports a reset once, then NO_ERROR.
  std::uint32_t reset_status() const {
    std::uint32_t v = id_;
    get_reset_status(v, true);
    return v;
  }

 private:
  friend class basic_device<Sys>;
  std::uint32_t reset_status_nothrow() const noexcept {
    std::uint32_t v = id_;
    return get_reset_status(v, false) == 0 ? v : abi::KGSL_CTX_STAT_UNKNOWN_CONTEXT_RESET_EXT;
  }
  int get_reset_status(std::uint32_t& v, bool throw_on_error) const {
    abi::kgsl_device_getproperty g{abi::KGSL_PROP_GPU_RESET_STAT, reinterpret_cast<std::uint64_t>(&v), sizeof v};
    const int e = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DEVICE_GETPROPERTY, &g);
    if (e && throw_on_error) detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_GETPROPERTY, e, "property GPU_RESET_STAT");
    return e;
  }
  void destroy() noexcept {
    if (!state_) return;
    abi::kgsl_drawctxt_destroy d{id_};
    (void)detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DRAWCTXT_DESTROY, &d);
    state_.reset();
  }

  std::shared_ptr<detail::device_state<Sys>> state_;
  std::uint32_t id_ = 0;
  std::uint32_t flags_ = 0;
};

/// An open /dev/kgsl-3d0 with its device info, gated on the supported chips (chip.hpp).
template <class Sys = real_sys>
class basic_device {
 public:
  explicit basic_device(Sys& sys, const device_options& o = {}) : state_(std::make_shared<detail::device_state<Sys>>()) {
    state_->sys = &sys;
    const long ps = sys.page_size();
    if (ps <= 0 || (ps & (ps - 1)) != 0) fail_runtime("KGSL: sysconf(_SC_PAGESIZE) returned " + std::to_string(ps));
    state_->page_size = static_cast<std::uint64_t>(ps);
    state_->fd = sys.open(o.path, O_RDWR);
    if (state_->fd < 0) {
      const int e = errno;
      fail_runtime(std::string("cannot open ") + o.path + ": " + errno_text(e) +
                   (e == ENOENT ? " -- no KGSL GPU driver on this system"
                                : e == EACCES ? " -- check the device node's mode and groups" : ""));
    }
    get_property(abi::KGSL_PROP_DEVICE_INFO, &state_->info, sizeof state_->info, "DEVICE_INFO");
    if (o.check_chip) {
      if (const std::string why = unsupported_chip_reason(chip()); !why.empty()) fail_runtime(why);
    }
  }
  explicit basic_device(const device_options& o = {})
    requires std::same_as<Sys, real_sys>
      : basic_device(real_sys::instance(), o) {}

  /// Whether the device node can be opened (the probe the example and tools use); never throws.
  static bool available(Sys& sys, const char* path = default_device_path) noexcept {
    const int fd = sys.open(path, O_RDWR);
    if (fd < 0) return false;
    sys.close(fd);
    return true;
  }

  const abi::kgsl_devinfo& info() const { return state_->info; }
  chip_id chip() const { return {state_->info.chip_id}; }
  /// The chip's fiber count and instruction cache; an error naming the chip if it is not supported
  /// (reachable only when the device was opened with check_chip = false).
  const chip_traits& traits() const { return chip_traits_of(chip()); }
  std::uint64_t gmem_size() const { return state_->info.gmem_sizebytes; }
  std::uint64_t page_size() const { return state_->page_size; }
  int fd() const { return state_->fd; }
  Sys& sys() const { return *state_->sys; }

  /// GETPROPERTY into `out` (copies min(size, property size) bytes).
  void get_property(std::uint32_t prop, void* out, std::size_t size, const char* prop_name = nullptr) const {
    abi::kgsl_device_getproperty g{prop, reinterpret_cast<std::uint64_t>(out), size};
    if (const int e = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DEVICE_GETPROPERTY, &g))
      detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_GETPROPERTY, e,
                         prop_name ? std::string("property ") + prop_name : "property " + std::to_string(prop));
  }

  /// DRAWCTXT_CREATE, then (by default) SETPROPERTY(PWR_CONSTRAINT, max level) as a best-effort hint.
  basic_context<Sys> create_context(const context_options& o = {}) {
    abi::kgsl_drawctxt_create c{o.flags(), 0};
    if (const int e = detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_DRAWCTXT_CREATE, &c))
      detail::fail_ioctl(abi::IOCTL_KGSL_DRAWCTXT_CREATE, e, "flags 0x" + hex(o.flags()));
    basic_context<Sys> ctx;
    ctx.state_ = state_;
    ctx.id_ = c.drawctxt_id;
    ctx.flags_ = c.flags;
    if (o.power_constraint) {
      abi::kgsl_device_constraint_pwrlevel level{abi::KGSL_CONSTRAINT_PWR_MAX};
      abi::kgsl_device_constraint k{abi::KGSL_CONSTRAINT_PWRLEVEL, c.drawctxt_id,
                                    reinterpret_cast<std::uint64_t>(&level), sizeof level};
      abi::kgsl_device_getproperty s{abi::KGSL_PROP_PWR_CONSTRAINT, reinterpret_cast<std::uint64_t>(&k), sizeof k};
      // Only a performance hint: older kernels refuse it (EINVAL), which must not stop a launch.
      (void)detail::ioctl_errno(*state_->sys, state_->fd, abi::IOCTL_KGSL_SETPROPERTY, &s);
    }
    return ctx;
  }

  /// GPUOBJ_ALLOC of `bytes` (rounded up to pages) and mmap at offset id * page size. With
  /// USE_CPU_MAP (the default) the mapping's address is the GPU address; if the driver drops the
  /// flag, the GPU address comes from GPUOBJ_INFO.
  basic_buffer<Sys> alloc(std::uint64_t bytes, const alloc_options& o = {}) {
    Sys& sys = *state_->sys;
    const std::uint64_t ps = state_->page_size;
    if (bytes == 0) fail_runtime("KGSL: cannot allocate a 0-byte GPU buffer");
    abi::kgsl_gpuobj_alloc a{};
    a.size = (bytes + ps - 1) / ps * ps;
    a.flags = o.flags();
    if (!o.label.empty()) {
      a.metadata = reinterpret_cast<std::uint64_t>(o.label.data());
      a.metadata_len = static_cast<std::uint32_t>(std::min<std::size_t>(o.label.size(), 64));
    }
    if (const int e = detail::ioctl_errno(sys, state_->fd, abi::IOCTL_KGSL_GPUOBJ_ALLOC, &a))
      detail::fail_ioctl(abi::IOCTL_KGSL_GPUOBJ_ALLOC, e, std::to_string(a.size) + " bytes");
    basic_buffer<Sys> b;  // owns the id from here on: any failure below frees it
    b.state_ = state_;
    b.alive_ = std::make_shared<bool>(true);
    b.id_ = a.id;
    b.size_ = a.size;
    b.mmapsize_ = a.mmapsize ? a.mmapsize : a.size;
    b.flags_ = a.flags;
    void* p = sys.mmap(nullptr, b.mmapsize_, PROT_READ | PROT_WRITE, MAP_SHARED, state_->fd,
                       static_cast<std::int64_t>(std::uint64_t{a.id} * ps));
    if (p == MAP_FAILED) {
      const int e = errno;
      fail_runtime("mmap of KGSL GPU object " + std::to_string(a.id) + " (" + std::to_string(b.mmapsize_) +
                   " bytes) failed: " + errno_text(e));
    }
    b.cpu_ = p;
    if (a.flags & abi::KGSL_MEMFLAGS_USE_CPU_MAP) {
      b.gpu_ = reinterpret_cast<std::uint64_t>(p);
    } else {
      b.gpu_ = b.info().gpuaddr;
    }
    return b;
  }

 private:
  static std::string hex(std::uint64_t v) {
    std::string s;
    abi::detail::append_hex32(s, static_cast<std::uint32_t>(v));
    return s.substr(2);
  }
  template <class>
  friend class basic_queue;
  std::shared_ptr<detail::device_state<Sys>> state_;
};

using device = basic_device<real_sys>;
using context = basic_context<real_sys>;
using buffer = basic_buffer<real_sys>;

}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_DEVICE_HPP
// ---- end uopcg/runtime/kgsl/device.hpp ----
// ---- begin uopcg/runtime/kgsl/queue.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_QUEUE_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_QUEUE_HPP
// The launch API: kernels loaded from Qualcomm program binaries, a queue that launches them on one
// KGSL context with a memory timeline signal, and batches that build their command buffer once and
// are patched in place between submissions (the low-overhead path for repeated graphs).

#include <chrono>
#include <deque>


namespace uopcg::kgsl {

/// A kernel argument naming a GPU buffer (its address goes into the constant file).
template <class Sys>
kernel_arg buffer_arg(const basic_buffer<Sys>& b, std::uint64_t byte_offset = 0) {
  return buffer_arg(b.gpu_address() + byte_offset);
}

/// A parsed program with its machine code uploaded to GPU memory.
template <class Sys = real_sys>
class basic_kernel {
 public:
  /// `name`: the kernel's function name if known (see parse_program).
  basic_kernel(basic_device<Sys>& dev, std::span<const std::byte> blob, std::string_view name = {})
      : info_(parse_program(blob, name)), layout_(layout_of(info_, dev.traits())), slots_(arg_slots(info_, layout_)) {
    alloc_options o;
    o.gpu_read_only = true;
    o.label = "uopcg-kgsl-shader";
    // The GPU reads whole 128-byte units (preloaded or fetched); a page-rounded allocation covers them.
    shader_ = dev.alloc(std::uint64_t{layout_.instr_units} * 128, o);
    std::memcpy(shader_.data(), info_.image.data(), info_.image.size());
    shader_.flush_for_gpu();
  }
  basic_kernel(basic_device<Sys>& dev, std::span<const std::uint8_t> blob, std::string_view name = {})
      : basic_kernel(dev, std::as_bytes(blob), name) {}

  const program_info& info() const { return info_; }
  const program_layout& layout() const { return layout_; }
  std::span<const arg_slot> slots() const { return slots_; }
  const basic_buffer<Sys>& shader() const { return shader_; }
  const std::string& name() const { return info_.name; }

 private:
  program_info info_;
  program_layout layout_;
  std::vector<arg_slot> slots_;
  basic_buffer<Sys> shader_;
};

struct queue_options {
  context_options context{};
  dispatch_options dispatch{};
  std::uint32_t ring_bytes = 1u << 20;          // command + kernarg ring of single launches
  std::chrono::milliseconds timeout{30000};     // per wait; 0 waits forever
  std::uint32_t max_in_flight = 32;             // submissions outstanding (driver limit 49)
  std::uint32_t rebase_at = 1u << 31;           // timeline re-base point (the GPU compares 32 bits)
};

/// Identifies one submission: the timeline value its IB writes and the KGSL timestamp.
struct submission {
  std::uint32_t value = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t epoch = 0;  // timeline re-base generation
};

template <class Sys>
class basic_batch;
template <class Sys>
class basic_graph;

/// Launches kernels in order on one KGSL context. Each IB waits for the previous one's timeline
/// value, flushes/invalidates caches around the dispatch and writes its own value last (as
/// tinygrad/runtime/ops_qcom.py's QCOMComputeQueue does); the host waits on that memory signal and sleeps in WAITTIMESTAMP_CTXTID meanwhile.
/// Kernels, buffers and batches used with a queue must outlive their in-flight work; the queue
/// waits for everything it submitted before it is destroyed.
template <class Sys = real_sys>
class basic_queue {
 public:
  explicit basic_queue(basic_device<Sys>& dev, const queue_options& o = {})
      : dev_(dev), opts_(o), ctx_(dev_.create_context(o.context)) {
    if (opts_.max_in_flight == 0 || opts_.max_in_flight >= abi::max_inflight_per_context)
      fail_runtime("KGSL queue: max_in_flight must be 1..48");
    if (opts_.rebase_at < 2 || opts_.rebase_at > (1u << 31)) fail_runtime("KGSL queue: rebase_at must be 2..2^31");
    alloc_options a;
    a.label = "uopcg-kgsl-signal";
    signal_ = dev_.alloc(4096, a);  // {timeline value, counter} at 0, flush-event sink at 64
    std::memset(signal_.data(), 0, 128);
    a.label = "uopcg-kgsl-ring";
    ring_ = dev_.alloc(std::max<std::uint32_t>(o.ring_bytes, 64 * 1024), a);
    tracker_.context_id = ctx_.id();
    tracker_.signal = static_cast<const std::uint32_t*>(signal_.data());
    registration_.add(dev_.state_.get(), &tracker_);
    ensure_stack(16 * 1024);
  }
  basic_queue(const basic_queue&) = delete;
  basic_queue& operator=(const basic_queue&) = delete;
  ~basic_queue() {
    if (!lost_ && timeline_ != 0 && wait_core(timeline_, ts_of(timeline_)) == 0) tracker_.submitted_value = 0;
  }

  /// Parses a program binary and uploads its machine code.
  basic_kernel<Sys> load(std::span<const std::byte> blob, std::string_view name = {}) {
    return basic_kernel<Sys>(dev_, blob, name);
  }

  /// One launch: arguments in the program's parameter order (buffers, then scalars, as uopcg
  /// renders them), sizes in work-items. Returns without waiting.
  submission launch(const basic_kernel<Sys>& k, std::span<const kernel_arg> args, const launch_dims& d) {
    check_usable();
    const program_info& p = k.info();
    const program_layout& l = k.layout();
    const geometry_regs g = geometry_of(p, l, d);
    check_args(k, args);
    prepare(l);
    maybe_rebase();
    throttle();
    const std::uint32_t v = timeline_ + 1;
    const std::uint32_t kres = round_up(std::max(l.kernarg_size, constant_file_bytes), 256);
    const std::uint32_t prev_head = head_;
    const std::uint32_t off = ring_alloc(kres + static_cast<std::uint32_t>(max_launch_dwords * 4), v);
    ring_guard guard(*this, prev_head);
    std::byte* base = ring_.bytes() + off;
    const std::uint64_t gbase = ring_.gpu_address() + off;
    fill_kernargs(base, p, l, k.slots(), args);
    pm4::writer w(reinterpret_cast<std::uint32_t*>(base + kres), max_launch_dwords);
    emit_wait(w, signal_address(), timeline_);
    emit_barrier(w, dummy_address());
    emit_dispatch(w, p, l, {gbase, k.shader().gpu_address(), stack_.gpu_address(), border_address()}, g,
                  dummy_address(), opts_.dispatch);
    emit_signal(w, signal_address(), dummy_address(), v);
    ring_.flush_for_gpu();
    return submit_ib(gbase + kres, w.size(), v, &guard);
  }
  submission launch(const basic_kernel<Sys>& k, std::initializer_list<kernel_arg> args, const launch_dims& d) {
    return launch(k, std::span<const kernel_arg>(args.begin(), args.size()), d);
  }

  bool done(const submission& s) const { return s.epoch != epoch_ || signal_value() >= s.value; }
  /// Blocks until `s` completed; throws on timeout or a GPU fault (context reset).
  void wait(const submission& s) {
    if (done(s)) return;
    check(wait_core(s.value, s.timestamp), s.value, s.timestamp);
  }
  /// Waits for everything submitted so far.
  void synchronize() {
    if (timeline_ == 0 || signal_value() >= timeline_) return;
    check(wait_core(timeline_, ts_of(timeline_)), timeline_, ts_of(timeline_));
  }

  std::uint32_t signal_value() const {
    return __atomic_load_n(static_cast<const std::uint32_t*>(signal_.data()), __ATOMIC_ACQUIRE);
  }
  std::uint32_t timeline_value() const { return timeline_; }
  std::uint32_t last_timestamp() const { return ts_of(timeline_); }
  bool lost() const { return lost_; }
  basic_context<Sys>& context() { return ctx_; }
  basic_device<Sys>& device() { return dev_; }
  const queue_options& options() const { return opts_; }
  std::uint64_t signal_address() const { return signal_.gpu_address(); }
  std::uint64_t dummy_address() const { return signal_.gpu_address() + 64; }

 private:
  friend class basic_batch<Sys>;
  friend class basic_graph<Sys>;
  struct ring_entry {
    std::uint32_t begin, end, value;
  };
  // Undoes a ring allocation when the launch fails before the driver queued it.
  struct ring_guard {
    basic_queue& q;
    std::uint32_t head;  // the head before the allocation
    bool armed = true;
    ring_guard(basic_queue& queue, std::uint32_t prev_head) : q(queue), head(prev_head) {}
    ring_guard(const ring_guard&) = delete;
    ring_guard& operator=(const ring_guard&) = delete;
    ~ring_guard() {
      if (armed) {
        q.ring_used_.pop_back();
        q.head_ = head;
      }
    }
  };
  // Registers the work tracker with the device for deferred frees; unregisters on destruction.
  struct registration {
    detail::device_state<Sys>* state = nullptr;
    detail::work_tracker* t = nullptr;
    void add(detail::device_state<Sys>* s, detail::work_tracker* tr) {
      state = s;
      t = tr;
      s->trackers.push_back(tr);
    }
    ~registration() {
      if (state) std::erase(state->trackers, t);
    }
  };

  std::uint64_t border_address() const { return border_ ? border_.gpu_address() : 0; }
  std::uint32_t ts_of(std::uint32_t value) const { return ts_ring_[value % ts_ring_.size()]; }

  void check_usable() const {
    if (lost_)
      fail_runtime("KGSL queue on context " + std::to_string(ctx_.id()) +
                   " is lost after a GPU fault or hang (EDEADLK); create a new queue");
  }
  static void check_args(const basic_kernel<Sys>& k, std::span<const kernel_arg> args) {
    const auto slots = k.slots();
    if (args.size() != slots.size())
      fail_runtime("KGSL kernel '" + k.name() + "' takes " + std::to_string(slots.size()) + " arguments, " +
                   std::to_string(args.size()) + " given");
    for (std::size_t i = 0; i < args.size(); ++i)
      if ((args[i].k == kernel_arg::kind::image) != (slots[i].kind != arg_kind::value))
        fail_runtime("KGSL kernel '" + k.name() + "': argument " + std::to_string(i) + " is a " +
                     detail::kind_name(args[i].k) + " but the parameter is a " + detail::kind_name(slots[i].kind));
  }
  // Private stack and border-colour table the program needs (grown only while idle).
  void prepare(const program_layout& l) {
    ensure_stack(l.stack_bytes);
    if (l.sampler_slots && !border_) {
      alloc_options a;
      a.label = "uopcg-kgsl-border-color";
      border_ = dev_.alloc(4096, a);
      std::memset(border_.data(), 0, 4096);
    }
  }
  void ensure_stack(std::uint32_t bytes) {
    if (stack_ && stack_.size() >= bytes) return;
    synchronize();
    alloc_options a;
    a.label = "uopcg-kgsl-private-stack";
    a.memtype = static_cast<std::uint32_t>(abi::KGSL_MEMTYPE_CL_KERNEL_STACK);
    basic_buffer<Sys> fresh = dev_.alloc(bytes, a);
    stack_ = std::move(fresh);
    ++stack_generation_;
  }
  // The GPU's wait compares 32-bit values unsigned: restart the timeline long before it wraps.
  void maybe_rebase() {
    if (timeline_ + 1 < opts_.rebase_at) return;
    synchronize();
    __atomic_store_n(static_cast<std::uint32_t*>(signal_.data()), 0u, __ATOMIC_RELEASE);
    signal_.flush_for_gpu();
    timeline_ = 0;
    tracker_.submitted_value = 0;
    ++epoch_;
    ring_used_.clear();
    head_ = 0;
  }
  // Keeps at most max_in_flight submissions outstanding (the driver blocks at 49, then fails).
  void throttle() {
    if (timeline_ < opts_.max_in_flight) return;
    const std::uint32_t v = timeline_ - opts_.max_in_flight + 1;
    if (signal_value() < v) check(wait_core(v, ts_of(v)), v, ts_of(v));
  }
  // Claims [head, head+bytes) of the ring for the submission that will write `value`, waiting for
  // the retirement of whatever used that space before. FIFO order means the oldest entries are
  // always the ones just ahead of the head.
  std::uint32_t ring_alloc(std::uint32_t bytes, std::uint32_t value) {
    bytes = round_up(bytes, 256);
    const auto cap = static_cast<std::uint32_t>(ring_.size());
    if (bytes > cap) fail_runtime("KGSL queue: a launch needs " + std::to_string(bytes) + " ring bytes, ring has " + std::to_string(cap));
    std::uint32_t need = 0;
    auto claim = [&](std::uint32_t b, std::uint32_t e) {
      const std::uint32_t sig = signal_value();
      while (!ring_used_.empty()) {
        const ring_entry f = ring_used_.front();
        if (f.value <= sig) {
          ring_used_.pop_front();
          continue;
        }
        if (!(f.begin < e && b < f.end)) break;
        need = std::max(need, f.value);
        ring_used_.pop_front();
      }
    };
    if (head_ + bytes > cap) {
      claim(head_, cap);  // the skipped tail counts as used by this launch
      head_ = 0;
    }
    claim(head_, head_ + bytes);
    if (need && signal_value() < need) check(wait_core(need, ts_of(need)), need, ts_of(need));
    const std::uint32_t at = head_;
    ring_used_.push_back({at, at + bytes, value});
    head_ = at + bytes;
    return at;
  }
  // Submits one IB that writes `value`; on success (or EPROTO, where it was queued anyway) the
  // timeline advances.
  submission submit_ib(std::uint64_t gpu, std::size_t ndwords, std::uint32_t value, ring_guard* guard) {
    const abi::kgsl_command_object cmd{0, gpu, ndwords * 4, abi::KGSL_CMDLIST_IB, 0};
    const submit_result r = ctx_.submit(&cmd, 1);
    if (r.err != 0 && r.err != EPROTO) {
      if (r.err == EDEADLK) lost_ = tracker_.lost = true;
      detail::fail_ioctl(abi::IOCTL_KGSL_GPU_COMMAND, r.err, "context " + std::to_string(ctx_.id()));
    }
    if (guard) guard->armed = false;
    timeline_ = value;
    ts_ring_[value % ts_ring_.size()] = r.timestamp;
    tracker_.submitted_value = value;
    tracker_.last_timestamp = r.timestamp;
    if (r.err == EPROTO) {
      const bool guilty = r.reset_status == abi::KGSL_CTX_STAT_GUILTY_CONTEXT_RESET_EXT ||
                          r.reset_status == abi::KGSL_CTX_STAT_UNKNOWN_CONTEXT_RESET_EXT;
      if (guilty) lost_ = tracker_.lost = true;
      detail::fail_ioctl(abi::IOCTL_KGSL_GPU_COMMAND, EPROTO,
                         "timestamp " + std::to_string(r.timestamp) + " queued on context " + std::to_string(ctx_.id()) +
                             ", reset status " + std::to_string(r.reset_status) + (guilty ? " (guilty: queue lost)" : ""));
    }
    return {value, r.timestamp, epoch_};
  }

  static constexpr int unsignaled = -1;
  // Waits until the signal reaches `value`: read the signal, sleep in the driver on `ts`, retry on
  // EINTR/EAGAIN/short timeouts with the remaining time; at the deadline read the signal once more
  // before reporting ETIMEDOUT (the write may land just as time runs out). Returns 0 or an errno.
  int wait_core(std::uint32_t value, std::uint32_t ts) noexcept {
    if (signal_value() >= value) return 0;
    if (lost_) return EDEADLK;
    Sys& sys = dev_.sys();
    const std::int64_t timeout_ns = static_cast<std::int64_t>(opts_.timeout.count()) * 1000000;
    const std::int64_t deadline = timeout_ns > 0 ? sys.now_ns() + timeout_ns : INT64_MAX;
    for (;;) {
      const std::int64_t now = sys.now_ns();
      if (now >= deadline) return signal_value() >= value ? 0 : ETIMEDOUT;
      std::uint32_t ms = 0;  // 0: the driver waits forever
      if (timeout_ns > 0) ms = static_cast<std::uint32_t>(std::clamp<std::int64_t>((deadline - now + 999999) / 1000000, 1, 0x7FFFFFFF));
      const int e = ctx_.wait_timestamp(ts, ms);
      if (signal_value() >= value) return 0;
      if (e == 0) return unsignaled;
      if (e == EINTR || e == EAGAIN || e == ETIMEDOUT) continue;
      if (e == EDEADLK) lost_ = tracker_.lost = true;
      return e;
    }
  }
  void check(int e, std::uint32_t value, std::uint32_t ts) {
    if (e == 0) return;
    const std::string what = "timeline value " + std::to_string(value) + " (timestamp " + std::to_string(ts) +
                             ", context " + std::to_string(ctx_.id()) + "), signal at " + std::to_string(signal_value());
    if (e == unsignaled)
      fail_runtime("KGSL wait: timestamp retired but the signal was not written: " + what +
                   " -- the command stream did not run to the end");
    if (e == ETIMEDOUT)
      detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, e,
                         what + " not reached within " + std::to_string(opts_.timeout.count()) + " ms");
    detail::fail_ioctl(abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID, e, what);
  }

  // Member order is destruction order reversed: the tracker stays registered while the ring and
  // stack are freed (so they are freed on the last timestamp if work is still in flight), and the
  // context is destroyed after all of the queue's memory.
  basic_device<Sys> dev_;
  queue_options opts_;
  basic_context<Sys> ctx_;
  basic_buffer<Sys> signal_;
  detail::work_tracker tracker_;
  registration registration_;
  basic_buffer<Sys> ring_, stack_, border_;
  std::deque<ring_entry> ring_used_;
  std::uint32_t head_ = 0;
  std::uint32_t timeline_ = 0;
  std::uint32_t epoch_ = 0;
  std::uint32_t stack_generation_ = 0;
  std::array<std::uint32_t, 64> ts_ring_{};
  bool lost_ = false;
};

/// A fixed sequence of launches whose command buffer and kernarg blocks are built once, in GPU
/// memory, and patched in place: set_arg()/set_dims() rewrite a few bytes, submit() rewrites two
/// dwords (the wait reference and the signal value) and makes one GPU_COMMAND for all launches.
/// Patching waits for the batch's previous submission first, since the GPU reads these bytes.
/// The batch must not outlive its queue; its kernels and buffers must outlive its submissions.
template <class Sys = real_sys>
class basic_batch {
 public:
  explicit basic_batch(basic_queue<Sys>& q) : q_(&q) {}

  /// Appends a launch (before the first submit). Returns its index.
  std::size_t add(const basic_kernel<Sys>& k, std::span<const kernel_arg> args, const launch_dims& d) {
    if (built_) fail_runtime("KGSL batch: cannot add launches after the batch was built");
    basic_queue<Sys>::check_args(k, args);
    const geometry_regs g = geometry_of(k.info(), k.layout(), d);
    launches_.push_back({&k, std::vector<kernel_arg>(args.begin(), args.end()), g, 0, {}});
    return launches_.size() - 1;
  }
  std::size_t add(const basic_kernel<Sys>& k, std::initializer_list<kernel_arg> args, const launch_dims& d) {
    return add(k, std::span<const kernel_arg>(args.begin(), args.size()), d);
  }

  /// Replaces argument `index` of launch `launch`.
  void set_arg(std::size_t launch, std::size_t index, const kernel_arg& a) {
    launch_rec& r = at(launch);
    const auto slots = r.k->slots();
    if (index >= slots.size())
      fail_runtime("KGSL batch: kernel '" + r.k->name() + "' has no argument " + std::to_string(index));
    if (!built_) {
      r.args[index] = a;
      return;
    }
    make_idle();
    write_arg(kernargs_.bytes() + r.kernarg_off, r.k->info(), slots[index], index, a);
  }
  /// Replaces the launch size of launch `launch`.
  void set_dims(std::size_t launch, const launch_dims& d) {
    launch_rec& r = at(launch);
    r.geometry = geometry_of(r.k->info(), r.k->layout(), d);
    if (!built_) return;
    make_idle();
    patch_geometry(ib(), r.patch, r.geometry);
  }

  /// Builds the command buffer and kernarg blocks in GPU memory (done by the first submit).
  void build() {
    if (built_) return;
    if (launches_.empty()) fail_runtime("KGSL batch: nothing to submit");
    basic_queue<Sys>& q = *q_;
    std::uint32_t kernarg_total = 0;
    for (auto& r : launches_) {
      q.prepare(r.k->layout());
      r.kernarg_off = kernarg_total;
      kernarg_total += round_up(r.k->layout().kernarg_size, 256);
    }
    const std::size_t bound = wait_dwords + launches_.size() * (barrier_dwords + max_dispatch_dwords) + signal_dwords;
    if (bound > abi::max_ib_dwords)
      fail_runtime("KGSL batch: " + std::to_string(launches_.size()) + " launches exceed one IB's 0xFFFFF dwords");
    alloc_options a;
    a.label = "uopcg-kgsl-batch-kernargs";
    kernargs_ = q.dev_.alloc(std::uint64_t{kernarg_total} + constant_file_bytes, a);  // last block + 4 KiB readable
    a.label = "uopcg-kgsl-batch-ib";
    ib_ = q.dev_.alloc(bound * 4, a);
    for (auto& r : launches_)
      fill_kernargs(kernargs_.bytes() + r.kernarg_off, r.k->info(), r.k->layout(), r.k->slots(), r.args);
    pm4::writer w(ib(), bound);
    wait_ref_ = emit_wait(w, q.signal_address(), 0);
    for (auto& r : launches_) {
      emit_barrier(w, q.dummy_address());
      r.patch = emit_dispatch(w, r.k->info(), r.k->layout(),
                              {kernargs_.gpu_address() + r.kernarg_off, r.k->shader().gpu_address(),
                               q.stack_.gpu_address(), q.border_address()},
                              r.geometry, q.dummy_address(), q.opts_.dispatch);
    }
    signal_at_ = emit_signal(w, q.signal_address(), q.dummy_address(), 0);
    ndwords_ = w.size();
    stack_generation_ = q.stack_generation_;
    kernargs_.flush_for_gpu();
    built_ = true;
  }

  /// Submits all launches as one IB. Returns without waiting.
  submission submit() {
    build();
    basic_queue<Sys>& q = *q_;
    q.check_usable();
    make_idle();
    if (stack_generation_ != q.stack_generation_) {  // a later launch grew the queue's stack
      const std::uint64_t p = q.stack_.gpu_address();
      for (auto& r : launches_) {
        ib()[r.patch.cs_cntl + 7] = pm4::lo(p);
        ib()[r.patch.cs_cntl + 8] = pm4::hi(p);
      }
      stack_generation_ = q.stack_generation_;
    }
    q.maybe_rebase();
    q.throttle();
    const std::uint32_t v = q.timeline_ + 1;
    ib()[wait_ref_] = q.timeline_;
    ib()[signal_at_] = v;
    ib_.flush_for_gpu();
    last_ = q.submit_ib(ib_.gpu_address(), ndwords_, v, nullptr);
    return last_;
  }

  std::size_t size() const { return launches_.size(); }
  bool built() const { return built_; }
  const submission& last() const { return last_; }
  /// The built command buffer (for inspection and tests).
  std::span<const std::uint32_t> commands() const {
    return built_ ? std::span<const std::uint32_t>(static_cast<const std::uint32_t*>(ib_.data()), ndwords_)
                  : std::span<const std::uint32_t>{};
  }

 private:
  struct launch_rec {
    const basic_kernel<Sys>* k;
    std::vector<kernel_arg> args;
    geometry_regs geometry;
    std::uint32_t kernarg_off;
    dispatch_patch patch;
  };
  launch_rec& at(std::size_t i) {
    if (i >= launches_.size())
      fail_runtime("KGSL batch: no launch " + std::to_string(i) + " (batch has " + std::to_string(launches_.size()) + ")");
    return launches_[i];
  }
  std::uint32_t* ib() const { return static_cast<std::uint32_t*>(ib_.data()); }
  void make_idle() {
    if (last_.value != 0 && !q_->done(last_)) q_->wait(last_);
  }

  basic_queue<Sys>* q_;
  std::vector<launch_rec> launches_;
  basic_buffer<Sys> kernargs_, ib_;
  std::size_t ndwords_ = 0, wait_ref_ = 0, signal_at_ = 0;
  std::uint32_t stack_generation_ = 0;
  submission last_{};
  bool built_ = false;
};

using kernel = basic_kernel<real_sys>;
using queue = basic_queue<real_sys>;
using batch = basic_batch<real_sys>;

}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_QUEUE_HPP
// ---- end uopcg/runtime/kgsl/queue.hpp ----
// ---- begin uopcg/runtime/kgsl/graph.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_GRAPH_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_GRAPH_HPP
// Capture and replay of kernel sequences: the KGSL counterpart of tinygrad's HCQ graph
// (tinygrad/runtime/graph/hcq.py, HCQGraph, run on QCOM by ops_qcom.py's QCOMComputeQueue.bind).
//
// A sequence of launches is captured once, with the buffers it uses, into one command buffer and
// one kernel-argument area in GPU memory. Each replay is one GPU_COMMAND: before it, only what
// changed since the previous replay is rewritten in place: the address of a buffer rebound with
// bind() in every argument that uses it, the scalars that read a graph variable whose value
// changed, the launch sizes changed with set_dims(), and the two dwords of the timeline (the wait
// reference and the signal value). Patching waits for the previous replay first, since the GPU
// reads these bytes.
//
// Every buffer and kernel is tracked by its liveness (basic_buffer::liveness), so replaying a graph
// whose buffer or kernel was freed is a named error raised before anything is written or
// submitted; bind() a live buffer in its place and replay again. The graph must not outlive its
// queue.



namespace uopcg::kgsl {

/// One argument of a captured launch: a buffer (tracked, rebindable), a constant scalar, a graph
/// variable (a scalar whose value each replay supplies) or an image over a buffer.
struct graph_arg {
  enum class kind : std::uint8_t { buffer, scalar, variable, image } k = kind::scalar;
  std::uint8_t size = 4;                 // scalar / variable width in bytes
  std::uint64_t bits = 0;                // scalar bytes; buffer: byte offset into it
  std::uint32_t var = 0;                 // variable index
  image_view img{};                      // image: size and format (the address comes from the buffer)
  std::uint64_t address = 0, bytes = 0;  // the buffer at capture
  std::shared_ptr<const bool> alive;     // the buffer's liveness
};

template <class Sys>
graph_arg graph_buffer(const basic_buffer<Sys>& b, std::uint64_t byte_offset = 0) {
  graph_arg a;
  a.k = graph_arg::kind::buffer;
  a.size = 8;
  a.bits = byte_offset;
  a.address = b.gpu_address();
  a.bytes = b.size();
  a.alive = b.liveness();
  return a;
}
template <class T>
  requires(std::is_arithmetic_v<T> && sizeof(T) <= 8)
graph_arg graph_scalar(T v) {
  const kernel_arg s = scalar_arg(v);
  graph_arg a;
  a.size = s.size;
  a.bits = s.bits;
  return a;
}
/// A scalar argument read from graph variable `index` (`width` bytes, little-endian) at each replay.
inline graph_arg graph_var(std::uint32_t index, std::uint8_t width = 4) {
  graph_arg a;
  a.k = graph_arg::kind::variable;
  a.var = index;
  a.size = width;
  return a;
}
template <class Sys>
graph_arg graph_image(const basic_buffer<Sys>& b, std::uint32_t width, std::uint32_t height,
                      image_format f = image_format::rgba_f32) {
  graph_arg a = graph_buffer(b);
  a.k = graph_arg::kind::image;
  a.img = {b.gpu_address(), width, height, f};
  return a;
}

template <class Sys = real_sys>
class basic_graph {
 public:
  explicit basic_graph(basic_queue<Sys>& q) : q_(&q) {}
  basic_graph(const basic_graph&) = delete;
  basic_graph& operator=(const basic_graph&) = delete;
  /// Waits for the last replay: its command buffer is freed with the graph.
  ~basic_graph() {
    if (last_.value != 0 && !q_->lost() && !q_->done(last_)) {
      try {
        q_->wait(last_);
      } catch (const error&) {
        // A failed wait (the context was lost) is the queue's to report; the driver defers the free.
      }
    }
  }

  // --- capture -----------------------------------------------------------------------------------

  /// Captures one launch (before the first replay). Arguments in the program's parameter order, as
  /// for basic_queue::launch. Returns the launch's index.
  std::size_t launch(const basic_kernel<Sys>& k, std::span<const graph_arg> args, const launch_dims& d) {
    if (built_) fail_runtime("KGSL graph: cannot capture launches after the first replay");
    if (!k.shader()) fail_runtime("KGSL graph: capture of a kernel that was moved from");
    const std::size_t n = launches_.size();
    const auto slots = k.slots();
    if (args.size() != slots.size())
      fail_runtime("KGSL graph: launch " + std::to_string(n) + " of kernel '" + k.name() + "' takes " +
                   std::to_string(slots.size()) + " arguments, " + std::to_string(args.size()) + " given");
    launch_rec r;
    r.info = k.info();
    r.info.image.clear();  // the code lives in the kernel's shader buffer; the graph keeps what it patches with
    r.layout = k.layout();
    r.slots.assign(slots.begin(), slots.end());
    r.geometry = geometry_of(r.info, r.layout, d);
    r.shader = k.shader().gpu_address();
    r.shader_alive = k.shader().liveness();
    const std::size_t known_buffers = buffers_.size();
    try {
      capture_args(r, n, slots, args);
    } catch (const error&) {
      buffers_.resize(known_buffers);  // a refused capture leaves no trace
      throw;
    }
    // Registered only once the whole launch is accepted.
    for (std::size_t i = 0; i < r.args.size(); ++i) {
      const arg_rec& c = r.args[i];
      const use u{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(i)};
      if (c.k == graph_arg::kind::variable) {
        if (c.index >= vars_.size()) vars_.resize(c.index + 1);
        vars_[c.index].uses.push_back(u);
      } else if (c.k != graph_arg::kind::scalar) {
        buffers_[c.index].uses.push_back(u);
      }
    }
    launches_.push_back(std::move(r));
    return n;
  }
  std::size_t launch(const basic_kernel<Sys>& k, std::initializer_list<graph_arg> args, const launch_dims& d) {
    return launch(k, std::span<const graph_arg>(args.begin(), args.size()), d);
  }

  // --- between replays ---------------------------------------------------------------------------

  /// Distinct buffers captured, in order of first use; bind() takes these indices.
  std::size_t buffer_count() const { return buffers_.size(); }
  /// Variables the captured launches read (the highest index used + 1); replay() takes this many.
  std::size_t var_count() const { return vars_.size(); }
  std::size_t size() const { return launches_.size(); }
  /// The index of a captured buffer (it must be live: a freed buffer has no identity left to look up).
  std::size_t buffer_index(const basic_buffer<Sys>& b) const {
    const auto live = b.liveness();
    for (std::size_t i = 0; i < buffers_.size(); ++i)
      if (live && buffers_[i].alive == live) return i;
    fail_runtime("KGSL graph: the buffer at " + hex(b.gpu_address()) + " is not bound in this graph");
  }

  /// Binds graph buffer `index` to `b` for the next replays: every argument that used the old buffer
  /// uses `b` from then on (at the same byte offset). This is how a reallocated buffer, or a new input
  /// per replay, enters the graph; only the addresses that change are rewritten.
  void bind(std::size_t index, const basic_buffer<Sys>& b) {
    if (index >= buffers_.size())
      fail_runtime("KGSL graph: no buffer " + std::to_string(index) + " (the graph has " + std::to_string(buffers_.size()) + ")");
    if (!b) fail_runtime("KGSL graph: bind of buffer " + std::to_string(index) + " to an empty buffer");
    buffer_rec& r = buffers_[index];
    for (const use& u : r.uses) {
      const arg_rec& a = launches_[u.launch].args[u.arg];
      if (a.bits > b.size() || (a.k == graph_arg::kind::image && image_bytes(a.img) > b.size()))
        fail_runtime(where(u.launch, u.arg, launches_[u.launch].info.name) + " needs " +
                     std::to_string(a.k == graph_arg::kind::image ? image_bytes(a.img) : a.bits) + " bytes of buffer " +
                     std::to_string(index) + "; the buffer bound has " + std::to_string(b.size()));
    }
    r.alive = b.liveness();
    r.address = b.gpu_address();
    r.bytes = b.size();
  }
  /// Changes the launch size of launch `launch` for the next replays.
  void set_dims(std::size_t launch, const launch_dims& d) {
    launch_rec& r = at(launch);
    const geometry_regs g = geometry_of(r.info, r.layout, d);  // refused sizes leave the graph as it was
    r.geometry = g;
    r.dims_dirty = true;
  }

  /// Runs the captured sequence once: one GPU_COMMAND. `vars` holds one value per graph variable.
  /// The first replay builds the command buffer. Returns without waiting.
  submission replay(std::span<const std::uint64_t> vars = {}) {
    basic_queue<Sys>& q = *q_;
    q.check_usable();
    if (launches_.empty()) fail_runtime("KGSL graph: nothing captured");
    if (vars.size() != vars_.size())
      fail_runtime("KGSL graph: replay with " + std::to_string(vars.size()) + " variable values; the graph reads " +
                   std::to_string(vars_.size()));
    check_live();
    if (!built_) {
      build(vars);
    } else {
      make_idle();
      patch(vars);
    }
    if (stack_generation_ != q.stack_generation_) {  // a later launch grew the queue's private stack
      const std::uint64_t p = q.stack_.gpu_address();
      for (launch_rec& r : launches_) {
        ib()[r.patch.cs_cntl + 7] = pm4::lo(p);
        ib()[r.patch.cs_cntl + 8] = pm4::hi(p);
      }
      stack_generation_ = q.stack_generation_;
    }
    q.maybe_rebase();
    q.throttle();
    const std::uint32_t v = q.timeline_ + 1;
    ib()[wait_ref_] = q.timeline_;
    ib()[signal_at_] = v;
    kernargs_.flush_for_gpu();
    ib_.flush_for_gpu();
    last_ = q.submit_ib(ib_.gpu_address(), ndwords_, v, nullptr);
    return last_;
  }
  submission replay(std::initializer_list<std::uint64_t> vars) {
    return replay(std::span<const std::uint64_t>(vars.begin(), vars.size()));
  }

  bool built() const { return built_; }
  const submission& last() const { return last_; }
  /// The built command buffer (for inspection and tests).
  std::span<const std::uint32_t> commands() const {
    return built_ ? std::span<const std::uint32_t>(ib(), ndwords_) : std::span<const std::uint32_t>{};
  }

 private:
  static constexpr std::uint32_t max_vars = 1u << 16;
  struct use {
    std::uint32_t launch, arg;
  };
  struct buffer_rec {
    std::shared_ptr<const bool> alive;
    std::uint64_t address = 0, bytes = 0;
    std::uint64_t written = 0;  // the address the kernel-argument area holds now
    std::vector<use> uses;
  };
  struct var_rec {
    std::uint64_t written = 0;
    std::vector<use> uses;
  };
  struct arg_rec {
    graph_arg::kind k;
    std::uint8_t size;
    std::uint64_t bits;
    std::uint32_t index;  // variable index, or buffer-table index of a buffer or image
    image_view img;
  };
  struct launch_rec {
    program_info info;  // without the machine code
    program_layout layout;
    std::vector<arg_slot> slots;
    std::vector<arg_rec> args;
    geometry_regs geometry{};
    bool dims_dirty = false;
    std::uint64_t shader = 0;
    std::shared_ptr<const bool> shader_alive;
    std::uint32_t kernarg_off = 0;
    dispatch_patch patch;
  };

  static std::string hex(std::uint64_t v) {
    static constexpr char d[] = "0123456789abcdef";
    std::string s;
    do s.insert(s.begin(), d[v & 0xF]); while (v >>= 4);
    return "0x" + s;
  }
  static std::string where(std::size_t launch, std::size_t arg, const std::string& kernel) {
    return "KGSL graph: launch " + std::to_string(launch) + " ('" + kernel + "') argument " + std::to_string(arg);
  }
  static std::uint64_t image_bytes(const image_view& v) {
    return std::uint64_t{v.width} * v.height * 4 * (v.format == image_format::rgba_f32 ? 4 : 2);
  }
  launch_rec& at(std::size_t i) {
    if (i >= launches_.size())
      fail_runtime("KGSL graph: no launch " + std::to_string(i) + " (the graph has " + std::to_string(launches_.size()) + ")");
    return launches_[i];
  }
  // Buffers are told apart by their liveness flag (one per allocation), not by address: a freed
  // buffer's address may be handed out again.
  std::size_t buffer_index_of(const graph_arg& a) {
    for (std::size_t i = 0; i < buffers_.size(); ++i)
      if (buffers_[i].alive == a.alive) return i;
    buffers_.push_back({a.alive, a.address, a.bytes, a.address, {}});
    return buffers_.size() - 1;
  }
  std::uint32_t* ib() const { return static_cast<std::uint32_t*>(ib_.data()); }
  void make_idle() {
    if (last_.value != 0 && !q_->done(last_)) q_->wait(last_);
  }

  // Everything the command buffer points to must still exist; checked before anything is written.
  void check_live() const {
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const buffer_rec& b = buffers_[i];
      if (b.alive && *b.alive) continue;
      const use& u = b.uses.front();
      fail_runtime("KGSL graph: buffer " + std::to_string(i) + " (" + hex(b.address) + ", " + std::to_string(b.bytes) +
                   " bytes), argument " + std::to_string(u.arg) + " of launch " + std::to_string(u.launch) + " ('" +
                   launches_[u.launch].info.name + "'), was freed; bind() a live buffer to it before replaying");
    }
    for (std::size_t i = 0; i < launches_.size(); ++i)
      if (!*launches_[i].shader_alive)
        fail_runtime("KGSL graph: the kernel '" + launches_[i].info.name + "' of launch " + std::to_string(i) +
                     " was destroyed; kernels must outlive the graphs that captured them");
  }

  // The kernel-argument bytes of argument `i` of launch `r`, with the current bindings and `vars`.
  kernel_arg current(const launch_rec& r, std::size_t i, std::span<const std::uint64_t> vars) const {
    const arg_rec& a = r.args[i];
    switch (a.k) {
      case graph_arg::kind::buffer: return buffer_arg(buffers_[a.index].address + a.bits);
      case graph_arg::kind::image: {
        image_view v = a.img;
        v.address = buffers_[a.index].address;
        return image_arg(v);
      }
      case graph_arg::kind::variable: return {kernel_arg::kind::scalar, a.size, vars[a.index], {}};
      case graph_arg::kind::scalar: break;
    }
    return {kernel_arg::kind::scalar, a.size, a.bits, {}};
  }

  void capture_args(launch_rec& r, std::size_t n, std::span<const arg_slot> slots, std::span<const graph_arg> args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const graph_arg& a = args[i];
      const bool image = a.k == graph_arg::kind::image;
      if (image != (slots[i].kind != arg_kind::value))
        fail_runtime(where(n, i, r.info.name) + " is " + (image ? "an image" : "not an image") + " but the parameter " +
                     (image ? "is not" : "is"));
      arg_rec c{a.k, a.size, a.bits, a.var, a.img};
      if (a.k == graph_arg::kind::buffer || image) {
        if (!a.alive || !*a.alive) fail_runtime(where(n, i, r.info.name) + ": the buffer is empty or freed");
        const std::uint64_t need = image ? image_bytes(a.img) : a.bits;
        if (need > a.bytes)
          fail_runtime(where(n, i, r.info.name) + " needs " + std::to_string(need) + " bytes of a " + std::to_string(a.bytes) + "-byte buffer");
        c.index = static_cast<std::uint32_t>(buffer_index_of(a));
      } else {
        if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
          fail_runtime(where(n, i, r.info.name) + " has width " + std::to_string(a.size));
        if (a.k == graph_arg::kind::variable && a.var >= max_vars)
          fail_runtime(where(n, i, r.info.name) + ": variable index " + std::to_string(a.var) + " is too large");
      }
      r.args.push_back(c);
    }
  }

  void build(std::span<const std::uint64_t> vars) {
    basic_queue<Sys>& q = *q_;
    std::uint32_t kernarg_total = 0;
    for (launch_rec& r : launches_) {
      q.prepare(r.layout);
      r.kernarg_off = kernarg_total;
      kernarg_total += round_up(r.layout.kernarg_size, 256);
    }
    const std::size_t bound = wait_dwords + launches_.size() * (barrier_dwords + max_dispatch_dwords) + signal_dwords;
    if (bound > abi::max_ib_dwords)
      fail_runtime("KGSL graph: " + std::to_string(launches_.size()) + " launches exceed one IB's 0xFFFFF dwords");
    alloc_options a;
    a.label = "uopcg-kgsl-graph-kernargs";
    basic_buffer<Sys> kernargs = q.dev_.alloc(std::uint64_t{kernarg_total} + constant_file_bytes, a);  // last block + 4 KiB readable
    a.label = "uopcg-kgsl-graph-ib";
    basic_buffer<Sys> ibuf = q.dev_.alloc(bound * 4, a);
    std::vector<kernel_arg> args;
    for (launch_rec& r : launches_) {
      args.clear();
      for (std::size_t i = 0; i < r.args.size(); ++i) args.push_back(current(r, i, vars));
      fill_kernargs(kernargs.bytes() + r.kernarg_off, r.info, r.layout, r.slots, args);
    }
    pm4::writer w(static_cast<std::uint32_t*>(ibuf.data()), bound);
    wait_ref_ = emit_wait(w, q.signal_address(), 0);
    for (launch_rec& r : launches_) {
      emit_barrier(w, q.dummy_address());
      r.patch = emit_dispatch(w, r.info, r.layout,
                              {kernargs.gpu_address() + r.kernarg_off, r.shader, q.stack_.gpu_address(), q.border_address()},
                              r.geometry, q.dummy_address(), q.opts_.dispatch);
      r.dims_dirty = false;
    }
    signal_at_ = emit_signal(w, q.signal_address(), q.dummy_address(), 0);
    ndwords_ = w.size();
    kernargs_ = std::move(kernargs);
    ib_ = std::move(ibuf);
    for (buffer_rec& b : buffers_) b.written = b.address;
    for (std::size_t i = 0; i < vars_.size(); ++i) vars_[i].written = vars[i];
    stack_generation_ = q.stack_generation_;
    built_ = true;
  }

  // Rewrites what changed since the previous replay.
  void patch(std::span<const std::uint64_t> vars) {
    std::byte* k = kernargs_.bytes();
    for (buffer_rec& b : buffers_) {
      if (b.written == b.address) continue;
      for (const use& u : b.uses) {
        const launch_rec& r = launches_[u.launch];
        write_arg(k + r.kernarg_off, r.info, r.slots[u.arg], u.arg, current(r, u.arg, vars));
      }
      b.written = b.address;
    }
    for (std::size_t i = 0; i < vars_.size(); ++i) {
      var_rec& v = vars_[i];
      if (v.written == vars[i]) continue;
      for (const use& u : v.uses) {
        const launch_rec& r = launches_[u.launch];
        write_arg(k + r.kernarg_off, r.info, r.slots[u.arg], u.arg, current(r, u.arg, vars));
      }
      v.written = vars[i];
    }
    for (launch_rec& r : launches_) {
      if (!r.dims_dirty) continue;
      patch_geometry(ib(), r.patch, r.geometry);
      r.dims_dirty = false;
    }
  }

  basic_queue<Sys>* q_;
  std::vector<launch_rec> launches_;
  std::vector<buffer_rec> buffers_;
  std::vector<var_rec> vars_;
  basic_buffer<Sys> kernargs_, ib_;
  std::size_t ndwords_ = 0, wait_ref_ = 0, signal_at_ = 0;
  std::uint32_t stack_generation_ = 0;
  submission last_{};
  bool built_ = false;
};

using graph = basic_graph<real_sys>;

}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_GRAPH_HPP
// ---- end uopcg/runtime/kgsl/graph.hpp ----
#if defined(__x86_64__) || defined(__aarch64__)
// ---- begin uopcg/runtime/kgsl/sandbox.hpp ----
#ifndef UOPCG_SINGLE_RUNTIME_KGSL_SANDBOX_HPP
#define UOPCG_SINGLE_RUNTIME_KGSL_SANDBOX_HPP
// Least privilege for a process that only launches kernels: a seccomp-bpf filter (no libseccomp)
// entered once the KGSL device is open. From then on the process may make only the system calls the
// launcher and the C++ runtime need:
//   ioctl      the KGSL requests the launcher sends (abi.hpp), on the device's file descriptor only
//   mmap       without PROT_EXEC, anonymous or of the device (GPU objects); mprotect without
//              PROT_EXEC; munmap, mremap, madvise, brk (the allocator)
//   write      writev, to the file descriptors named in the options (stderr by default)
//   close, clock_gettime, futex, sched_yield, exit, exit_group, rt_sigreturn, rt_sigprocmask,
//   restart_syscall, getpid, gettid, tgkill of this process (so abort() still raises SIGABRT),
//   rseq, set_robust_list and sigaltstack (what threads register as they start and exit)
// Everything else is refused with EPERM or kills the process (sandbox_options::refusal): sockets
// of every family (AF_CAN included, so the process can never send on a CAN bus), opening files or
// device nodes, exec, fork and clone, reading, dup, io_uring, ptrace, bpf. The filter checks the
// architecture first (a 32-bit or x32 system call is refused), applies to every thread of the
// process and cannot be lifted (the kernel keeps it for the process and its children).

#if !defined(__linux__)
#error "uopcg/runtime/kgsl/sandbox.hpp is Linux-only (seccomp)"
#endif


#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>


namespace uopcg::kgsl {

#if defined(__x86_64__)
inline constexpr std::uint32_t sandbox_audit_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr std::uint32_t sandbox_audit_arch = AUDIT_ARCH_AARCH64;
#else
#error "uopcg/runtime/kgsl/sandbox.hpp supports x86_64 and aarch64"
#endif

enum class sandbox_refusal : std::uint8_t {
  eperm,         // the refused call fails with EPERM; the process goes on
  kill_process,  // the kernel kills the whole process with SIGSYS
};

struct sandbox_options {
  int device_fd = -1;                 // the KGSL descriptor; ioctl and file mappings only on it (-1: no ioctl, no file mappings)
  sandbox_refusal refusal = sandbox_refusal::eperm;
  std::vector<int> write_fds{STDERR_FILENO};  // write/writev only to these (already open) descriptors
  bool all_threads = true;            // SECCOMP_FILTER_FLAG_TSYNC: every thread of the process, not only the caller
};

/// The ioctl requests the launcher sends once the device is open (device.hpp, queue.hpp).
inline constexpr std::uint32_t sandbox_ioctls[] = {
    abi::IOCTL_KGSL_DEVICE_GETPROPERTY,   abi::IOCTL_KGSL_SETPROPERTY,
    abi::IOCTL_KGSL_DRAWCTXT_CREATE,      abi::IOCTL_KGSL_DRAWCTXT_DESTROY,
    abi::IOCTL_KGSL_GPUOBJ_ALLOC,         abi::IOCTL_KGSL_GPUOBJ_FREE,
    abi::IOCTL_KGSL_GPUOBJ_INFO,          abi::IOCTL_KGSL_GPUOBJ_SYNC,
    abi::IOCTL_KGSL_GPU_COMMAND,          abi::IOCTL_KGSL_DEVICE_WAITTIMESTAMP_CTXTID,
    abi::IOCTL_KGSL_CMDSTREAM_READTIMESTAMP_CTXTID,
};

namespace detail {

/// Appends classic-BPF instructions. Tests are forward jumps over what follows: one return, or a
/// block whose length is measured when it is closed, so no jump offset is counted by hand.
class bpf_program {
 public:
  void load_nr() { ld(offsetof(seccomp_data, nr)); }
  void load_arch() { ld(offsetof(seccomp_data, arch)); }
  // The low 32 bits of argument i: the kernel reads the descriptors, protections, flags, pids and
  // ioctl requests compared here as 32-bit values (or tests bits of the low word).
  void load_arg(int i) {
    ld(static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * i + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4)));
  }
  /// if (A == k) return ret;
  void ret_if_eq(std::uint32_t k, std::uint32_t ret) {
    jump(BPF_JEQ, k, 0, 1);
    ret_(ret);
  }
  /// if (A & k) return ret;
  void ret_if_set(std::uint32_t k, std::uint32_t ret) {
    jump(BPF_JSET, k, 0, 1);
    ret_(ret);
  }
  /// if (A == k) { body } -- the body must end in a return (it may change A).
  template <class F>
  void if_eq(std::uint32_t k, F&& body) {
    const std::size_t at = code_.size();
    jump(BPF_JEQ, k, 0, 0);
    body();
    const std::size_t n = code_.size() - at - 1;
    if (n > 255) fail_runtime("KGSL sandbox: a filter block of " + std::to_string(n) + " instructions is too long to jump over");
    code_[at].jf = static_cast<std::uint8_t>(n);
  }
  void ret_(std::uint32_t v) { code_.push_back(BPF_STMT(BPF_RET | BPF_K, v)); }
  std::size_t size() const { return code_.size(); }
  std::vector<sock_filter>& code() { return code_; }

 private:
  void ld(std::uint32_t off) { code_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off)); }
  void jump(std::uint16_t op, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    code_.push_back(BPF_JUMP(static_cast<std::uint16_t>(BPF_JMP | op | BPF_K), k, jt, jf));
  }
  std::vector<sock_filter> code_;
};

}  // namespace detail

/// The filter enter_sandbox() installs, as classic-BPF instructions (for inspection and tests).
inline std::vector<sock_filter> sandbox_filter(const sandbox_options& o) {
  constexpr std::uint32_t allow = SECCOMP_RET_ALLOW;
  const std::uint32_t refuse = o.refusal == sandbox_refusal::kill_process ? SECCOMP_RET_KILL_PROCESS
                                                                           : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  detail::bpf_program p;
  // A call made through another ABI (i386 int 0x80, x32, AArch32) has other numbers: never allowed.
  p.load_arch();
  p.if_eq(sandbox_audit_arch, [&] {
    p.load_nr();
#if defined(__x86_64__)
    p.ret_if_set(0x40000000, refuse);  // __X32_SYSCALL_BIT
#endif

    // Calls allowed whatever their arguments.
    const long plain[] = {
      SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk, SYS_close, SYS_clock_gettime, SYS_futex, SYS_sched_yield,
      SYS_exit, SYS_exit_group, SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_restart_syscall, SYS_getpid, SYS_gettid,
      // A thread started just before the filter registers these as it starts (glibc aborts without
      // rseq); sanitizer runtimes take down a thread's signal stack as it exits.
      SYS_set_robust_list, SYS_sigaltstack,
#ifdef SYS_rseq
      SYS_rseq,
#endif
    };
    for (long nr : plain) p.ret_if_eq(static_cast<std::uint32_t>(nr), allow);

    // tgkill(own pid, ...): how abort() raises SIGABRT; signalling other processes stays refused.
    p.if_eq(SYS_tgkill, [&] {
      p.load_arg(0);
      p.ret_if_eq(static_cast<std::uint32_t>(::getpid()), allow);
      p.ret_(refuse);
    });

    // write / writev: only to the descriptors named.
    for (long nr : {long{SYS_write}, long{SYS_writev}}) {
      p.if_eq(static_cast<std::uint32_t>(nr), [&] {
        p.load_arg(0);
        for (int fd : o.write_fds) p.ret_if_eq(static_cast<std::uint32_t>(fd), allow);
        p.ret_(refuse);
      });
    }

    // mmap: never executable; anonymous, or a GPU object of the device.
    p.if_eq(SYS_mmap, [&] {
      p.load_arg(2);
      p.ret_if_set(PROT_EXEC, refuse);
      p.load_arg(3);
      p.ret_if_set(MAP_ANONYMOUS, allow);
      if (o.device_fd >= 0) {
        p.load_arg(4);
        p.ret_if_eq(static_cast<std::uint32_t>(o.device_fd), allow);
      }
      p.ret_(refuse);
    });

    // mprotect: never executable.
    p.if_eq(SYS_mprotect, [&] {
      p.load_arg(2);
      p.ret_if_set(PROT_EXEC, refuse);
      p.ret_(allow);
    });

    // ioctl: the launcher's KGSL requests on the device only (the kernel reads the request as a
    // 32-bit unsigned int).
    if (o.device_fd >= 0) {
      p.if_eq(SYS_ioctl, [&] {
        p.load_arg(0);
        p.if_eq(static_cast<std::uint32_t>(o.device_fd), [&] {
          p.load_arg(1);
          for (std::uint32_t r : sandbox_ioctls) p.ret_if_eq(r, allow);
          p.ret_(refuse);
        });
        p.ret_(refuse);
      });
    }
    p.ret_(refuse);
  });
  p.ret_(SECCOMP_RET_KILL_PROCESS);
  if (p.size() > BPF_MAXINSNS) fail_runtime("KGSL sandbox: the filter has too many instructions");
  return std::move(p.code());
}

/// Enters the sandbox: sets no_new_privs and installs sandbox_filter(o) for the whole process.
/// Irreversible. Open the device, create queues and allocate what the process needs first (GPU
/// objects can still be allocated and freed afterwards; files and sockets cannot be opened).
inline void enter_sandbox(const sandbox_options& o) {
  for (int fd : o.write_fds)
    if (fd < 0) fail_runtime("KGSL sandbox: write descriptor " + std::to_string(fd) + " is invalid");
  std::vector<sock_filter> code = sandbox_filter(o);
  sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    fail_runtime("KGSL sandbox: prctl(PR_SET_NO_NEW_PRIVS) failed: " + errno_text(errno));
  const unsigned long flags = o.all_threads ? SECCOMP_FILTER_FLAG_TSYNC : 0;
  const long r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (r != 0) {
    const int e = errno;
    if (r > 0)
      fail_runtime("KGSL sandbox: thread " + std::to_string(r) + " could not take the filter (it has its own seccomp filter)");
    fail_runtime("KGSL sandbox: seccomp(SECCOMP_SET_MODE_FILTER) failed: " + errno_text(e) +
                 (e == EINVAL ? " -- the kernel lacks seccomp filters or SECCOMP_RET_KILL_PROCESS (Linux >= 4.14)" : ""));
  }
}

/// Enters the sandbox with ioctl and file mappings allowed on `dev`'s descriptor.
template <class Device>
void enter_sandbox(const Device& dev, sandbox_options o = {}) {
  o.device_fd = dev.fd();
  enter_sandbox(o);
}

}  // namespace uopcg::kgsl
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_SANDBOX_HPP
// ---- end uopcg/runtime/kgsl/sandbox.hpp ----
#endif
#endif  // UOPCG_SINGLE_RUNTIME_KGSL_HPP
// ---- end uopcg/runtime/kgsl.hpp ----
