// Virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess...):
// physical memory, address reservations and mappings as owners, typed access descriptors, and
// sharing physical memory with another process as a POSIX file descriptor.
//
// Lifetime. physical_memory and address_reservation are move-only owners of a shared state; a
// memory_mapping holds shared ownership of both states. The handle is released (cuMemRelease)
// and the range freed (cuMemAddressFree) when the last of the owner and its mappings goes, so a
// mapping never outlives its reservation or its physical memory, in whatever order the objects
// are destroyed. None of these calls needs a current context: the device is in the location.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <span>
#include <utility>

#include "cuwrap/device.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/ipc.hpp"
#include "cuwrap/managed_buffer.hpp"  // memory_location

namespace cuwrap {

/// Who may access a mapping, and how (CUmemAccess_flags).
enum class memory_access : int {
  none = CU_MEM_ACCESS_FLAGS_PROT_NONE,             ///< no access (a new mapping's state)
  read = CU_MEM_ACCESS_FLAGS_PROT_READ,             ///< loads only
  read_write = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,  ///< loads and stores
};

/// One access descriptor of cuMemSetAccess (CUmemAccessDesc): `location` gets `access`.
struct access_descriptor {
  memory_location location;                          ///< a device (or the host, for host memory)
  memory_access access = memory_access::read_write;  ///< what it may do
};

/// How physical memory is created (CUmemAllocationProp, pinned).
struct physical_memory_options {
  /// Exportable as a POSIX file descriptor (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR).
  bool posix_fd = false;
  /// Usable for GPUDirect RDMA (allocFlags.gpuDirectRDMACapable).
  bool gpu_direct_rdma = false;
};

/// Which granularity to ask for (CUmemAllocationGranularity_flags).
enum class granularity_kind {
  minimum = CU_MEM_ALLOC_GRANULARITY_MINIMUM,  ///< what sizes and offsets must be a multiple of
  recommended = CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,  ///< for best performance
};

/// The granularity of physical memory at `location` (cuMemGetAllocationGranularity): sizes,
/// offsets and mapped addresses are multiples of the minimum.
[[nodiscard]] std::size_t allocation_granularity(
    memory_location location, granularity_kind kind = granularity_kind::minimum,
    const physical_memory_options& options = {},
    std::source_location where = std::source_location::current());

/// The properties of a physical allocation (cuMemGetAllocationPropertiesFromHandle).
struct physical_memory_properties {
  memory_location location;      ///< where it lives
  bool posix_fd = false;         ///< exportable as a POSIX file descriptor
  bool gpu_direct_rdma = false;  ///< GPUDirect RDMA capable
};

namespace detail {
/// A generic allocation handle (physical memory or a multicast object) and its size, released
/// with cuMemRelease when the last owner goes.
struct allocation_handle_state {
  CUmemGenericAllocationHandle handle = 0;
  std::size_t size = 0;
  allocation_handle_state() = default;
  allocation_handle_state(const allocation_handle_state&) = delete;
  allocation_handle_state& operator=(const allocation_handle_state&) = delete;
  ~allocation_handle_state();
};
/// A reserved address range, freed with cuMemAddressFree when the last owner goes.
struct reservation_state {
  CUdeviceptr address = 0;
  std::size_t size = 0;
  reservation_state() = default;
  reservation_state(const reservation_state&) = delete;
  reservation_state& operator=(const reservation_state&) = delete;
  ~reservation_state();
};
}  // namespace detail

/// Physical memory (cuMemCreate; cuMemRelease once it and every mapping of it are gone).
/// Move-only.
class physical_memory {
 public:
  /// Creates `bytes` (a multiple of allocation_granularity) of pinned memory at `location`.
  physical_memory(memory_location location, std::size_t bytes,
                  const physical_memory_options& options = {},
                  std::source_location where = std::source_location::current());
  /// Creates `bytes` of memory on device `d`.
  physical_memory(device d, std::size_t bytes, const physical_memory_options& options = {},
                  std::source_location where = std::source_location::current())
      : physical_memory(memory_location::on(d), bytes, options, where) {}
  physical_memory(const physical_memory&) = delete;
  physical_memory& operator=(const physical_memory&) = delete;
  /// Moves; the source is empty afterwards.
  physical_memory(physical_memory&&) noexcept = default;
  /// Moves; the previous memory is released unless a mapping still holds it.
  physical_memory& operator=(physical_memory&&) noexcept = default;

