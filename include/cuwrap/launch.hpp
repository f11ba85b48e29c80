// Launching kernels on streams: typed launches checked at compile time, untyped launches
// checked against the kernel's parameter layout; exactly one driver call either way.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/kernel_arguments.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/kernel.hpp"
#include "cuwrap/launch_config.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

namespace detail {
/// Throws if `config` does not suit `k`: too many threads per block, or more dynamic shared
/// memory than the kernel allows. Messages name `api` (the call that was refused), the kernel
/// and the values.
[[noreturn]] void throw_launch_limit(const kernel& k, const launch_config& config,
                                     std::source_location where, const char* api);
/// Throws for an untyped launch whose arguments do not match the layout.
[[noreturn]] void throw_argument_mismatch(const kernel& k, std::size_t index, std::size_t given,
                                          std::size_t expected, std::source_location where);
[[noreturn]] void throw_argument_count(const kernel& k, std::size_t given,
                                       std::source_location where);
/// Throws for a launch the driver refused: `api`, the kernel's name and, when the kernel's
/// context is not the stream's, both contexts (context_mismatch()).
[[noreturn, gnu::cold]] void throw_launch_error(CUresult result, const char* api, const kernel& k,
                                                stream_ref s, std::source_location where);
/// "" when `k` can run in context `ctx` (a library kernel, a kernel of that context, or one
/// whose context is unknown); otherwise "; the kernel is from context 0x... (device N), the
/// stream's (or graph's) context is 0x... (device M)". Asks the driver for the devices.
[[nodiscard]] std::string context_mismatch(const kernel& k, CUcontext ctx);

/// Throws unless argument `index` has the size the layout expects.
[[gnu::always_inline]] inline void check_argument_size(const kernel& k, std::size_t index,
                                                       std::size_t given, std::size_t expected,
                                                       std::source_location where) {
  if (given != expected) [[unlikely]] {
    throw_argument_mismatch(k, index, given, expected, where);
  }
}

/// Throws (throw_launch_limit) unless `config` suits `k`'s limits; `api` names the call.
inline void check_limits(const kernel& k, const launch_config& config, std::source_location where,
                         const char* api = "cuLaunchKernel") {
  if (config.block().volume() > static_cast<unsigned long long>(k.max_threads_per_block()) ||
      config.dynamic_shared_bytes() > k.max_dynamic_shared_bytes()) [[unlikely]] {
    throw_launch_limit(k, config, where, api);
  }
}

/// `config` as the driver's CUlaunchConfig on stream `s`.
inline CUlaunchConfig native_config(const launch_config& config, CUstream s) noexcept {
  CUlaunchConfig native{};
  native.gridDimX = config.grid().x;
  native.gridDimY = config.grid().y;
  native.gridDimZ = config.grid().z;
  native.blockDimX = config.block().x;
  native.blockDimY = config.block().y;
  native.blockDimZ = config.block().z;
  native.sharedMemBytes = static_cast<unsigned>(config.dynamic_shared_bytes());
  native.hStream = s;
  native.attrs = const_cast<CUlaunchAttribute*>(config.attributes().data());
  native.numAttrs = static_cast<unsigned>(config.attributes().size());
  return native;
}

/// Throws cuwrap::usage_error if `s` or `k` was moved from: before the limits are checked
/// (a moved-from kernel has none) and before any driver call.
[[gnu::always_inline]] inline void expect_launchable(stream_ref s, const kernel& k,
                                                     std::source_location where) {
  expect_not_moved_from(!s.empty(), "stream", "launch", where);
  expect_argument_not_moved_from(k.get() != nullptr, "stream", "launch", "kernel", where);
}

/// The one driver call: cuLaunchKernel, or cuLaunchKernelEx when attributes are set. The launch
/// path is forced inline (g++ gives up on it with many arguments): see docs/performance.md.
[[gnu::always_inline]] inline void launch_raw(stream_ref s, const kernel& k,
                                              const launch_config& config, void** params,
                                              std::source_location where) {
  const auto& d = driver();
  const dims& g = config.grid();
  const dims& b = config.block();
  if (config.attributes().empty()) [[likely]] {
    const CUresult r = d.cuLaunchKernel(k.get(), g.x, g.y, g.z, b.x, b.y, b.z,
                                        static_cast<unsigned>(config.dynamic_shared_bytes()),
                                        s.get(), params, nullptr);
    if (r != CUDA_SUCCESS) [[unlikely]] {
      throw_launch_error(r, "cuLaunchKernel", k, s, where);
    }
    return;
  }
  CUlaunchConfig native = native_config(config, s.get());
  const CUresult r = d.cuLaunchKernelEx(&native, k.get(), params, nullptr);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    throw_launch_error(r, "cuLaunchKernelEx", k, s, where);
  }
}

