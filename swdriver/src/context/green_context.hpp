// Green contexts (green_context.cpp, resources in dev_resource.cpp): a partition of the
// simulated device's SMs with its own context, which shares its primary context's modules and
// events.
#pragma once

#include <cstdint>
#include <memory>

#include "core/state.hpp"

namespace swcu {

/// Minimum SMs of a split group and its granularity on the simulated device (compute capability
/// 9.0: "The minimum count is 8 SMs and must be a multiple of 8", cuda.h, Green Contexts), and
/// with CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING (one TPC: 2 SMs).
inline constexpr unsigned kSmPartitionMin = 8;
inline constexpr unsigned kSmPartitionMinIgnoringCoscheduling = 2;
/// SMs guaranteed co-scheduled in a whole-device resource: 8, as an H200 (driver 580.159.04)
/// reports for its 132 SMs, although cuda.h says smCount "is a multiple of this value".
inline constexpr unsigned kDeviceSmAlignment = 8;

/// What the driver writes into a CUdevResource's internal padding: where the resource came
/// from, so that descriptors and splits can check their inputs.
struct ResourceTag {
  std::uint32_t magic;
  std::int32_t device;
  std::uint64_t split;  ///< the split that made it; 0: a device, context or green context's
  std::uint32_t index;  ///< its place in the split (the remainder comes last)
  std::uint32_t sm_count;
};
inline constexpr std::uint32_t kResourceMagic = 0x53574752;  // "SWGR"

/// A green context handle (SWCU_GREEN_CONTEXT). Its context (cuCtxFromGreenCtx) is `view`.
struct GreenContext final : Object {
  GreenContext() noexcept : Object(SWCU_GREEN_CONTEXT) {}
  std::unique_ptr<Context> view;
  unsigned sm_alignment = kSmPartitionMin;  ///< smCoscheduledAlignment of its resource
  unsigned long long id = 0;                ///< cuGreenCtxGetId
};

/// Writes an SM resource of `sm_count` SMs of `device` into `out`.
void write_sm_resource(CUdevResource& out, int device, unsigned sm_count, unsigned min_partition,
                       unsigned alignment, std::uint64_t split, std::uint32_t index) noexcept;

}  // namespace swcu
