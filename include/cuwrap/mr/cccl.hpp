// CCCL interop: makes cuwrap's memory resources satisfy CCCL's cuda::mr concepts
// (cuda::mr::resource_with, async_resource_with), so they pass into cuda::mr::resource_ref,
// async_resource_ref and CCCL/RMM-style code. Include it only where the CUDA toolkit's CCCL
// (include/cccl, C++17 or later) is on the include path. CCCL's memory resources are
// experimental: LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE must be defined before the first
// CCCL header; this header defines it if the includer did not, which suffices only when no CCCL
// header came before it (define it project-wide to be safe).
#pragma once

#ifndef LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#endif

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include "cuwrap/mr/concepts.hpp"

namespace cuwrap::mr {

// CCCL's names for the calls need nothing here: the synchronous calls have CCCL's names
// already (allocate(bytes, alignment), deallocate(p, bytes, alignment)), and every
// stream-ordered cuwrap resource has allocate_async(bytes, alignment, stream) and
// deallocate_async(p, bytes, alignment, stream) for any stream whose get() is a CUstream
// (detail::cccl_async_names), cuda::stream_ref included. What CCCL cannot see without this
// header are the properties: CCCL looks for get_property(resource, cuda::mr::device_accessible)
// by argument-dependent lookup, which finds these in cuwrap::mr, the namespace of every cuwrap
// resource and adaptor.

namespace detail {
/// The cuwrap property a CCCL property corresponds to (none for other types).
template <class CcclProperty>
struct cuwrap_property {};
template <>
struct cuwrap_property<cuda::mr::device_accessible> {
  using type = device_accessible;
};
template <>
struct cuwrap_property<cuda::mr::host_accessible> {
  using type = host_accessible;
};
template <class P>
concept cccl_property = requires {
  typename cuwrap_property<P>::type;
};
}  // namespace detail

/// A cuwrap resource with cuwrap::mr::device_accessible has cuda::mr::device_accessible, and
/// one with host_accessible has cuda::mr::host_accessible. (The property is a template
/// parameter checked first, so that looking up a cuwrap property never asks whether a
/// resource has itself.)
template <class R, detail::cccl_property P>
requires has_property<R, typename detail::cuwrap_property<P>::type>
constexpr void get_property(const R&, P) noexcept {}

}  // namespace cuwrap::mr
