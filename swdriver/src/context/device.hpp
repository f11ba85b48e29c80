// The simulated devices: an sm_90, H100-like part (values in device.cpp).
#pragma once

#include <optional>

#include "core/cuda_api.hpp"

namespace swcu {

/// cuDeviceGetAttribute's value for a valid device, or nullopt for an unknown attribute.
[[nodiscard]] std::optional<int> device_attribute(int attribute, CUdevice device);

/// The PCI bus number of a device (0x1a + ordinal): "0000:1A:00.0" for device 0.
[[nodiscard]] inline int pci_bus(CUdevice device) { return 0x1a + device; }

}  // namespace swcu
