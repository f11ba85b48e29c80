// Contexts: the primary context of a device, created contexts, and making one current.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/event_ref.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/flags.hpp"

namespace cuwrap {

/// Flags of a created or primary context (CU_CTX_*). Combine with |.
enum class context_flags : unsigned {
  sched_auto = CU_CTX_SCHED_AUTO,                      ///< let the driver choose (default)
  sched_spin = CU_CTX_SCHED_SPIN,                      ///< spin while waiting for the GPU
  sched_yield = CU_CTX_SCHED_YIELD,                    ///< yield the thread while waiting
  sched_blocking_sync = CU_CTX_SCHED_BLOCKING_SYNC,    ///< block on a sync primitive
  map_host = CU_CTX_MAP_HOST,                          ///< allow mapped pinned memory
  lmem_resize_to_max = CU_CTX_LMEM_RESIZE_TO_MAX,      ///< keep local memory after resizes
  coredump_enable = CU_CTX_COREDUMP_ENABLE,            ///< GPU core dumps on exceptions
  user_coredump_enable = CU_CTX_USER_COREDUMP_ENABLE,  ///< user-triggered core dumps
  sync_memops = CU_CTX_SYNC_MEMOPS,                    ///< synchronous memory operations
};

/// context_flags combine with |, & and has() (cuwrap/flags.hpp).
template <>
inline constexpr bool is_flags_enum<context_flags> = true;

/// Per-context limits (CUlimit).
enum class context_limit {
  stack_size = CU_LIMIT_STACK_SIZE,                             ///< GPU thread stack, bytes
  printf_fifo_size = CU_LIMIT_PRINTF_FIFO_SIZE,                 ///< printf buffer, bytes
  malloc_heap_size = CU_LIMIT_MALLOC_HEAP_SIZE,                 ///< device malloc heap, bytes
  device_runtime_sync_depth = CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,  ///< nesting of device sync
  device_runtime_pending_launch_count = CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
  max_l2_fetch_granularity = CU_LIMIT_MAX_L2_FETCH_GRANULARITY,  ///< bytes
  persisting_l2_cache_size = CU_LIMIT_PERSISTING_L2_CACHE_SIZE,  ///< bytes
};

/// The preferred split between L1 cache and shared memory (CUfunc_cache).
enum class cache_config {
  prefer_none = CU_FUNC_CACHE_PREFER_NONE,
  prefer_shared = CU_FUNC_CACHE_PREFER_SHARED,
  prefer_l1 = CU_FUNC_CACHE_PREFER_L1,
  prefer_equal = CU_FUNC_CACHE_PREFER_EQUAL,
};

/// The range of stream priorities; numerically lower is higher priority.
struct stream_priority_range {
  int least;     ///< the lowest priority (numerically largest), the default
  int greatest;  ///< the highest priority (numerically smallest)
};

/// A non-owning view of a context. Cheap to copy; it does not keep the context alive.
class context_ref {
 public:
  using native_handle_type = CUcontext;

  /// Views `handle` (not owned).
  constexpr context_ref(native_handle_type handle) noexcept : handle_{handle} {}
  context_ref(std::nullptr_t) = delete;

  /// The driver's handle (null for a moved-from context).
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// True for a view of a moved-from context: its operations throw cuwrap::usage_error.
  [[nodiscard]] constexpr bool empty() const noexcept { return handle_ == nullptr; }

