// Multicast objects (cuMulticastCreate, cuMulticastAddDevice, cuMulticastBindMem,
// cuMulticastBindAddr, cuMulticastUnbind, cuMulticastGetGranularity): one address range whose
// stores reach the memory bound on every device of a team, and whose loads return one of them.
// Map it with address_reservation::map(offset, multicast_object) as physical memory.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <vector>

#include "cuwrap/device.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/virtual_memory.hpp"

namespace cuwrap {

/// What a multicast object is (CUmulticastObjectProp).
struct multicast_options {
  unsigned device_count = 1;  ///< the devices of the team (numDevices)
  std::size_t bytes = 0;      ///< memory bound per device (a multiple of the granularity)
};

/// The granularity of multicast objects (cuMulticastGetGranularity): sizes and offsets of
/// binds and mappings are multiples of the minimum.
[[nodiscard]] std::size_t multicast_granularity(
    const multicast_options& options, granularity_kind kind = granularity_kind::minimum,
    std::source_location where = std::source_location::current());

/// A multicast object (cuMulticastCreate; cuMemRelease when it and its mappings are gone).
/// Holds the physical memory bound to it until it is unbound or the object goes. Move-only.
class multicast_object {
 public:
  /// Creates a team of options.device_count devices, options.bytes per device.
  explicit multicast_object(const multicast_options& options,
                            std::source_location where = std::source_location::current());
  multicast_object(const multicast_object&) = delete;
  multicast_object& operator=(const multicast_object&) = delete;
  /// Moves; the source is empty afterwards.
  multicast_object(multicast_object&&) noexcept = default;
  /// Moves; the previous object unbinds its memory and is released unless a mapping still
  /// holds it.
  multicast_object& operator=(multicast_object&& other) noexcept {
    if (this != &other) {
      multicast_object old{std::move(*this)};  // unbinds as it goes
      state_ = std::move(other.state_);
      bindings_ = std::move(other.bindings_);
    }
    return *this;
  }
  /// Unbinds everything still bound (cuMulticastUnbind) before the handle is released.
  ~multicast_object();

  /// The handle (0 once moved from).
  [[nodiscard]] CUmemGenericAllocationHandle get() const noexcept;
  /// The bytes per device (0 once moved from).
  [[nodiscard]] std::size_t size() const noexcept;
  /// True once moved from.
  [[nodiscard]] bool empty() const noexcept { return !state_; }

  /// Adds `d` to the team (cuMulticastAddDevice). Every device is added before memory is
  /// bound or the object mapped.
  void add_device(device d, std::source_location where = std::source_location::current());
  /// Binds `bytes` of `memory` from `memory_offset` at `offset` (cuMulticastBindMem). The
  /// object keeps the memory until it is unbound.
  void bind(std::size_t offset, const physical_memory& memory, std::size_t memory_offset,
            std::size_t bytes, std::source_location where = std::source_location::current());
  /// Binds the memory mapped at `address` (cuMulticastBindAddr).
  void bind(std::size_t offset, CUdeviceptr address, std::size_t bytes,
            std::source_location where = std::source_location::current());
  /// Unbinds what `d` has bound at [offset, offset + bytes), as bound (cuMulticastUnbind).
  void unbind(device d, std::size_t offset, std::size_t bytes,
              std::source_location where = std::source_location::current());

  /// The shared handle state (for mappings).
  [[nodiscard]] const std::shared_ptr<detail::allocation_handle_state>& state(
      const char* operation, std::source_location where) const;

 private:
  struct binding {
    int device = 0;
    std::size_t offset = 0;
    std::size_t bytes = 0;
    std::shared_ptr<detail::allocation_handle_state> memory;  ///< null for bind by address
  };
  std::shared_ptr<detail::allocation_handle_state> state_;
  std::vector<binding> bindings_;
};

/// Maps all of a multicast object at `offset` of `reservation` (cuMemMap); give the team's
/// devices access with memory_mapping::set_access.
[[nodiscard]] memory_mapping map(address_reservation& reservation, std::size_t offset,
                                 const multicast_object& object,
                                 std::source_location where = std::source_location::current());

}  // namespace cuwrap