  /// Imports memory another process exported (cuMemImportFromShareableHandle) from a
  /// descriptor this process holds (it stays the caller's to close). `bytes` is the
  /// allocation's size, which the exporter must send along: the handle does not carry it.
  [[nodiscard]] static physical_memory import_fd(
      int fd, std::size_t bytes, std::source_location where = std::source_location::current());
  /// Imports from an owned descriptor (which stays open).
  [[nodiscard]] static physical_memory import_fd(
      const file_descriptor& fd, std::size_t bytes,
      std::source_location where = std::source_location::current()) {
    return import_fd(fd.get(), bytes, where);
  }
  /// A new reference to the physical memory mapped at `address` (cuMemRetainAllocationHandle);
  /// `bytes` is its size, as for import_fd.
  [[nodiscard]] static physical_memory retain(
      CUdeviceptr address, std::size_t bytes,
      std::source_location where = std::source_location::current());

  /// The handle (0 once moved from).
  [[nodiscard]] CUmemGenericAllocationHandle get() const noexcept {
    return state_ ? state_->handle : 0;
  }
  /// The size in bytes (0 once moved from).
  [[nodiscard]] std::size_t size() const noexcept { return state_ ? state_->size : 0; }
  /// True once moved from.
  [[nodiscard]] bool empty() const noexcept { return !state_; }
  /// Its properties (cuMemGetAllocationPropertiesFromHandle).
  [[nodiscard]] physical_memory_properties properties(
      std::source_location where = std::source_location::current()) const;
  /// A new descriptor of it for another process (cuMemExportToShareableHandle); the memory
  /// must have been created with options.posix_fd. Pass it over a Unix socket (SCM_RIGHTS) or by
  /// inheritance.
  [[nodiscard]] file_descriptor export_fd(
      std::source_location where = std::source_location::current()) const;

  /// The shared state (for mappings).
  [[nodiscard]] const std::shared_ptr<detail::allocation_handle_state>& state(
      const char* operation, std::source_location where) const;

 private:
  explicit physical_memory(std::shared_ptr<detail::allocation_handle_state> state) noexcept
      : state_{std::move(state)} {}
  std::shared_ptr<detail::allocation_handle_state> state_;
};

class memory_mapping;

/// A range of virtual addresses (cuMemAddressReserve; cuMemAddressFree once it and every
/// mapping in it are gone). Move-only.
class address_reservation {
 public:
  /// Reserves `bytes` (a multiple of the granularity) aligned to `alignment` (0: the default,
  /// the granularity), at `hint` when that range is free.
  explicit address_reservation(std::size_t bytes, std::size_t alignment = 0, CUdeviceptr hint = 0,
                               std::source_location where = std::source_location::current());
  address_reservation(const address_reservation&) = delete;
  address_reservation& operator=(const address_reservation&) = delete;
  /// Moves; the source is empty afterwards.
  address_reservation(address_reservation&&) noexcept = default;
  /// Moves; the previous range is freed unless a mapping still holds it.
  address_reservation& operator=(address_reservation&&) noexcept = default;

  /// The first address (0 once moved from).
  [[nodiscard]] CUdeviceptr address() const noexcept { return state_ ? state_->address : 0; }
  /// The size in bytes (0 once moved from).
  [[nodiscard]] std::size_t size() const noexcept { return state_ ? state_->size : 0; }
  /// True once moved from.
  [[nodiscard]] bool empty() const noexcept { return !state_; }