  /// The device the context belongs to (cuCtxGetDevice, made current if it is not).
  [[nodiscard]] cuwrap::device device(
      std::source_location where = std::source_location::current()) const;
  /// Waits for all work in the context (cuCtxSynchronize, made current if it is not).
  /// Then rethrows the first exception a host callback (stream::enqueue) of one of the
  /// context's streams threw and no stream synchronize() has collected yet.
  void synchronize(std::source_location where = std::source_location::current()) const;
  /// The context's flags (cuCtxGetFlags).
  [[nodiscard]] context_flags flags(
      std::source_location where = std::source_location::current()) const;
  /// Replaces the context's flags (cuCtxSetFlags, made current if it is not). Only the
  /// scheduling policy, coredump and sync_memops flags may change; the driver refuses others.
  void set_flags(context_flags flags,
                 std::source_location where = std::source_location::current()) const;
  /// Records in `e` all the work of the context submitted so far, in all its streams
  /// (cuCtxRecordEvent, CUDA 12.5; one driver call). `e` must belong to this context; the
  /// driver refuses a context with a capturing stream and invalidates the capture.
  void record_event(event_ref e,
                    std::source_location where = std::source_location::current()) const;
  /// Makes all work submitted to the context from now on, in any of its streams, wait for
  /// `e`'s recorded work, without blocking the calling thread (cuCtxWaitEvent, CUDA 12.5; one
  /// driver call). `e` may belong to another context or device.
  void wait_event(event_ref e, std::source_location where = std::source_location::current()) const;
  /// A limit's value (cuCtxGetLimit).
  [[nodiscard]] std::size_t limit(
      context_limit which, std::source_location where = std::source_location::current()) const;
  /// Sets a limit (cuCtxSetLimit); the driver may round the value.
  void set_limit(context_limit which, std::size_t value,
                 std::source_location where = std::source_location::current()) const;
  /// The stream priorities this context supports (cuCtxGetStreamPriorityRange).
  [[nodiscard]] stream_priority_range stream_priorities(
      std::source_location where = std::source_location::current()) const;
  /// The preferred cache configuration (cuCtxGetCacheConfig).
  [[nodiscard]] cuwrap::cache_config cache_config(
      std::source_location where = std::source_location::current()) const;
  /// Sets the preferred cache configuration (cuCtxSetCacheConfig).
  void set_cache_config(cuwrap::cache_config config,
                        std::source_location where = std::source_location::current()) const;
  /// The context's process-unique id (cuCtxGetId).
  [[nodiscard]] unsigned long long id(
      std::source_location where = std::source_location::current()) const;

  friend constexpr bool operator==(context_ref, context_ref) noexcept = default;

 protected:
  native_handle_type handle_;
};

/// The context current on this thread, if any (cuCtxGetCurrent).
[[nodiscard]] std::optional<context_ref> current_context(
    std::source_location where = std::source_location::current());

/// Makes a context current for a scope, only if it is not already current (one
/// cuCtxGetCurrent), and restores the previous one on exit (cuCtxPushCurrent /
/// cuCtxPopCurrent). The destructor never throws.
class scoped_current_context {
 public:
  /// Makes `ctx` current unless it already is. Throws cuwrap::error if that fails.
  explicit scoped_current_context(context_ref ctx,
                                  std::source_location where = std::source_location::current());
  ~scoped_current_context();
  scoped_current_context(const scoped_current_context&) = delete;
  scoped_current_context& operator=(const scoped_current_context&) = delete;

 private:
  bool pushed_ = false;
};

namespace detail {
/// Owns one reference to a context: a primary-context retain, a created context or a green
/// context. Children (streams, events, buffers, modules) share it, so the context outlives all
/// of them.
struct context_owner {
  CUcontext handle;
  CUdevice device;
  bool primary;
  CUgreenCtx green = nullptr;  ///< a green context's: destroyed with cuGreenCtxDestroy
  context_owner(CUcontext h, CUdevice d, bool p, CUgreenCtx g = nullptr) noexcept
      : handle{h}, device{d}, primary{p}, green{g} {}
  ~context_owner();
  context_owner(const context_owner&) = delete;
  context_owner& operator=(const context_owner&) = delete;
};
}  // namespace detail

/// What children hold: a context view plus shared ownership of the context's lifetime.
/// Base of primary_context and context; pass `const owning_context&` to constructors that
/// create children.
class owning_context : public context_ref {
 public:
  /// The shared lifetime token that children keep.
  [[nodiscard]] const std::shared_ptr<const detail::context_owner>& lifetime() const noexcept {
    return owner_;
  }
  /// The device of this context (no driver call).
  [[nodiscard]] cuwrap::device device(
      std::source_location where = std::source_location::current()) const;
  /// True after a move: the object owns nothing.
  [[nodiscard]] bool empty() const noexcept { return owner_ == nullptr; }
  /// The lifetime token, for a child that `type`'s `operation` makes (e.g. "stream",
  /// "stream"). Throws cuwrap::usage_error naming them if this context was moved from: call it
  /// before any driver call.
  [[nodiscard]] const std::shared_ptr<const detail::context_owner>& lifetime_for(
      const char* type, const char* operation, std::source_location where = {}) const {
    detail::expect_argument_not_moved_from(!empty(), type, operation, "context", where);
    return owner_;
  }

