// Devices: a cheap value naming one GPU (ordinal + CUdevice) and its properties.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <source_location>
#include <string>  // also declares std::hash (without <functional>'s cost)
#include <string_view>
#include <type_traits>
#include <vector>

#include "cuwrap/detail/device_attributes.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap {

/// A compute capability such as 9.0.
struct compute_capability {
  int major = 0;  ///< major version (9 for Hopper)
  int minor = 0;  ///< minor version
  friend constexpr auto operator<=>(compute_capability, compute_capability) = default;
};

/// The typed value of attribute `A`: bool, std::size_t (bytes) or int.
template <CUdevice_attribute A>
using device_attribute_t = typename detail::attribute_value<detail::kind_of(A)>::type;

/// One GPU. Cheap to copy: an ordinal and the driver's CUdevice. Queries call the driver
/// each time (nothing is cached behind the user's back).
class device {
 public:
  using native_handle_type = CUdevice;

  /// The number of devices the driver sees; 0 when the driver reports no device. Throws
  /// cuwrap::error when no driver can be loaded (cuDeviceGetCount).
  [[nodiscard]] static int count(std::source_location where = std::source_location::current());
  /// The device with this ordinal. Throws cuwrap::error (invalid_device) naming the valid
  /// range when the ordinal is out of range (cuDeviceGet).
  [[nodiscard]] static device get(int ordinal,
                                  std::source_location where = std::source_location::current());
  /// Every device, in ordinal order.
  [[nodiscard]] static std::vector<device> all(
      std::source_location where = std::source_location::current());
  /// The device on a PCI bus id such as "0000:1A:00.0" (cuDeviceGetByPCIBusId).
  [[nodiscard]] static device by_pci_bus_id(
      std::string_view bus_id, std::source_location where = std::source_location::current());

  /// The ordinal this device was obtained with.
  [[nodiscard]] constexpr int ordinal() const noexcept { return ordinal_; }
  /// The driver's handle.
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }

  /// The marketing name, e.g. "NVIDIA H100 80GB HBM3" (cuDeviceGetName).
  [[nodiscard]] std::string name(
      std::source_location where = std::source_location::current()) const;
  /// The device's UUID (cuDeviceGetUuid).
  [[nodiscard]] CUuuid uuid(std::source_location where = std::source_location::current()) const;
  /// The PCI bus id, "domain:bus:device.function" (cuDeviceGetPCIBusId).
  [[nodiscard]] std::string pci_bus_id(
      std::source_location where = std::source_location::current()) const;
  /// Total device memory in bytes (cuDeviceTotalMem).
  [[nodiscard]] std::size_t total_memory(
      std::source_location where = std::source_location::current()) const;
  /// The compute capability (two cuDeviceGetAttribute calls).
  [[nodiscard]] cuwrap::compute_capability compute_capability(
      std::source_location where = std::source_location::current()) const;

  /// Attribute `A`, typed: capabilities as bool, byte sizes as std::size_t, others as int
  /// (cuDeviceGetAttribute).
  template <CUdevice_attribute A>
  [[nodiscard]] device_attribute_t<A> attribute(
      std::source_location where = std::source_location::current()) const {
    return static_cast<device_attribute_t<A>>(raw_attribute(A, where));
  }
  /// Any attribute as the driver's int (cuDeviceGetAttribute).
  [[nodiscard]] int raw_attribute(
      CUdevice_attribute attribute,
      std::source_location where = std::source_location::current()) const;

  /// The number of streaming multiprocessors.
  [[nodiscard]] int multiprocessor_count(
      std::source_location where = std::source_location::current()) const {
    return attribute<CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT>(where);
  }
  /// Threads per warp.
  [[nodiscard]] int warp_size(std::source_location where = std::source_location::current()) const {
    return attribute<CU_DEVICE_ATTRIBUTE_WARP_SIZE>(where);
  }
  /// The most threads one block may have.
  [[nodiscard]] int max_threads_per_block(
      std::source_location where = std::source_location::current()) const {
    return attribute<CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK>(where);
  }
  /// Shared memory per block without opting in, in bytes.
  [[nodiscard]] std::size_t shared_memory_per_block(
      std::source_location where = std::source_location::current()) const {
    return attribute<CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK>(where);
  }
  /// Shared memory per block a kernel can opt in to, in bytes.
  [[nodiscard]] std::size_t shared_memory_per_block_optin(
      std::source_location where = std::source_location::current()) const {
    return attribute<CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN>(where);
  }
  /// The peak SM clock in kHz.
  [[nodiscard]] int clock_rate_khz(
      std::source_location where = std::source_location::current()) const {
    return attribute<CU_DEVICE_ATTRIBUTE_CLOCK_RATE>(where);
  }
  /// The peak memory clock in kHz.
  [[nodiscard]] int memory_clock_rate_khz(
      std::source_location where = std::source_location::current()) const {
    return attribute<CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE>(where);
  }

  /// True if this device can access `peer`'s memory (cuDeviceCanAccessPeer). A device is not
  /// its own peer (false).
  [[nodiscard]] bool can_access_peer(
      device peer, std::source_location where = std::source_location::current()) const;

  friend constexpr bool operator==(device, device) noexcept = default;

 private:
  constexpr device(int ordinal, CUdevice handle) noexcept : ordinal_{ordinal}, handle_{handle} {}

  int ordinal_;
  CUdevice handle_;
};

static_assert(std::is_trivially_copyable_v<device> && sizeof(device) == 2 * sizeof(int));

}  // namespace cuwrap

/// Hashes a device by ordinal.
template <>
struct std::hash<cuwrap::device> {
  std::size_t operator()(cuwrap::device d) const noexcept { return std::hash<int>{}(d.ordinal()); }
};
