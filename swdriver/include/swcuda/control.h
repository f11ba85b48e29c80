/* swcuda control API: test hooks of the cuwrap software driver.
 *
 * The software driver (a drop-in libcuda.so.1) hands out this table through
 * cuGetExportTable(&table, &SWCU_CONTROL_TABLE_ID). A real NVIDIA driver refuses
 * the id, so a program can ask "am I on the software driver?" with one call and
 * without linking anything. The table only grows: new members are appended and
 * `struct_size` says how many a given driver has.
 *
 * Plain C so that any host program (not only cuwrap) can use it. */
#ifndef SWCUDA_CONTROL_H
#define SWCUDA_CONTROL_H

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The export-table id of the control table: the bytes of "swcuda-control-1". */
static const CUuuid SWCU_CONTROL_TABLE_ID = {
    {'s', 'w', 'c', 'u', 'd', 'a', '-', 'c', 'o', 'n', 't', 'r', 'o', 'l', '-', '1'}};

#define SWCU_CONTROL_VERSION 7

/* Kinds of live handles the driver accounts for. */
typedef enum swcu_handle_kind {
  SWCU_PRIMARY_CONTEXT = 0, /* a device whose primary context has retains > 0 */
  SWCU_CONTEXT = 1,         /* created contexts (cuCtxCreate) */
  SWCU_STREAM = 2,
  SWCU_EVENT = 3,
  SWCU_MODULE = 4,
  SWCU_LIBRARY = 5,
  SWCU_DEVICE_ALLOCATION = 6,
  SWCU_HOST_ALLOCATION = 7,
  SWCU_HOST_REGISTRATION = 8,
  SWCU_MEMORY_POOL = 9,
  SWCU_GRAPH = 10,
  SWCU_GRAPH_EXEC = 11,
  SWCU_USER_OBJECT = 12,
  SWCU_LINK_STATE = 13,
  SWCU_IPC_MAPPING = 14,
  /* Version 5 and later. */
  SWCU_VMM_ALLOCATION = 15,      /* cuMemCreate/cuMemImportFromShareableHandle allocations (live
                                    while a handle reference or a mapping holds them) */
  SWCU_ADDRESS_RESERVATION = 16, /* cuMemAddressReserve ranges */
  /* Version 6 and later. */
  SWCU_GREEN_CONTEXT = 17, /* cuGreenCtxCreate */
  /* Version 7 and later. */
  SWCU_ARRAY = 18,              /* CUDA arrays, including the levels of mipmapped arrays */
  SWCU_MIPMAPPED_ARRAY = 19,    /* cuMipmappedArrayCreate */
  SWCU_EXTERNAL_MEMORY = 20,    /* cuImportExternalMemory */
  SWCU_EXTERNAL_SEMAPHORE = 21, /* cuImportExternalSemaphore */
  SWCU_HANDLE_KIND_COUNT = 22
} swcu_handle_kind;

/* One entry of the call counters: an exported symbol name and how often it ran. */
typedef struct swcu_call_count {
  const char* name;         /* exported symbol, e.g. "cuMemAlloc_v2" */
  const char* base_name;    /* name without ABI suffix, e.g. "cuMemAlloc" */
  unsigned long long calls; /* calls since start or the last reset_call_counts() */
} swcu_call_count;

/* One kernel launch, as the launch log records it and a registered host function sees it.
 * Every pointer stays valid until clear_launch_log() or until the record leaves the log (for a
 * host function: while it runs). */
typedef struct swcu_launch {
  const char* kernel; /* entry name (mangled for C++ kernels) */
  unsigned grid[3];
  unsigned block[3];
  unsigned cluster[3];         /* {1,1,1} unless a cluster attribute was given */
  unsigned shared_bytes;       /* dynamic shared memory per block */
  int cooperative;             /* 1 for cuLaunchCooperativeKernel or the attribute */
  int priority;                /* the priority attribute, else the stream's */
  CUstream stream;             /* as passed to the launch (NULL: the default stream) */
  size_t param_count;          /* 0 when the layout is unknown (a buffer from `extra`) */
  const size_t* param_offsets; /* param_count offsets into `params` */
  const size_t* param_sizes;   /* param_count sizes */
  const unsigned char* params; /* the packed parameter buffer */
  size_t params_size;
} swcu_launch;

/* A host function standing in for a kernel: runs once per launch, in stream order. */
typedef void (*swcu_kernel_fn)(const swcu_launch* launch, void* user);

