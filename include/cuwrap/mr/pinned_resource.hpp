// The pinned host memory resource: cuMemHostAlloc / cuMemFreeHost.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>

#include "cuwrap/context.hpp"
#include "cuwrap/host_memory.hpp"
#include "cuwrap/mr/resource_base.hpp"

namespace cuwrap::mr {

/// Page-locked host memory (cuMemHostAlloc with the given flags, freed with cuMemFreeHost), made
/// in one context (current for the call only if it is not). Host code accesses it directly, and
/// kernels through the same address under unified addressing (the driver maps all pinned
/// memory of a 64-bit process into every device's address space; write-combined memory too,
/// only slow to read from the host). Synchronous only. Copyable; keeps its context alive. Two
/// pinned resources are equal when they are of the same context with the same flags. Zero
/// bytes allocate nothing and give nullptr. An alignment over driver_alignment throws
/// cuwrap::usage_error.
class pinned_resource {
 public:
  /// A resource allocating in `ctx` with `flags`. Throws cuwrap::usage_error if `ctx` was
  /// moved from.
  explicit pinned_resource(const owning_context& ctx, pinned_flags flags = pinned_flags::none,
                           std::source_location where = std::source_location::current());

  /// cuMemHostAlloc of `bytes`. Throws cuwrap::out_of_memory naming the bytes and the device.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current());
  /// cuMemFreeHost (errors go to the nothrow handler).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept;

  /// The flags allocations are made with.
  [[nodiscard]] pinned_flags flags() const noexcept { return flags_; }
  /// The context allocations are made in (null once moved from).
  [[nodiscard]] context_ref context() const noexcept {
    return context_ref{context_ ? context_->handle : CUcontext{}};
  }

  /// Equal when of the same context and flags.
  friend bool operator==(const pinned_resource& a, const pinned_resource& b) noexcept {
    return a.context_ == b.context_ && a.flags_ == b.flags_;
  }
  /// Host code accesses the memory.
  friend constexpr void get_property(const pinned_resource&, host_accessible) noexcept {}
  /// Kernels access it through the same address (unified addressing).
  friend constexpr void get_property(const pinned_resource&, device_accessible) noexcept {}

 private:
  std::shared_ptr<const cuwrap::detail::context_owner> context_;
  pinned_flags flags_;
};

static_assert(resource_with<pinned_resource, host_accessible, device_accessible>);
static_assert(!stream_ordered_resource<pinned_resource>);

}  // namespace cuwrap::mr
