// A memory resource over virtual memory management: each allocation reserves a large address
// range and maps physical memory into it on demand, so that it can grow (or shrink) in place,
// its address unchanged (the "expandable segments" pattern of PyTorch's caching allocator).
#pragma once

#include <cstddef>
#include <memory>
#include <source_location>

#include "cuwrap/device.hpp"
#include "cuwrap/mr/concepts.hpp"

namespace cuwrap::mr {

/// Device memory whose allocations grow in place. Each allocation is an address reservation of
/// `max_bytes` (cuMemAddressReserve) with physical chunks (cuMemCreate, cuMemMap,
/// cuMemSetAccess read-write for the device) mapped one after another from its start; resize
/// maps or unmaps chunks at the end. Copies share the allocations and compare equal; the
/// allocations are freed by deallocate, or when the last copy goes. Thread-safe.
class virtual_memory_resource {
 public:
  /// Allocations on device `d`, each able to grow to `max_bytes` (rounded up to the
  /// granularity): address space only, no memory is used until it is mapped.
  virtual_memory_resource(cuwrap::device d, std::size_t max_bytes,
                          std::source_location where = std::source_location::current());

  /// Maps `bytes` (rounded up to the granularity) in a new reservation and returns its start.
  /// `alignment` must be a power of two; the start is aligned to the larger of it and the
  /// granularity. Throws cuwrap::error (CUDA_ERROR_INVALID_VALUE when `bytes` exceeds
  /// max_bytes()), and then has created nothing.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = alignof(std::max_align_t),
                               std::source_location where = std::source_location::current());
  /// Frees what allocate returned: unmaps, releases and frees the range (cuMemUnmap waits for
  /// queued work). An unknown pointer is reported to the nothrow error handler.
  void deallocate(void* p, std::size_t bytes,
                  std::size_t alignment = alignof(std::max_align_t)) noexcept;

  /// Grows or shrinks the allocation at `p` in place to hold `bytes`: maps one new chunk
  /// after the mapped ones, or unmaps the chunks past `bytes` (rounded up to the granularity).
  /// Contents below the old size stay. Throws cuwrap::error; a failed grow leaves the
  /// allocation as it was.
  void resize(void* p, std::size_t bytes,
              std::source_location where = std::source_location::current());
  /// As resize, but never shrinks: does nothing when `bytes` is already mapped.
  void grow(void* p, std::size_t bytes,
            std::source_location where = std::source_location::current());
  /// The bytes mapped at `p` now (a multiple of granularity()). Throws cuwrap::usage_error for
  /// a pointer this resource did not allocate.
  [[nodiscard]] std::size_t mapped_bytes(
      const void* p, std::source_location where = std::source_location::current()) const;
  /// How many physical chunks are mapped at `p` (one per grow that mapped memory).
  [[nodiscard]] std::size_t chunk_count(
      const void* p, std::source_location where = std::source_location::current()) const;

  /// The size each allocation may grow to.
  [[nodiscard]] std::size_t max_bytes() const noexcept;
  /// The unit of mapping (the device's minimum allocation granularity).
  [[nodiscard]] std::size_t granularity() const noexcept;
  /// The device the memory is on.
  [[nodiscard]] cuwrap::device device() const noexcept;
  /// How many allocations are live.
  [[nodiscard]] std::size_t allocation_count() const;

  /// Equal when one can free what the other allocated (copies of one resource).
  friend bool operator==(const virtual_memory_resource& a,
                         const virtual_memory_resource& b) noexcept {
    return a.state_ == b.state_;
  }
  /// Kernels on the device can access the memory.
  friend constexpr void get_property(const virtual_memory_resource&, device_accessible) noexcept {}

  struct state;

 private:
  std::shared_ptr<state> state_;
};

static_assert(resource_with<virtual_memory_resource, device_accessible>);
static_assert(!has_property<virtual_memory_resource, host_accessible>);

}  // namespace cuwrap::mr
