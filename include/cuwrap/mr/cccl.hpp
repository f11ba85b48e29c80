// CCCL interop: makes cuwrap's memory resources satisfy CCCL's cuda::mr concepts
// (cuda::mr::resource_with, async_resource_with), so they pass into cuda::mr::resource_ref,
// async_resource_ref and CCCL/RMM-style code. Include it only where the CUDA toolkit's CCCL
// (include/cccl, C++17 or later) is on the include path; it defines
// LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE if the includer did not.
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

/// A cuwrap resource with cuwrap::mr::device_accessible has cuda::mr::device_accessible.
template <class R>
requires has_property<R, device_accessible>
constexpr void get_property(const R&, cuda::mr::device_accessible) noexcept {}

/// A cuwrap resource with cuwrap::mr::host_accessible has cuda::mr::host_accessible.
template <class R>
requires has_property<R, host_accessible>
constexpr void get_property(const R&, cuda::mr::host_accessible) noexcept {}

}  // namespace cuwrap::mr
