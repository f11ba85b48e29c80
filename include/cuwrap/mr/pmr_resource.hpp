// pmr_resource: a host-accessible cuwrap resource as a std::pmr::memory_resource.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory_resource>
#include <utility>

#include "cuwrap/mr/concepts.hpp"

namespace cuwrap::mr {

/// A std::pmr::memory_resource that allocates from a copy of `R`, so std::pmr containers
/// (std::pmr::vector and the rest) can hold their elements in pinned or managed memory. Only
/// host-accessible resources are accepted (a compile-time constraint): a container's elements
/// are read and written by host code. do_allocate(bytes, alignment) is R's allocate (a
/// zero-byte request allocates one byte, since std::pmr needs a distinct pointer); what R
/// throws propagates (cuwrap::out_of_memory derives from cuwrap::error, not std::bad_alloc,
/// and an alignment R refuses throws cuwrap::usage_error). Two pmr_resources are equal when
/// both are pmr_resource<R> over equal resources.
template <class R>
requires resource_with<R, host_accessible>
class pmr_resource final : public std::pmr::memory_resource {
 public:
  /// Allocates from `r` (a copy of it).
  explicit pmr_resource(R r) : resource_{std::move(r)} {}

  /// The resource allocations go to.
  [[nodiscard]] R& resource() noexcept { return resource_; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    return resource_.allocate(std::max<std::size_t>(bytes, 1), alignment);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    resource_.deallocate(p, std::max<std::size_t>(bytes, 1), alignment);
  }
  [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    const auto* same = dynamic_cast<const pmr_resource*>(&other);
    return same != nullptr && same->resource_ == resource_;
  }

  R resource_;
};

}  // namespace cuwrap::mr
