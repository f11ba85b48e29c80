// What a cuwrap memory resource is: the synchronous and stream-ordered resource concepts and the
// properties that say where a resource's memory can be accessed.
#pragma once

#include <concepts>
#include <cstddef>

#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

/// Property: kernels on a device can access the memory (device, managed, pinned-mapped).
struct device_accessible {};
/// Property: host code can access the memory (pinned, managed, host pools).
struct host_accessible {};

/// True when `R` declares `Property`, as a hidden friend
/// `friend constexpr void get_property(const R&, Property) noexcept {}` (CCCL's convention).
template <class R, class Property>
concept has_property = requires(const R& r) {
  get_property(r, Property{});
};

/// A synchronous memory resource: allocate(bytes, alignment) returns memory usable once it
/// returns; deallocate(p, bytes, alignment) frees it with the same size and alignment. Two
/// resources compare equal when one can free what the other allocated.
template <class R>
concept resource = std::equality_comparable<R> &&
    requires(R& r, void* p, std::size_t bytes, std::size_t alignment) {
  { r.allocate(bytes, alignment) } -> std::same_as<void*>;
  { r.deallocate(p, bytes, alignment) }
  noexcept->std::same_as<void>;
};

/// A stream-ordered memory resource: besides the synchronous calls, allocate(stream, bytes,
/// alignment) gives memory usable by work queued on `stream` after the call, and
/// deallocate(stream, p, bytes, alignment) frees it once the work queued before it has run.
template <class R>
concept stream_ordered_resource = resource<R> &&
    requires(R& r, stream_ref s, void* p, std::size_t bytes, std::size_t alignment) {
  { r.allocate(s, bytes, alignment) } -> std::same_as<void*>;
  { r.deallocate(s, p, bytes, alignment) } -> std::same_as<void>;
};

/// A resource with every one of `Properties`.
template <class R, class... Properties>
concept resource_with = resource<R> &&(has_property<R, Properties>&&...);

/// A stream-ordered resource with every one of `Properties`.
template <class R, class... Properties>
concept stream_ordered_resource_with = stream_ordered_resource<R> &&
    (has_property<R, Properties>&&...);

}  // namespace cuwrap::mr
