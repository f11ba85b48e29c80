// launch_config: grid and block dimensions, dynamic shared memory and opt-in launch
// attributes (every CU_LAUNCH_ATTRIBUTE_* of CUDA 13's cuda.h), validated in one place when set.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <source_location>
#include <span>

#include "cuwrap/detail/event_ref.hpp"
#include "cuwrap/stream_attributes.hpp"

namespace cuwrap {

/// Three launch dimensions; unspecified ones are 1.
struct dims {
  unsigned x = 1;  ///< the fastest-varying dimension
  unsigned y = 1;  ///< the second dimension
  unsigned z = 1;  ///< the slowest-varying dimension
  /// x * y * z.
  [[nodiscard]] constexpr unsigned long long volume() const noexcept {
    return static_cast<unsigned long long>(x) * y * z;
  }
  friend constexpr bool operator==(dims, dims) noexcept = default;
};

namespace detail {
/// A value and the call site that produced it: lets variadic functions report where they were
/// called from (the default argument is evaluated at the caller's implicit conversion).
template <class T>
struct located {
  const T& value;
  std::source_location where;
  located(const T& v, std::source_location w = std::source_location::current()) noexcept
      : value{v}, where{w} {}
};
}  // namespace detail

/// How the blocks of a cluster are placed on SMs (CUclusterSchedulingPolicy).
enum class cluster_scheduling_policy : int {
  default_policy = CU_CLUSTER_SCHEDULING_POLICY_DEFAULT,  ///< the driver's default
  spread = CU_CLUSTER_SCHEDULING_POLICY_SPREAD,           ///< spread a cluster's blocks over SMs
  load_balancing = CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING,  ///< let the hardware balance
};

/// Named shared-memory carveouts (CUshared_carveout); any percentage 0..100 is accepted too.
enum class shared_memory_carveout : unsigned {
  max_l1 = CU_SHAREDMEM_CARVEOUT_MAX_L1,          ///< 0 %: the most L1 cache
  max_shared = CU_SHAREDMEM_CARVEOUT_MAX_SHARED,  ///< 100 %: the most shared memory
};

/// How a kernel is launched: grid and block dimensions, dynamic shared memory, and opt-in
/// launch attributes, one typed `with_*` option per CU_LAUNCH_ATTRIBUTE_* of cuda.h. Each
/// attribute is kept once (setting it again replaces the value). Every check that does not
/// need the kernel or the driver happens here, the same in every build type; errors
/// (cuwrap::error, errc::invalid_value) name the offending value. Without attributes a launch
/// is cuLaunchKernel; with any, cuLaunchKernelEx.
class launch_config {
 public:
  /// The number of attribute kinds cuda.h defines (every CU_LAUNCH_ATTRIBUTE_* but IGNORE):
  /// the most attributes a configuration holds.
  static constexpr std::size_t max_attributes = 15;

  /// `grid` blocks of `block` threads with `dynamic_shared_bytes` of dynamic shared memory.
  /// Throws if a dimension is 0 or beyond CUDA's limits (block: 1024 threads, z <= 64; grid:
  /// x < 2^31, y and z <= 65535).
  launch_config(dims grid, dims block, std::size_t dynamic_shared_bytes = 0,
                std::source_location where = std::source_location::current());
  /// Copies the grid, block, shared memory and the attributes set.
  launch_config(const launch_config& other) noexcept;
  /// Copies the grid, block, shared memory and the attributes set.
  launch_config& operator=(const launch_config& other) noexcept;
  ~launch_config() = default;

  /// One-dimensional: enough blocks of `block_size` threads to cover `elements` (at least
  /// one block). Throws if the grid would not fit CUDA's limit.
  [[nodiscard]] static launch_config linear(
      std::size_t elements, unsigned block_size, std::size_t dynamic_shared_bytes = 0,
      std::source_location where = std::source_location::current());