 protected:
  explicit owning_context(std::shared_ptr<const detail::context_owner> owner) noexcept
      : context_ref{owner ? owner->handle : CUcontext{}}, owner_{std::move(owner)} {}
  owning_context(owning_context&& other) noexcept
      : context_ref{std::exchange(other.handle_, CUcontext{})}, owner_{std::move(other.owner_)} {}
  owning_context& operator=(owning_context&& other) noexcept {
    handle_ = std::exchange(other.handle_, CUcontext{});
    owner_ = std::move(other.owner_);
    return *this;
  }
  ~owning_context() = default;

 private:
  std::shared_ptr<const detail::context_owner> owner_;
};

/// A device's primary context, retained for this object's life (cuDevicePrimaryCtxRetain,
/// released with cuDevicePrimaryCtxRelease when the last user, including children, goes).
class primary_context : public owning_context {
 public:
  /// Retains `dev`'s primary context. Throws cuwrap::error if the driver refuses.
  explicit primary_context(cuwrap::device dev,
                           std::source_location where = std::source_location::current());
  primary_context(primary_context&&) noexcept = default;
  primary_context& operator=(primary_context&&) noexcept = default;

  /// True if `dev`'s primary context is active (cuDevicePrimaryCtxGetState).
  [[nodiscard]] static bool is_active(cuwrap::device dev,
                                      std::source_location where = std::source_location::current());
  /// The flags `dev`'s primary context has or will be created with (cuDevicePrimaryCtxGetState).
  [[nodiscard]] static context_flags flags(
      cuwrap::device dev, std::source_location where = std::source_location::current());
  /// Sets the flags of `dev`'s primary context (cuDevicePrimaryCtxSetFlags).
  static void set_flags(cuwrap::device dev, context_flags flags,
                        std::source_location where = std::source_location::current());
  /// Destroys all allocations and resets `dev`'s primary context (cuDevicePrimaryCtxReset).
  /// Every handle made in it becomes invalid: call only when none are left.
  static void reset(cuwrap::device dev,
                    std::source_location where = std::source_location::current());
};

/// The kind of data a CIG (CUDA in graphics) context shares with a graphics API (CUcigDataType).
enum class cig_data_type : unsigned {
  d3d12_command_queue = CIG_DATA_TYPE_D3D12_COMMAND_QUEUE,  ///< a D3D12 command queue
  nv_blob = CIG_DATA_TYPE_NV_BLOB,  ///< an NVIDIA data blob (Vulkan and other NV clients)
};

/// Sharing a graphics client's work submission (CUctxCigParam): the context runs its work on
/// the client's queue. Needs a driver and device that support CIG (Windows); the software
/// driver refuses it with CUDA_ERROR_NOT_SUPPORTED.
struct cig_params {
  cig_data_type type = cig_data_type::d3d12_command_queue;  ///< what `shared_data` is
  void* shared_data = nullptr;                              ///< the client's handle
};

/// Optional parameters of a created context (CUctxCreateParams). At most one of the two may
/// be set; the driver refuses both together (CUDA_ERROR_INVALID_VALUE).
struct context_options {
  /// Execution affinity: the number of SMs the context may use (CU_EXEC_AFFINITY_TYPE_SM_COUNT).
  /// Only honoured where the device supports it (under MPS); elsewhere the driver refuses it
  /// with CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY.
  std::optional<unsigned> sm_count = std::nullopt;
  /// Shares a graphics client's queue (CIG).
  std::optional<cig_params> cig = std::nullopt;
};

/// A context created for this object's life with typed flags (cuCtxCreate_v4, destroyed with
/// cuCtxDestroy when the last user, including children, goes). Creating it leaves the
/// calling thread's current context unchanged.
class context : public owning_context {
 public:
  /// Creates a context on `dev`. Throws cuwrap::error if the driver refuses; nothing is left.
  explicit context(cuwrap::device dev, context_flags flags = context_flags::sched_auto,
                   std::source_location where = std::source_location::current());
  /// Creates a context on `dev` with execution affinity or CIG parameters (cuCtxCreate_v4).
  /// Throws cuwrap::error naming the options if the driver refuses them; nothing is left.
  context(cuwrap::device dev, context_flags flags, const context_options& options,
          std::source_location where = std::source_location::current());
  context(context&&) noexcept = default;
  context& operator=(context&&) noexcept = default;
};

static_assert(!std::is_copy_constructible_v<primary_context> &&
              std::is_nothrow_move_constructible_v<primary_context>);
static_assert(!std::is_copy_constructible_v<context> &&
              std::is_nothrow_move_constructible_v<context>);
static_assert(sizeof(context) == sizeof(CUcontext) + sizeof(std::shared_ptr<int>));

}  // namespace cuwrap
