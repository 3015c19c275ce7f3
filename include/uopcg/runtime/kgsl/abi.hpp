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
#pragma once

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
