// Multicast objects (cuwrap/multicast.hpp).
#include "cuwrap/multicast.hpp"

#include <algorithm>
#include <string>

#include "cuwrap/detail/driver.hpp"

namespace cuwrap {
namespace {

const detail::driver_table& drv() { return detail::driver(); }

CUmulticastObjectProp properties_of(const multicast_options& options) {
  CUmulticastObjectProp prop{};
  prop.numDevices = options.device_count;
  prop.size = options.bytes;
  prop.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  return prop;
}

std::string describe(const multicast_options& options) {
  return std::to_string(options.device_count) + " devices, " + std::to_string(options.bytes) +
         " bytes per device";
}

}  // namespace

std::size_t multicast_granularity(const multicast_options& options, granularity_kind kind,
                                  std::source_location where) {
  const CUmulticastObjectProp prop = properties_of(options);
  std::size_t granularity = 0;
  const CUresult r = drv().cuMulticastGetGranularity(
      &granularity, &prop, static_cast<CUmulticastGranularity_flags>(kind));
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMulticastGetGranularity", describe(options), where);
  }
  return granularity;
}

multicast_object::multicast_object(const multicast_options& options, std::source_location where)
    : state_{std::make_shared<detail::allocation_handle_state>()} {
  const CUmulticastObjectProp prop = properties_of(options);
  CUmemGenericAllocationHandle handle = 0;
  const CUresult r = drv().cuMulticastCreate(&handle, &prop);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMulticastCreate",
                        describe(options) +
                            " (the size must be a multiple of multicast_granularity; every "
                            "device must support multicast)",
                        where);
  }
  state_->handle = handle;
  state_->size = options.bytes;
}

multicast_object::~multicast_object() {
  if (!state_) return;
  for (const binding& b : bindings_) {
    check_nothrow(detail::driver().cuMulticastUnbind(state_->handle, b.device, b.offset, b.bytes),
                  "cuMulticastUnbind");
  }
}

CUmemGenericAllocationHandle multicast_object::get() const noexcept {
  return state_ ? state_->handle : 0;
}

std::size_t multicast_object::size() const noexcept { return state_ ? state_->size : 0; }

const std::shared_ptr<detail::allocation_handle_state>& multicast_object::state(
    const char* operation, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "multicast_object", operation, where);
  return state_;
}

void multicast_object::add_device(device d, std::source_location where) {
  detail::expect_not_moved_from(!empty(), "multicast_object", "add_device", where);
  const CUresult r = drv().cuMulticastAddDevice(state_->handle, d.get());
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMulticastAddDevice",
                        "device " + std::to_string(d.ordinal()) +
                            " (each device once, no more than the team's device_count)",
                        where);
  }
}

void multicast_object::bind(std::size_t offset, const physical_memory& memory,
                            std::size_t memory_offset, std::size_t bytes,
                            std::source_location where) {
  detail::expect_not_moved_from(!empty(), "multicast_object", "bind", where);
  const auto& held = memory.state("bind", where);
  const int dev = memory.properties(where).location.id;
  bindings_.reserve(bindings_.size() + 1);  // before the bind: push_back cannot throw after it
  const CUresult r =
      drv().cuMulticastBindMem(state_->handle, offset, held->handle, memory_offset, bytes, 0);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMulticastBindMem",
                        std::to_string(bytes) + " bytes of device " + std::to_string(dev) +
                            "'s memory from offset " + std::to_string(memory_offset) +
                            " at offset " + std::to_string(offset) +
                            " (add every device first; sizes and offsets are multiples of the "
                            "granularity)",
                        where);
  }
  bindings_.push_back({dev, offset, bytes, held});
}

void multicast_object::bind(std::size_t offset, CUdeviceptr address, std::size_t bytes,
                            std::source_location where) {
  detail::expect_not_moved_from(!empty(), "multicast_object", "bind", where);
  // The memory's device (for the unbind) and a reference that keeps it while bound.
  const physical_memory held = physical_memory::retain(address, bytes, where);
  const int dev = held.properties(where).location.id;
  bindings_.reserve(bindings_.size() + 1);
  const CUresult r = drv().cuMulticastBindAddr(state_->handle, offset, address, bytes, 0);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMulticastBindAddr",
                        std::to_string(bytes) + " bytes at address " + std::to_string(address) +
                            " at offset " + std::to_string(offset),
                        where);
  }
  bindings_.push_back({dev, offset, bytes, held.state("bind", where)});
}

void multicast_object::unbind(device d, std::size_t offset, std::size_t bytes,
                              std::source_location where) {
  detail::expect_not_moved_from(!empty(), "multicast_object", "unbind", where);
  check(drv().cuMulticastUnbind(state_->handle, d.get(), offset, bytes), "cuMulticastUnbind",
        where);
  std::erase_if(bindings_, [&](const binding& b) {
    return b.device == d.ordinal() && b.offset == offset && b.bytes == bytes;
  });
}

memory_mapping map(address_reservation& reservation, std::size_t offset,
                   const multicast_object& object, std::source_location where) {
  return reservation.map_handle(offset, object.state("map", where), 0, object.size(), where);
}

}  // namespace cuwrap