template <class Tuple, std::size_t... I>
[[gnu::always_inline]] inline void launch_tuple(stream_ref s, const kernel& k,
                                                const launch_config& config, Tuple& values,
                                                std::index_sequence<I...>,
                                                std::source_location where) {
  if constexpr (sizeof...(I) == 0) {
    launch_raw(s, k, config, nullptr, where);
  } else {
    void* params[] = {static_cast<void*>(&std::get<I>(values))...};
    launch_raw(s, k, config, params, where);
  }
}
}  // namespace detail

/// Launches `k` on `s`. Each argument must convert to the declared parameter type without
/// narrowing (double to float, int to unsigned or float, long to int do not compile: convert
/// explicitly); device memory (device_span, device_buffer, stream_ordered_buffer,
/// managed_buffer) passes to a pointer parameter of its element type, and a moved-from buffer
/// throws cuwrap::usage_error. The config is checked against the kernel's limits. One driver
/// call.
template <class... Params, class... Args>
[[gnu::always_inline]] inline void launch(stream_ref s, const typed_kernel<void(Params...)>& k,
                                          detail::located<launch_config> config, Args&&... args) {
  static_assert(sizeof...(Args) == sizeof...(Params),
                "launch: the number of arguments differs from the kernel's parameters");
  if constexpr (sizeof...(Args) == sizeof...(Params)) {
    detail::expect_launchable(s, k, config.where);
    detail::check_limits(k, config.value, config.where);
    auto values =
        detail::typed_kernel_values<Params...>(std::index_sequence_for<Params...>{}, "stream",
                                               "launch", config.where, std::forward<Args>(args)...);
    detail::launch_tuple(s, k, config.value, values, std::index_sequence_for<Params...>{},
                         config.where);
  }
}

/// Launches an untyped kernel on `s`. The number of arguments and each argument's size are
/// checked against the kernel's parameter layout (when the driver reports it) before the
/// driver is called; errors name the kernel, the index and both sizes. Device memory passes as
/// its element pointer (a moved-from buffer throws cuwrap::usage_error). One driver call.
template <class... Args>
[[gnu::always_inline]] inline void launch(stream_ref s, const kernel& k,
                                          detail::located<launch_config> config, Args&&... args) {
  static_assert((std::is_trivially_copyable_v<detail::kernel_value_t<Args>> && ...),
                "launch: kernel arguments must be trivially copyable");
  detail::expect_launchable(s, k, config.where);
  if (k.layout_known()) {
    const auto params = k.params();
    if (params.size() != sizeof...(Args)) [[unlikely]] {
      detail::throw_argument_count(k, sizeof...(Args), config.where);
    }
    // Unrolled: one compare and branch per argument.
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (detail::check_argument_size(k, I, sizeof(detail::kernel_value_t<Args>), params[I].size,
                                   config.where),
       ...);
    }
    (std::index_sequence_for<Args...>{});
  }
  detail::check_limits(k, config.value, config.where);
  auto values = detail::untyped_kernel_values(std::index_sequence_for<Args...>{}, "stream",
                                              "launch", config.where, std::forward<Args>(args)...);
  detail::launch_tuple(s, k, config.value, values, std::index_sequence_for<Args...>{},
                       config.where);
}

template <class Kernel, class... Args>
[[gnu::always_inline]] inline void stream_ref::launch(const Kernel& k,
                                                      detail::located<launch_config> config,
                                                      Args&&... args) const {
  cuwrap::launch(*this, k, config, std::forward<Args>(args)...);
}