  /// CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: the kernel's L2 access-policy window. Throws
  /// unless the hit ratio is in [0, 1], `hit` is a known property and `miss` is normal or
  /// streaming (cuda.h: "Must be either NORMAL or STREAMING").
  launch_config& with_access_policy_window(
      const access_policy_window& window,
      std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_COOPERATIVE: all blocks are resident at once (grid-wide sync).
  launch_config& with_cooperative(bool cooperative = true) noexcept;
  /// CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY. Throws for a value outside the enum.
  launch_config& with_synchronization_policy(
      synchronization_policy policy, std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: thread-block clusters of `cluster` blocks
  /// (sm_90+). Each dimension must divide the grid's, and a preferred cluster set before must
  /// be a multiple of it.
  launch_config& with_cluster(dims cluster,
                              std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE. Throws for a value outside the
  /// enum.
  launch_config& with_cluster_scheduling_policy(
      cluster_scheduling_policy policy,
      std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: lets the next kernel in the
  /// stream start before this one finishes (programmatic dependent launch).
  launch_config& with_programmatic_serialization(bool allowed = true) noexcept;
  /// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT: records `e` once every block has triggered it
  /// (griddepcontrol.launch_dependents), or at each block's start with
  /// `trigger_at_block_start`. The event must be created with timing disabled (the driver
  /// checks); `flags` may not be event_record_flags::external (cuda.h), which throws here, as
  /// does an empty event.
  launch_config& with_programmatic_event(
      event_ref e, bool trigger_at_block_start = false,
      event_record_flags flags = event_record_flags::none,
      std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_PRIORITY: the launch's priority, overriding the stream's (the driver
  /// clamps it to the context's range).
  launch_config& with_priority(int priority) noexcept;
  /// CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: the domain ids of the logical domains (the
  /// driver checks them against CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT).
  launch_config& with_memory_sync_domain_map(memory_sync_domain_map map) noexcept;
  /// CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN. Throws for a value outside the enum.
  launch_config& with_memory_sync_domain(
      memory_sync_domain domain, std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION: a preferred substitute cluster. Each
  /// dimension must divide the grid's; with a cluster set, x and y must be multiples of the
  /// cluster's and z equal to it (cuda.h). Only takes effect with a regular cluster.
  launch_config& with_preferred_cluster(
      dims preferred, std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: records `e` once every block has begun.
  /// The event must be created with timing disabled (the driver checks); `flags` may not be
  /// event_record_flags::external, and `e` may not be empty (both throw here).
  launch_config& with_launch_completion_event(
      event_ref e, event_record_flags flags = event_record_flags::none,
      std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE: the kernel node made from this launch
  /// is device-updatable. Graphs only: cuda.h says a launch into a stream that does not
  /// capture fails (CUDA_ERROR_INVALID_VALUE); use it for captured launches and graph nodes.
  launch_config& with_device_updatable_kernel_node() noexcept;
  /// CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: `percent` of the unified L1/shared
  /// storage as shared memory, a hint. Throws unless 0..100.
  launch_config& with_shared_memory_carveout(
      unsigned percent, std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT with a named value.
  launch_config& with_shared_memory_carveout(
      shared_memory_carveout carveout,
      std::source_location where = std::source_location::current());
  /// CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING: a hint to maximize NVLink use.
  launch_config& with_nvlink_util_centric_scheduling(bool enabled = true) noexcept;

  /// The grid, in blocks.
  [[nodiscard]] const dims& grid() const noexcept { return grid_; }
  /// The block, in threads.
  [[nodiscard]] const dims& block() const noexcept { return block_; }
  /// Dynamic shared memory per block, in bytes.
  [[nodiscard]] std::size_t dynamic_shared_bytes() const noexcept { return shared_; }
  /// The launch attributes set, in the order first set (empty for a plain launch, which uses
  /// cuLaunchKernel).
  [[nodiscard]] std::span<const CUlaunchAttribute> attributes() const noexcept {
    return {attributes_.data(), count_};
  }
  /// The attribute `id` if set, else nullptr.
  [[nodiscard]] const CUlaunchAttribute* find(CUlaunchAttributeID id) const noexcept;

 private:
  CUlaunchAttribute& add(CUlaunchAttributeID id) noexcept;

  dims grid_;
  dims block_;
  std::size_t shared_ = 0;
  std::size_t count_ = 0;
  // Only the first count_ entries are set: a plain configuration writes none of these bytes.
  std::array<CUlaunchAttribute, max_attributes> attributes_;
};

}  // namespace cuwrap
