// The device memory resource: cuMemAlloc / cuMemFree, and stream-ordered cuMemAllocAsync /
// cuMemFreeAsync.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>

#include "cuwrap/context.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/mr/resource_base.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

/// Device memory of one context's device. Synchronous: cuMemAlloc (with the context made
/// current only if it is not: a cuCtxGetCurrent, then one cuMemAlloc) and cuMemFree.
/// Stream-ordered: cuMemAllocAsync / cuMemFreeAsync on the given stream, from the device's
/// current pool (one driver call each); the stream must belong to the resource's device.
/// Copyable: copies share the context's lifetime, which the resource keeps alive. Two device
/// resources are equal when they are of the same context (each can free the other's memory).
/// Zero bytes allocate nothing and give nullptr; deallocating nullptr does nothing. An
/// alignment over driver_alignment (256) or not a power of two throws cuwrap::usage_error.
class device_resource : public detail::cccl_async_names<device_resource> {
 public:
  /// A resource allocating in `ctx`. Throws cuwrap::usage_error if `ctx` was moved from.
  explicit device_resource(const owning_context& ctx,
                           std::source_location where = std::source_location::current());

  /// cuMemAlloc of `bytes`. Throws cuwrap::out_of_memory naming the bytes and the device.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current());
  /// cuMemFree (errors go to the nothrow handler).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept;
  /// cuMemAllocAsync of `bytes` on `s`: usable by work queued on `s` after it.
  [[nodiscard]] void* allocate(stream_ref s, std::size_t bytes,
                               std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current());
  /// cuMemFreeAsync on `s`: freed once the work queued on `s` before it has run.
  void deallocate(stream_ref s, void* p, std::size_t bytes,
                  std::size_t alignment = default_alignment,
                  std::source_location where = std::source_location::current());

  /// The context allocations are made in (null once moved from).
  [[nodiscard]] context_ref context() const noexcept {
    return context_ref{context_ ? context_->handle : CUcontext{}};
  }
  /// The device the memory is on. Throws cuwrap::usage_error once moved from.
  [[nodiscard]] cuwrap::device device(
      std::source_location where = std::source_location::current()) const;

  /// Equal when both allocate in the same context.
  friend bool operator==(const device_resource& a, const device_resource& b) noexcept {
    return a.context_ == b.context_;
  }
  /// Kernels on the device access the memory.
  friend constexpr void get_property(const device_resource&, device_accessible) noexcept {}

 private:
  std::shared_ptr<const cuwrap::detail::context_owner> context_;
};

static_assert(stream_ordered_resource_with<device_resource, device_accessible>);
static_assert(!has_property<device_resource, host_accessible>);

}  // namespace cuwrap::mr
