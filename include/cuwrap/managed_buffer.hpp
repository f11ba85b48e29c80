// Managed (unified) memory: one address valid on the host and every device, migrated on demand.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <span>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/owned_memory.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// Where memory lives or should live: a device, or the host (CUmemLocation).
struct memory_location {
  CUmemLocationType type = CU_MEM_LOCATION_TYPE_HOST;  ///< device or host
  int id = 0;                                          ///< the device ordinal for devices

  /// A device's memory.
  [[nodiscard]] static memory_location on(const cuwrap::device& dev) noexcept {
    return {CU_MEM_LOCATION_TYPE_DEVICE, dev.ordinal()};
  }
  /// Host memory.
  [[nodiscard]] static memory_location host() noexcept { return {CU_MEM_LOCATION_TYPE_HOST, 0}; }
  /// Host memory of NUMA node `node`.
  [[nodiscard]] static memory_location host_numa(int node) noexcept {
    return {CU_MEM_LOCATION_TYPE_HOST_NUMA, node};
  }
  /// As the driver's struct.
  [[nodiscard]] CUmemLocation native() const noexcept { return CUmemLocation{type, id}; }
  /// Whether `id` means something for this type (a device ordinal, a NUMA node): cuda.h says
  /// the driver's id "should be ignored" for the others, which a driver may fill with anything.
  [[nodiscard]] constexpr bool has_id() const noexcept {
    return type == CU_MEM_LOCATION_TYPE_DEVICE || type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
  }
  /// The same place: the same type, and the same id where the type has one.
  friend constexpr bool operator==(memory_location a, memory_location b) noexcept {
    return a.type == b.type && (!a.has_id() || a.id == b.id);
  }
};

/// Which streams may access managed memory at first (CU_MEM_ATTACH_*).
enum class managed_attach : unsigned {
  global = CU_MEM_ATTACH_GLOBAL,  ///< any stream on any device
  host = CU_MEM_ATTACH_HOST,      ///< the host only, until attached to a stream
};

/// Usage hints for managed memory (CUmem_advise).
enum class memory_advice {
  set_read_mostly = CU_MEM_ADVISE_SET_READ_MOSTLY,  ///< mostly read: devices may keep copies
  unset_read_mostly = CU_MEM_ADVISE_UNSET_READ_MOSTLY,
  set_preferred_location = CU_MEM_ADVISE_SET_PREFERRED_LOCATION,  ///< keep it at a location
  unset_preferred_location = CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
  set_accessed_by = CU_MEM_ADVISE_SET_ACCESSED_BY,  ///< map it for a device to avoid faults
  unset_accessed_by = CU_MEM_ADVISE_UNSET_ACCESSED_BY,
};

namespace detail {
/// cuMemAllocManaged of `bytes` with `ctx` current; 0 bytes allocates nothing.
CUdeviceptr allocate_managed(const owning_context& ctx, std::size_t bytes, unsigned flags,
                             std::source_location where);
void prefetch(CUdeviceptr address, std::size_t bytes, memory_location to, stream_ref s,
              std::source_location where);
void advise(CUdeviceptr address, std::size_t bytes, memory_advice advice, memory_location where_,
            std::source_location where);
int range_attribute(CUdeviceptr address, std::size_t bytes, CUmem_range_attribute attribute,
                    std::source_location where);
memory_location range_location(CUdeviceptr address, std::size_t bytes,
                               CUmem_range_attribute type_attribute,
                               CUmem_range_attribute id_attribute, std::source_location where);
}  // namespace detail