typedef struct swcu_control {
  size_t struct_size; /* sizeof(swcu_control) of the driver that filled it */
  int version;        /* SWCU_CONTROL_VERSION of that driver */

  /* Live handles of one kind, of every kind. */
  size_t (*live_handles)(swcu_handle_kind kind);
  size_t (*live_handles_total)(void);
  /* A readable name for a kind ("stream"), or "unknown". */
  const char* (*handle_kind_name)(swcu_handle_kind kind);

  /* Calls of one function since the last reset. `name` is a base name ("cuMemAlloc",
   * counting every ABI variant) or an exact exported name ("cuMemAlloc_v2"). Calls made
   * through cuGetProcAddress pointers and direct calls count the same. */
  unsigned long long (*call_count)(const char* name);
  /* Calls of all driver functions since the last reset (control calls are not counted). */
  unsigned long long (*total_call_count)(void);
  /* Copies up to `capacity` non-zero counters into `out`; returns how many are non-zero. */
  size_t (*call_counts)(swcu_call_count* out, size_t capacity);
  void (*reset_call_counts)(void);

  /* Adds a fault rule; returns 0, or -1 with a message in last_error(). Grammar:
   *   rule  := name ':' when ':' code
   *   name  := a base name ("cuMemAlloc") or exact exported name ("cuMemAlloc_v2")
   *   when  := N        the Nth matching call after the rule was added (1-based)
   *          | N '+'    the Nth and every later matching call
   *          | '*%' K   every Kth matching call
   *   code  := a CUresult name ("CUDA_ERROR_OUT_OF_MEMORY") or number from 1 to 1023 ("2")
   *   then optional modifiers, each after a ':':
   *          async    the call succeeds and the stream operation it enqueues fails with the
   *                   code when it executes; the next synchronizing call reports it
   *          sticky   the failure also breaks the context: every later call on it returns
   *                   the code until the context is destroyed
   * A call that a (not async) rule fails returns the code before touching any state. Several
   * rules may be given at once, separated by ';'. */
  int (*add_fault_rule)(const char* rules);
  void (*clear_fault_rules)(void);
  /* The message of the last failed control call on this thread ("" if none). */
  const char* (*last_error)(void);

  /* Depth of the calling thread's context stack (0 when no context is current). */
  int (*context_stack_depth)(void);

  /* Version 2 and later. */

  /* Handles of one kind destroyed because the context that owned them was destroyed or reset
   * (cuCtxDestroy, the last cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxReset), since the
   * process started. They no longer count as live; a program that relies on this usually leaks
   * them. */
  size_t (*reclaimed_handles)(swcu_handle_kind kind);

  /* Version 3 and later: kernels. */

  /* Registers `fn` (with `user`) as the host function that runs for each launch of the kernel
   * `name` (the entry name, mangled for C++ kernels), replacing any earlier one; fn NULL
   * removes it. It runs in stream order, without the driver's lock: driver calls made from it
   * return CUDA_ERROR_NOT_PERMITTED (control calls work). A launch of a kernel without one is
   * logged and completes, with a one-time note on stderr. Returns 0 (-1 for a NULL name). */
  int (*register_kernel)(const char* name, swcu_kernel_fn fn, void* user);
  /* Launches recorded since the last clear_launch_log(), in the order they were made: the
   * newest SWCUDA_LAUNCH_LOG of them (default 4096; 0 records none), so a long program runs in
   * constant memory. */
  size_t (*launch_log_size)(void);
  /* Copies entry `index` into *out; 0, or -1 if out of range (or out is NULL). Its pointers
   * stay valid until clear_launch_log(). */
  int (*launch_log_entry)(size_t index, swcu_launch* out);
  void (*clear_launch_log)(void);

  /* Version 4 and later: graphs. */

  /* Sets the value of a conditional handle (cuGraphConditionalHandleCreate) for the graph
   * launch in progress, as cudaGraphSetConditional does in device code: for a host node or an
   * emulated kernel of that launch, on the thread that runs it. Returns 0, or -1 (with a
   * message in last_error()) when the calling thread runs no graph launch with that handle. */
  int (*set_conditional)(CUgraphConditionalHandle handle, unsigned int value);
} swcu_control;

#ifdef __cplusplus
}
#endif

#endif /* SWCUDA_CONTROL_H */
