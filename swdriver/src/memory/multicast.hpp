// Multicast objects (cuMulticastCreate...): a VmmAllocation whose `multicast` is set. Its memfd
// is the multicast range (what a cuMemMap of the object shows); memory bound to it on each
// device of the team is kept consistent with it as on NVSwitch hardware:
//
//  - a store through the multicast range reaches every bound device's memory;
//  - a load through it returns one device's value: that of the first binding (in bind order)
//    that covers the offset, the "primary".
//
// The software driver runs device work one operation at a time, so it keeps them consistent
// between operations: after each executed operation (State::after_device_work), bytes of the
// multicast range that changed since the last pass (a shadow copy tells) are written to every
// binding, and then bytes of a primary binding's memory that changed (a store to it directly)
// are copied into the multicast range. A kernel that stores through the multicast range and
// reads another device's memory in the same launch does not see its own store there until the
// launch completes (on hardware it needs a fence and a barrier across devices for that).
#pragma once

#include <cstddef>
#include <vector>

#include "core/api.hpp"

namespace swcu {

struct VmmAllocation;

/// One cuMulticastBindMem / cuMulticastBindAddr.
struct VmmMulticastBinding {
  int device = 0;
  std::size_t offset = 0;  ///< into the multicast range
  std::size_t size = 0;
  VmmAllocation* memory = nullptr;  ///< held (one of its `mappings`) while bound
  std::byte* bytes = nullptr;       ///< the driver's own mapping of the bound memory
};

/// What makes a VmmAllocation a multicast object.
struct VmmMulticast {
  unsigned device_count = 0;  ///< CUmulticastObjectProp::numDevices
  std::vector<int> devices;   ///< added so far
  std::vector<VmmMulticastBinding> bindings;
  std::byte* view = nullptr;      ///< the driver's own mapping of the multicast range
  std::vector<std::byte> shadow;  ///< the range as of the last consistency pass
};

/// Unbinds everything and unmaps the driver's own mappings (the object is being freed).
void release_multicast(State& s, VmmAllocation& v) noexcept;

/// One consistency pass over every multicast object (State::after_device_work).
void multicast_sync(State& s) noexcept;

}  // namespace swcu
