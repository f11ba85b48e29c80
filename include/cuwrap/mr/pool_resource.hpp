// The pool memory resource: stream-ordered allocation from a memory pool of any location
// (cuMemAllocFromPoolAsync / cuMemFreeAsync).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <source_location>

#include "cuwrap/memory_pool.hpp"
#include "cuwrap/mr/resource_base.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

namespace detail {
/// cuMemAllocFromPoolAsync of `bytes` from `pool` on `s`; failures name the bytes.
void* pool_allocate(CUmemoryPool pool, stream_ref s, std::size_t bytes, const char* type,
                    std::source_location where);
/// cuMemFreeAsync of `p` on `s`.
void pool_deallocate(stream_ref s, void* p, std::source_location where);
/// cuStreamSynchronize of `s`.
void synchronize(stream_ref s, std::source_location where);
/// cuMemFree of stream-ordered memory whose work is done (errors to the nothrow handler).
void free_now(void* p) noexcept;
}  // namespace detail

/// Stream-ordered memory from one memory pool (cuMemAllocFromPoolAsync, freed with
/// cuMemFreeAsync; one driver call each), of any location: a device pool, and the host,
/// host-NUMA and managed pools alike. `Properties` say where the pool's memory is accessible;
/// the driver has no query for a pool's location, so they are the caller's statement (see the
/// aliases pool_resource and host_pool_resource).
///
/// The synchronous calls exist so that the resource also serves synchronous users:
/// allocate(bytes) allocates on the resource's `sync_stream` and then synchronizes that stream
/// (cuMemAllocFromPoolAsync + cuStreamSynchronize), so the memory is usable by anyone when it
/// returns; deallocate(p, ...) frees with cuMemFree, which for pool memory does not synchronize:
/// the caller guarantees no work still uses the memory (the driver API's rule for cuMemFree of
/// stream-ordered memory).
///
/// Non-owning: the pool and `sync_stream` must outlive the resource and its memory. Copyable.
/// Two pool resources are equal when they allocate from the same pool (either can free the
/// other's memory). Zero bytes allocate nothing and give nullptr. An alignment over
/// driver_alignment throws cuwrap::usage_error.
template <class... Properties>
class basic_pool_resource : public detail::cccl_async_names<basic_pool_resource<Properties...>>,
                            public detail::with_property<Properties>... {
 public:
  /// A resource over `pool`, synchronizing `sync_stream` for the synchronous calls. Throws
  /// cuwrap::usage_error if the pool or the stream was moved from.
  basic_pool_resource(memory_pool_ref pool, stream_ref sync_stream,
                      std::source_location where = std::source_location::current())
      : pool_{pool}, sync_stream_{sync_stream} {
    cuwrap::detail::expect_argument_not_moved_from(!pool.empty(), "pool_resource", "pool_resource",
                                                   "memory pool", where);
    cuwrap::detail::expect_argument_not_moved_from(!sync_stream.empty(), "pool_resource",
                                                   "pool_resource", "stream", where);
  }

  /// Allocates on the synchronous stream and synchronizes it (two driver calls).
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current()) {
    void* p = allocate(sync_stream_, bytes, alignment, where);
    if (p != nullptr) {
      try {
        detail::synchronize(sync_stream_, where);
      } catch (...) {
        detail::free_now(p);
        throw;
      }
    }
    return p;
  }
  /// cuMemFree: the caller guarantees no queued work still uses `p`.
  void deallocate(void* p, std::size_t /*bytes*/,
                  std::size_t /*alignment*/ = default_alignment) noexcept {
    if (p != nullptr) {
      detail::free_now(p);
    }
  }
  /// cuMemAllocFromPoolAsync on `s`: usable by work queued on `s` after it.
  [[nodiscard]] void* allocate(stream_ref s, std::size_t bytes,
                               std::size_t alignment = default_alignment,
                               std::source_location where = std::source_location::current()) {
    detail::check_alignment("pool_resource", alignment, where);
    cuwrap::detail::expect_argument_not_moved_from(!s.empty(), "pool_resource", "allocate",
                                                   "stream", where);
    if (bytes == 0) {
      return nullptr;
    }
    return detail::pool_allocate(pool_.get(), s, bytes, "pool_resource", where);
  }
  /// cuMemFreeAsync on `s`: freed once the work queued on `s` before it has run.
  void deallocate(stream_ref s, void* p, std::size_t /*bytes*/,
                  std::size_t /*alignment*/ = default_alignment,
                  std::source_location where = std::source_location::current()) {
    if (p != nullptr) {
      detail::pool_deallocate(s, p, where);
    }
  }

  /// The pool memory comes from.
  [[nodiscard]] memory_pool_ref pool() const noexcept { return pool_; }
  /// The stream the synchronous calls use.
  [[nodiscard]] stream_ref sync_stream() const noexcept { return sync_stream_; }

  /// Equal when both allocate from the same pool.
  friend bool operator==(const basic_pool_resource& a, const basic_pool_resource& b) noexcept {
    return a.pool_ == b.pool_;
  }

 private:
  memory_pool_ref pool_;
  stream_ref sync_stream_;
};

/// A pool of device memory (or any pool whose memory kernels access).
using pool_resource = basic_pool_resource<device_accessible>;
/// A pool of host pinned, host NUMA or managed memory: host code and kernels access it.
using host_pool_resource = basic_pool_resource<device_accessible, host_accessible>;

static_assert(stream_ordered_resource_with<pool_resource, device_accessible>);
static_assert(!has_property<pool_resource, host_accessible>);
static_assert(stream_ordered_resource_with<host_pool_resource, device_accessible, host_accessible>);

}  // namespace cuwrap::mr
