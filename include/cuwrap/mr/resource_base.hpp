// What cuwrap's memory resources share: the alignment the driver guarantees (and the check
// that refuses more), CCCL's names for the stream-ordered calls, and the property tags as bases.
#pragma once

#include <cuda.h>

#include <concepts>
#include <cstddef>
#include <source_location>

#include "cuwrap/mr/concepts.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

/// The alignment every driver allocation has (cuMemAlloc, cuMemHostAlloc, cuMemAllocManaged and
/// the pools align to at least 256 bytes; CUDA Programming Guide, "Device Memory Accesses").
/// cuwrap's driver-backed resources refuse a larger alignment with cuwrap::usage_error rather
/// than over-allocate.
inline constexpr std::size_t driver_alignment = 256;
/// The alignment allocate() uses when none is given.
inline constexpr std::size_t default_alignment = alignof(std::max_align_t);

namespace detail {
/// Throws cuwrap::usage_error "cuwrap::<type>::allocate: alignment <n> is ...".
[[noreturn, gnu::cold]] void throw_bad_alignment(const char* type, std::size_t alignment,
                                                 std::source_location where);
/// Refuses (cuwrap::usage_error naming `type` and the alignment) an alignment that is not a
/// power of two or is more than driver_alignment.
[[gnu::always_inline]] inline void check_alignment(const char* type, std::size_t alignment,
                                                   std::source_location where) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > driver_alignment)
      [[unlikely]] {
    throw_bad_alignment(type, alignment, where);
  }
}

/// A stream as CCCL passes it (cuda::stream_ref): anything whose get() is the CUstream.
template <class S>
concept native_stream = requires(const S& s) {
  { s.get() } -> std::convertible_to<CUstream>;
};

/// CCCL's names for the stream-ordered calls (cuda::mr::async_resource):
/// allocate_async(bytes, alignment, stream) and deallocate_async(p, bytes, alignment, stream),
/// forwarding to the resource's allocate(stream, ...) and deallocate(stream, ...). Templates
/// over the stream type, so cuda::stream_ref works without this header including CCCL.
template <class Derived>
class cccl_async_names {
 public:
  /// allocate(stream_ref{s.get()}, bytes, alignment) under CCCL's name.
  template <native_stream S>
  void* allocate_async(std::size_t bytes, std::size_t alignment,
                       S s) requires stream_ordered_resource<Derived> {
    return static_cast<Derived&>(*this).allocate(stream_ref{s.get()}, bytes, alignment);
  }
  /// deallocate(stream_ref{s.get()}, p, bytes, alignment) under CCCL's name.
  template <native_stream S>
  void deallocate_async(void* p, std::size_t bytes, std::size_t alignment,
                        S s) requires stream_ordered_resource<Derived> {
    static_cast<Derived&>(*this).deallocate(stream_ref{s.get()}, p, bytes, alignment);
  }
};

/// Declares `Property` for every class deriving from it (found by argument-dependent lookup
/// through the base), so a class template can declare a pack of properties.
template <class Property>
struct with_property {
  friend constexpr void get_property(const with_property&, Property) noexcept {}
};
}  // namespace detail

}  // namespace cuwrap::mr
