// statistics_resource: an adaptor counting what goes through a resource (bytes in use, the
// peak, allocation and deallocation counts), thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <source_location>
#include <utility>

#include "cuwrap/mr/concepts.hpp"
#include "cuwrap/mr/resource_base.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap::mr {

/// What a statistics_resource counted.
struct resource_statistics {
  std::size_t bytes_in_use = 0;   ///< bytes allocated and not yet deallocated
  std::size_t peak_bytes = 0;     ///< the most bytes_in_use has been
  std::size_t allocations = 0;    ///< successful allocate() calls (of either kind)
  std::size_t deallocations = 0;  ///< deallocate() calls (of either kind) of a non-null pointer
  friend bool operator==(const resource_statistics&, const resource_statistics&) = default;
};

/// Forwards every call to `Upstream` and counts it: bytes in use, their peak, and the numbers
/// of allocations and deallocations (the sizes are those the caller passes, as the concepts
/// require deallocate to get the allocation's size). Thread-safe: the counters are atomics
/// (the peak is raised with a compare-exchange loop), so concurrent calls from many threads
/// and streams count exactly. A failed allocation counts nothing. Copyable: copies share one
/// set of counters (and each holds a copy of the upstream resource). Declares the upstream's
/// properties; stream-ordered when the upstream is. Equal when the upstreams are equal (each
/// can free the other's memory).
template <resource Upstream>
class statistics_resource : public detail::cccl_async_names<statistics_resource<Upstream>> {
 public:
  /// Counts the calls to `upstream` (a copy of it).
  explicit statistics_resource(Upstream upstream)
      : upstream_{std::move(upstream)}, counters_{std::make_shared<counters>()} {}

  /// upstream.allocate(bytes, alignment), counted once it succeeded.
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment = default_alignment) {
    void* p = upstream_.allocate(bytes, alignment);
    counters_->allocated(bytes);
    return p;
  }
  /// upstream.deallocate(p, bytes, alignment), counted (unless `p` is null).
  void deallocate(void* p, std::size_t bytes, std::size_t alignment = default_alignment) noexcept {
    upstream_.deallocate(p, bytes, alignment);
    if (p != nullptr) {
      counters_->deallocated(bytes);
    }
  }
  /// upstream.allocate(s, bytes, alignment), counted once it succeeded.
  [[nodiscard]] void* allocate(stream_ref s, std::size_t bytes,
                               std::size_t alignment = default_alignment) requires
      stream_ordered_resource<Upstream> {
    void* p = upstream_.allocate(s, bytes, alignment);
    counters_->allocated(bytes);
    return p;
  }
  /// upstream.deallocate(s, p, bytes, alignment), counted once it succeeded (unless `p` is null).
  void deallocate(stream_ref s, void* p, std::size_t bytes,
                  std::size_t alignment = default_alignment) requires
      stream_ordered_resource<Upstream> {
    upstream_.deallocate(s, p, bytes, alignment);
    if (p != nullptr) {
      counters_->deallocated(bytes);
    }
  }

  /// A snapshot of the counters (each read atomically; a snapshot taken while other threads
  /// allocate may mix moments).
  [[nodiscard]] resource_statistics statistics() const noexcept {
    return {counters_->in_use.load(), counters_->peak.load(), counters_->allocations.load(),
            counters_->deallocations.load()};
  }
  /// Sets the peak to the bytes in use now and the counts to zero.
  void reset_peak_and_counts() noexcept {
    counters_->peak.store(counters_->in_use.load());
    counters_->allocations.store(0);
    counters_->deallocations.store(0);
  }
  /// The upstream resource.
  [[nodiscard]] Upstream& upstream() noexcept { return upstream_; }
  /// The upstream resource.
  [[nodiscard]] const Upstream& upstream() const noexcept { return upstream_; }

  /// Equal when the upstreams are equal.
  friend bool operator==(const statistics_resource& a, const statistics_resource& b) {
    return a.upstream_ == b.upstream_;
  }
  /// Device-accessible when the upstream is.
  friend constexpr void get_property(const statistics_resource&, device_accessible) noexcept
      requires has_property<Upstream, device_accessible> {}
  /// Host-accessible when the upstream is.
  friend constexpr void get_property(const statistics_resource&, host_accessible) noexcept requires
      has_property<Upstream, host_accessible> {}

 private:
  struct counters {
    std::atomic<std::size_t> in_use{0};
    std::atomic<std::size_t> peak{0};
    std::atomic<std::size_t> allocations{0};
    std::atomic<std::size_t> deallocations{0};
    void allocated(std::size_t bytes) noexcept {
      const std::size_t now = in_use.fetch_add(bytes) + bytes;
      std::size_t peak_now = peak.load();
      while (now > peak_now && !peak.compare_exchange_weak(peak_now, now)) {
      }
      allocations.fetch_add(1);
    }
    void deallocated(std::size_t bytes) noexcept {
      in_use.fetch_sub(bytes);
      deallocations.fetch_add(1);
    }
  };

  Upstream upstream_;
  std::shared_ptr<counters> counters_;
};

}  // namespace cuwrap::mr
