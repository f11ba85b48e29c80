// Green contexts: SM resources of a device or context, splitting them into partitions, and
// green contexts that run work on one partition (cuda.h, Green Contexts; CUDA 12.4 and later).
#pragma once

#include <cuda.h>

#include <optional>
#include <source_location>
#include <span>
#include <type_traits>
#include <vector>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/event_ref.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/flags.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// How sm_resource::split() forms its groups (CUdevSmResourceSplit_flags). Combine with |.
enum class sm_split_flags : unsigned {
  none = 0,  ///< groups co-scheduled as the hardware requires (the default)
  /// Smaller groups and granularity, treating each SM apart, at the cost of large clusters
  ignore_sm_coscheduling = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING,
  /// Groups that allow the largest thread clusters (compute capability 9.0 and later)
  max_potential_cluster_size = CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE,
};

/// sm_split_flags combine with |, & and has() (cuwrap/flags.hpp).
template <>
inline constexpr bool is_flags_enum<sm_split_flags> = true;

struct sm_split;

/// A set of SMs of one device (a CUdevResource of type CU_DEV_RESOURCE_TYPE_SM), as the driver
/// wrote it: all of a device's or a context's SMs, or a group of a split. A plain value: it owns
/// nothing and may be copied freely.
class sm_resource {
 public:
  /// All SMs of `dev` (cuDeviceGetDevResource).
  [[nodiscard]] static sm_resource of(cuwrap::device dev,
                                      std::source_location where = std::source_location::current());
  /// The SMs `ctx` runs on: a green context's partition, else the device's (cuCtxGetDevResource).
  [[nodiscard]] static sm_resource of(context_ref ctx,
                                      std::source_location where = std::source_location::current());
  /// Takes a resource the driver wrote (for example one from a library written in C).
  [[nodiscard]] static sm_resource adopt(const CUdevResource& resource) noexcept {
    return sm_resource{resource};
  }

  /// Number of SMs (smCount; no driver call).
  [[nodiscard]] unsigned count() const noexcept { return resource_.sm.smCount; }
  /// The fewest SMs a split of this resource can put in a group (minSmPartitionSize).
  [[nodiscard]] unsigned min_partition_size() const noexcept {
    return resource_.sm.minSmPartitionSize;
  }
  /// SMs guaranteed to be co-scheduled together; count() is a multiple of it
  /// (smCoscheduledAlignment).
  [[nodiscard]] unsigned coscheduled_alignment() const noexcept {
    return resource_.sm.smCoscheduledAlignment;
  }
  /// The driver's struct.
  [[nodiscard]] const CUdevResource& native() const noexcept { return resource_; }

  /// How many groups of at least `min_count` SMs a split would make (cuDevSmResourceSplitByCount
  /// with no result array). Throws cuwrap::error naming the counts if `min_count` exceeds
  /// count() (before the driver is called) or the driver refuses.
  [[nodiscard]] unsigned group_count(
      unsigned min_count, sm_split_flags flags = sm_split_flags::none,
      std::source_location where = std::source_location::current()) const;
  /// Splits into up to `max_groups` disjoint groups of at least `min_count` SMs each (the driver
  /// rounds the count up to its granularity) and the remainder (cuDevSmResourceSplitByCount).
  /// A group cannot be split again before a green context is made of it. Throws cuwrap::error
  /// naming the counts if `min_count` exceeds count() or `max_groups` is 0 (both before the
  /// driver is called) or the driver refuses.
  [[nodiscard]] sm_split split(unsigned min_count, unsigned max_groups,
                               sm_split_flags flags = sm_split_flags::none,
                               std::source_location where = std::source_location::current()) const;

 private:
  explicit sm_resource(const CUdevResource& resource) noexcept : resource_{resource} {}
  CUdevResource resource_;
};

/// What sm_resource::split() makes: the groups (as many as fit, up to the number asked for) and
/// the SMs left over (possibly none), which do not have the groups' guarantees.
struct sm_split {
  std::vector<sm_resource> groups;  ///< disjoint, each of the same size
  sm_resource remainder;            ///< what no group took
};

/// A green context: a context whose work runs on a partition of a device's SMs
/// (cuGreenCtxCreate, destroyed with cuGreenCtxDestroy when the last user, including children,
/// goes). It is an owning_context, so streams, events, buffers and modules are made in it as in
/// any context; its context view is the handle cuCtxFromGreenCtx gives. It retains the device's
/// primary context while it lives. Move-only.
class green_context : public owning_context {
 public:
  /// A green context on `dev` with `sms` (all of them, or one group of a split)
  /// (cuDevResourceGenerateDesc, cuGreenCtxCreate, cuCtxFromGreenCtx). Throws cuwrap::error
  /// naming the device and SM count if the driver refuses; nothing is left.
  green_context(cuwrap::device dev, const sm_resource& sms,
                std::source_location where = std::source_location::current());
  /// A green context on `dev` with several groups of one split (and its remainder, if wanted).
  /// Throws cuwrap::error if `sms` is empty (before the driver is called) or the driver refuses
  /// (resources of different splits: CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION).
  green_context(cuwrap::device dev, std::span<const sm_resource> sms,
                std::source_location where = std::source_location::current());
  green_context(green_context&&) noexcept = default;
  green_context& operator=(green_context&&) noexcept = default;

  /// The green context's own handle (null when moved from).
  [[nodiscard]] CUgreenCtx green_handle() const noexcept {
    return empty() ? nullptr : lifetime()->green;
  }
  /// The SMs it runs on (cuGreenCtxGetDevResource).
  [[nodiscard]] sm_resource sms(std::source_location where = std::source_location::current()) const;
  /// Its process-unique green context id (cuGreenCtxGetId).
  [[nodiscard]] unsigned long long green_id(
      std::source_location where = std::source_location::current()) const;
  /// A new non-blocking stream whose work runs on this green context's SMs
  /// (cuGreenCtxStreamCreate; the driver clamps `priority` to the context's range). The stream
  /// keeps the green context alive.
  [[nodiscard]] stream create_stream(
      int priority = 0, std::source_location where = std::source_location::current()) const;
  /// Records in `e` all work submitted to the green context so far (cuGreenCtxRecordEvent). `e`
  /// must belong to the same primary context (CUDA_ERROR_INVALID_HANDLE otherwise).
  void record(event_ref e, std::source_location where = std::source_location::current()) const;
  /// Makes the green context's future work wait for `e`'s record (cuGreenCtxWaitEvent; `e` may
  /// belong to any context).
  void wait(event_ref e, std::source_location where = std::source_location::current()) const;
};

/// The green context `s` belongs to, or nullopt for a stream of an ordinary context
/// (cuStreamGetGreenCtx).
[[nodiscard]] std::optional<CUgreenCtx> green_context_of(
    stream_ref s, std::source_location where = std::source_location::current());

static_assert(!std::is_copy_constructible_v<green_context> &&
              std::is_nothrow_move_constructible_v<green_context>);

}  // namespace cuwrap
