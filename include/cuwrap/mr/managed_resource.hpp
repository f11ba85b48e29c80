// The managed memory resource: cuMemAllocManaged / cuMemFree.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>

#include "cuwrap/context.hpp"
#include "cuwrap/managed_buffer.hpp"
#include "cuwrap/mr/resource_base.hpp"

namespace cuwrap::mr {

/// Managed (unified) memory: cuMemAllocManaged with the given attach flags, freed with
/// cuMemFree, made in one context (current for the call only if it is not). Host code and
/// kernels use the same address. Synchronous only. Copyable; keeps its context alive. Two
/// managed resources are equal when they are of the same context with the same attach flags.
/// Zero bytes allocate nothing and give nullptr. An alignment over driver_alignment throws
/// cuwrap::usage_error.
class managed_resource {
 public:
  /// A resource allocating in `ctx`, attached as `attach`. Throws cuwrap::usage_error if `ctx`
  /// was moved from.
  explicit managed_resource(const owning_context& ctx,
                            managed_attach attach = managed_attach::global,
                            std::source_location where = std::source_location::current());

  /// cuMemAllocManaged of `bytes`. Throws cuwrap::out_of_memory naming the bytes and the device.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current());
  /// cuMemFree (errors go to the nothrow handler).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept;

  /// The attach flags allocations are made with.
  [[nodiscard]] managed_attach attach() const noexcept { return attach_; }
  /// The context allocations are made in (null once moved from).
  [[nodiscard]] context_ref context() const noexcept {
    return context_ref{context_ ? context_->handle : CUcontext{}};
  }

  /// Equal when of the same context and attach flags.
  friend bool operator==(const managed_resource& a, const managed_resource& b) noexcept {
    return a.context_ == b.context_ && a.attach_ == b.attach_;
  }
  /// Host code accesses the memory.
  friend constexpr void get_property(const managed_resource&, host_accessible) noexcept {}
  /// Kernels access the memory.
  friend constexpr void get_property(const managed_resource&, device_accessible) noexcept {}

 private:
  std::shared_ptr<const cuwrap::detail::context_owner> context_;
  managed_attach attach_;
};

static_assert(resource_with<managed_resource, host_accessible, device_accessible>);

}  // namespace cuwrap::mr