  /// Maps `bytes` of `memory`, from `memory_offset`, at `offset` into this range (cuMemMap).
  /// The mapping starts without access: give it with memory_mapping::set_access.
  [[nodiscard]] memory_mapping map(std::size_t offset, const physical_memory& memory,
                                   std::size_t memory_offset, std::size_t bytes,
                                   std::source_location where = std::source_location::current());
  /// Maps all of `memory` at `offset`.
  [[nodiscard]] memory_mapping map(std::size_t offset, const physical_memory& memory,
                                   std::source_location where = std::source_location::current());
  /// Maps a generic allocation handle's state (physical memory or a multicast object).
  [[nodiscard]] memory_mapping map_handle(
      std::size_t offset, const std::shared_ptr<detail::allocation_handle_state>& handle,
      std::size_t handle_offset, std::size_t bytes, std::source_location where);

 private:
  std::shared_ptr<detail::reservation_state> state_;
};

/// Physical memory mapped into a reservation (cuMemMap; cuMemUnmap when destroyed). Holds
/// shared ownership of both. Move-only.
class memory_mapping {
 public:
  memory_mapping(const memory_mapping&) = delete;
  memory_mapping& operator=(const memory_mapping&) = delete;
  memory_mapping(memory_mapping&& other) noexcept
      : reservation_{std::move(other.reservation_)},
        handle_{std::move(other.handle_)},
        address_{std::exchange(other.address_, 0)},
        size_{std::exchange(other.size_, 0)} {}
  memory_mapping& operator=(memory_mapping&& other) noexcept {
    if (this != &other) {
      memory_mapping old{std::move(*this)};
      reservation_ = std::move(other.reservation_);
      handle_ = std::move(other.handle_);
      address_ = std::exchange(other.address_, 0);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  /// Unmaps (cuMemUnmap, which waits for queued work; a failure goes to the nothrow handler).
  ~memory_mapping();

  /// The first mapped address (0 once moved from).
  [[nodiscard]] CUdeviceptr address() const noexcept { return address_; }
  /// The mapped bytes (0 once moved from).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// True once moved from or unmapped.
  [[nodiscard]] bool empty() const noexcept { return !reservation_; }
  /// The mapped memory as `size() / sizeof(T)` elements. Throws cuwrap::usage_error if empty.
  template <class T>
  [[nodiscard]] device_span<T> span(
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "memory_mapping", "span", where);
    return {reinterpret_cast<T*>(address_), size_ / sizeof(T)};  // NOLINT: a device address
  }

  /// Sets who may access the mapping (cuMemSetAccess, all descriptors in one call).
  void set_access(std::span<const access_descriptor> descriptors,
                  std::source_location where = std::source_location::current()) const;
  /// Gives device `d` `access` (cuMemSetAccess).
  void set_access(device d, memory_access access = memory_access::read_write,
                  std::source_location where = std::source_location::current()) const;
  /// What `location` may do with the mapping (cuMemGetAccess).
  [[nodiscard]] memory_access access(
      memory_location location, std::source_location where = std::source_location::current()) const;
  /// Unmaps now (cuMemUnmap); the mapping is empty afterwards. Throws cuwrap::error.
  void unmap(std::source_location where = std::source_location::current());

 private:
  friend class address_reservation;
  memory_mapping(std::shared_ptr<detail::reservation_state> reservation,
                 std::shared_ptr<detail::allocation_handle_state> handle, CUdeviceptr address,
                 std::size_t size) noexcept
      : reservation_{std::move(reservation)},
        handle_{std::move(handle)},
        address_{address},
        size_{size} {}
  std::shared_ptr<detail::reservation_state> reservation_;
  std::shared_ptr<detail::allocation_handle_state> handle_;
  CUdeviceptr address_ = 0;
  std::size_t size_ = 0;
};

}  // namespace cuwrap