/// Occupancy queries (cuOccupancy*), on the driver's model of the current device (on the
/// software driver: 2048 threads, 32 blocks and 228 KiB of shared memory per SM, and the SMs of
/// the launching context, a green context's partition included).
namespace occupancy {

/// Options of the occupancy calculators (CU_OCCUPANCY_*).
enum class options : unsigned {
  none = CU_OCCUPANCY_DEFAULT,  ///< the default
  /// Ignore a global cache-configuration override (cuCtxSetCacheConfig) that would lower
  /// occupancy.
  disable_caching_override = CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE,
};

/// Blocks of `block_size` threads that fit on one multiprocessor at once
/// (cuOccupancyMaxActiveBlocksPerMultiprocessor).
[[nodiscard]] int max_active_blocks_per_multiprocessor(
    const kernel& k, int block_size, std::size_t dynamic_shared_bytes = 0,
    std::source_location where = std::source_location::current());
/// The same with options (cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags).
[[nodiscard]] int max_active_blocks_per_multiprocessor(
    const kernel& k, int block_size, std::size_t dynamic_shared_bytes, options flags,
    std::source_location where = std::source_location::current());

/// The block size with the best occupancy, and the smallest grid that reaches it.
struct block_size_suggestion {
  int min_grid_size = 0;  ///< blocks needed to fill the device
  int block_size = 0;     ///< threads per block
};
/// Suggests a block size (cuOccupancyMaxPotentialBlockSizeWithFlags); `block_size_limit` 0
/// means none.
[[nodiscard]] block_size_suggestion max_potential_block_size(
    const kernel& k, std::size_t dynamic_shared_bytes = 0, int block_size_limit = 0,
    options flags = options::none, std::source_location where = std::source_location::current());

}  // namespace occupancy

namespace detail {
/// The type-erased callable of occupancy::max_potential_block_size: `call(callable, block)`.
using shared_bytes_fn = std::size_t (*)(void* callable, int block_size);
/// cuOccupancyMaxPotentialBlockSizeWithFlags with a callback that reaches `callable` through a
/// thread_local slot (src/occupancy.cpp); rethrows what the callable threw.
[[nodiscard]] occupancy::block_size_suggestion potential_block_size(
    const kernel& k, shared_bytes_fn call, void* callable, int block_size_limit,
    occupancy::options flags, std::source_location where);
}  // namespace detail

namespace occupancy {

/// Suggests a block size when the dynamic shared memory depends on it: `shared_bytes(block)`
/// gives the bytes a block of `block` threads needs (cuOccupancyMaxPotentialBlockSizeWithFlags
/// with a CUoccupancyB2DSize). Any callable works, lambdas with captures included: the C
/// callback has no user pointer, so a stateless trampoline finds the callable through a
/// thread_local slot set for the duration of the call (restored after, so calls nest). The
/// driver calls it on the calling thread, during the call. An exception from the callable
/// stops the search (the driver gets 0 bytes for the remaining sizes) and is rethrown after the
/// driver returns.
template <class SharedBytes>
requires std::is_invocable_r_v<std::size_t, SharedBytes&, int>
[[nodiscard]] block_size_suggestion max_potential_block_size(
    const kernel& k, SharedBytes&& shared_bytes, int block_size_limit = 0,
    options flags = options::none, std::source_location where = std::source_location::current()) {
  using F = std::remove_reference_t<SharedBytes>;
  return cuwrap::detail::potential_block_size(
      k,
      [](void* callable, int block) -> std::size_t {
        return static_cast<std::size_t>((*static_cast<F*>(callable))(block));
      },
      const_cast<void*>(static_cast<const void*>(std::addressof(shared_bytes))), block_size_limit,
      flags, where);
}

/// The most dynamic shared memory a block can use with `blocks_per_sm` blocks of
/// `block_size` threads resident on each SM (cuOccupancyAvailableDynamicSMemPerBlock).
[[nodiscard]] std::size_t available_dynamic_shared_bytes(
    const kernel& k, int blocks_per_sm, int block_size,
    std::source_location where = std::source_location::current());

/// Clusters of `config`'s cluster size that can be active at once
/// (cuOccupancyMaxActiveClusters). The configuration names no stream, so the driver answers
/// for the current context (cuda.h: a NULL hStream): make the kernel's context current.
[[nodiscard]] int max_active_clusters(const kernel& k, const launch_config& config,
                                      std::source_location where = std::source_location::current());

/// The largest cluster size (in blocks) a launch of `config` could use
/// (cuOccupancyMaxPotentialClusterSize), for the current context as max_active_clusters.
[[nodiscard]] int max_potential_cluster_size(
    const kernel& k, const launch_config& config,
    std::source_location where = std::source_location::current());

}  // namespace occupancy

}  // namespace cuwrap
