// What the driver knows about an address, and how much device memory is free.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>

#include "cuwrap/context.hpp"

namespace cuwrap {

/// The kind of memory an address points into.
enum class memory_type {
  unregistered,  ///< not known to CUDA: ordinary pageable host memory
  host,          ///< page-locked host memory (pinned or registered)
  device,        ///< device memory
  managed,       ///< managed (unified) memory
};

/// The driver's view of an address (cuPointerGetAttributes).
struct pointer_info {
  memory_type type = memory_type::unregistered;  ///< what kind of memory
  int device = -1;                               ///< the device ordinal; -1 if none
  CUcontext context = nullptr;                   ///< the owning context, if any
  CUdeviceptr range_start = 0;  ///< the start of the allocation containing the address
  std::size_t range_size = 0;   ///< the size of that allocation in bytes
};

/// Asks the driver about `address` in one call (cuPointerGetAttributes). An address CUDA does
/// not know gives memory_type::unregistered, not an error.
[[nodiscard]] pointer_info pointer_attributes(
    CUdeviceptr address, std::source_location where = std::source_location::current());
/// The same for a host or device pointer.
[[nodiscard]] inline pointer_info pointer_attributes(
    const void* pointer, std::source_location where = std::source_location::current()) {
  return pointer_attributes(reinterpret_cast<CUdeviceptr>(pointer), where);  // NOLINT: UVA
}

/// Free and total memory of a context's device, in bytes.
struct memory_usage {
  std::size_t free = 0;   ///< bytes available for allocation
  std::size_t total = 0;  ///< the device's memory
};

/// Free and total memory of `ctx`'s device (cuMemGetInfo, with `ctx` current).
[[nodiscard]] memory_usage memory_info(
    context_ref ctx, std::source_location where = std::source_location::current());

}  // namespace cuwrap