/// `count` elements of T in managed memory (cuMemAllocManaged, freed with cuMemFree). Host
/// code reads and writes it directly (operator[], begin/end); device code uses span().
/// Move-only; keeps its context alive. A moved-from buffer owns nothing: every operation
/// (data(), span(), host access, prefetch, advice) throws cuwrap::usage_error.
template <class T>
class managed_buffer
    : public detail::owned_memory<T, detail::free_device_memory<detail::managed_buffer_name>> {
  static_assert(std::is_trivially_copyable_v<T>, "managed memory holds trivially copyable types");
  using base = detail::owned_memory<T, detail::free_device_memory<detail::managed_buffer_name>>;

 public:
  using value_type = T;

  /// Allocates `count` elements in `ctx` (made current for the call only if it is not).
  managed_buffer(const owning_context& ctx, std::size_t count,
                 managed_attach attach = managed_attach::global,
                 std::source_location where = std::source_location::current())
      : base{reinterpret_cast<T*>(detail::allocate_managed(  // NOLINT: device address
                 ctx, count * sizeof(T), static_cast<unsigned>(attach), where)),
             count, ctx.lifetime()} {}

  /// The address as the driver's CUdeviceptr.
  [[nodiscard]] CUdeviceptr address(
      std::source_location where = std::source_location::current()) const {
    return span(where).address();
  }
  /// Element `i`, on the host. Do not touch memory a device is using. (An operator takes no
  /// call site: a moved-from buffer's usage_error has where().line() == 0.)
  [[nodiscard]] T& operator[](std::size_t i) const { return this->data({})[i]; }
  /// The first element, on the host (range-for and algorithms).
  [[nodiscard]] T* begin(std::source_location where = std::source_location::current()) const {
    return this->data(where);
  }
  /// One past the last element, on the host.
  [[nodiscard]] T* end(std::source_location where = std::source_location::current()) const {
    return this->data(where) + this->size();
  }
  /// The memory as a host span.
  [[nodiscard]] std::span<T> host(
      std::source_location where = std::source_location::current()) const {
    return {this->data(where), this->size()};
  }
  /// The memory as a device span.
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    return {this->data(where), this->size()};
  }

  /// Migrates the memory to `to` in `s`'s order (cuMemPrefetchAsync_v2; one driver call).
  void prefetch(stream_ref s, memory_location to,
                std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!this->moved_from(), "managed_buffer", "prefetch", where);
    detail::prefetch(address(where), this->size_bytes(), to, s, where);
  }
  /// Gives the driver a usage hint (cuMemAdvise_v2).
  void advise(memory_advice advice, memory_location location,
              std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!this->moved_from(), "managed_buffer", "advise", where);
    detail::advise(address(where), this->size_bytes(), advice, location, where);
  }
  /// True if the range is advised read-mostly (cuMemRangeGetAttribute).
  [[nodiscard]] bool read_mostly(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!this->moved_from(), "managed_buffer", "read_mostly", where);
    return detail::range_attribute(address(where), this->size_bytes(),
                                   CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, where) != 0;
  }
  /// The advised preferred location (cuMemRangeGetAttribute).
  [[nodiscard]] memory_location preferred_location(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!this->moved_from(), "managed_buffer", "preferred_location",
                                  where);
    return detail::range_location(address(where), this->size_bytes(),
                                  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, where);
  }
  /// Where the last prefetch moved the range (cuMemRangeGetAttribute).
  [[nodiscard]] memory_location last_prefetch_location(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!this->moved_from(), "managed_buffer", "last_prefetch_location",
                                  where);
    return detail::range_location(address(where), this->size_bytes(),
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, where);
  }
};

static_assert(!std::is_copy_constructible_v<managed_buffer<int>> &&
              std::is_nothrow_move_constructible_v<managed_buffer<int>>);

/// A range of managed memory (cuMemAllocManaged, a managed pool) for the batch operations.
struct managed_range {
  CUdeviceptr address = 0;  ///< where it starts
  std::size_t bytes = 0;    ///< how long it is (not 0)

  constexpr managed_range() noexcept = default;
  /// The range [address, address + bytes).
  constexpr managed_range(CUdeviceptr start, std::size_t size) noexcept
      : address{start}, bytes{size} {}
  /// The bytes of a span of managed memory (a managed_buffer's span(), say).
  template <class T>
  managed_range(device_span<T> memory) noexcept  // NOLINT(google-explicit-constructor)
      : address{memory.address()}, bytes{memory.size_bytes()} {}
};

/// Prefetches every range to `to`, in stream order, as ONE driver call (cuMemPrefetchBatchAsync,
/// CUDA 13; no call for no ranges). `s` must not be the legacy default stream.
void prefetch(stream_ref s, std::span<const managed_range> ranges, memory_location to,
              std::source_location where = std::source_location::current());
/// Discards every range, in stream order (cuMemDiscardBatchAsync, CUDA 13; one call): their
/// contents are undefined until written or prefetched again. `s` must not be the legacy default
/// stream.
void discard(stream_ref s, std::span<const managed_range> ranges,
             std::source_location where = std::source_location::current());
/// Discards every range, then prefetches it to `to` (cuMemDiscardAndPrefetchBatchAsync, CUDA
/// 13; one call): memory about to be overwritten moves without its old contents.
void discard_and_prefetch(stream_ref s, std::span<const managed_range> ranges, memory_location to,
                          std::source_location where = std::source_location::current());

}  // namespace cuwrap
