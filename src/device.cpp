#include "cuwrap/device.hpp"

#include <cstring>

namespace cuwrap {

int device::count(std::source_location where) {
  try {
    (void)detail::load_process_driver(where);
  } catch (const error& e) {
    if (e.code() == errc::no_device) {
      return 0;  // cuInit said there is no device: that is a count, not a failure
    }
    throw;
  }
  int n = 0;
  check(detail::driver().cuDeviceGetCount(&n), "cuDeviceGetCount", where);
  return n;
}

device device::get(int ordinal, std::source_location where) {
  // Usually a program's first call: a driver that does not load is reported at `where` (a
  // table entry that loads it knows no caller). Once loaded, a guarded static's check.
  (void)detail::load_process_driver(where);
  CUdevice handle{};
  const CUresult r =
      ordinal < 0 ? CUDA_ERROR_INVALID_DEVICE : detail::driver().cuDeviceGet(&handle, ordinal);
  if (r == CUDA_ERROR_INVALID_DEVICE) {  // cold path: count the devices for the message
    const int n = count(where);
    detail::throw_error(make_error_code(r), "cuDeviceGet",
                        "ordinal " + std::to_string(ordinal) +
                            (n == 0 ? std::string{"; there is no device"}
                                    : "; valid ordinals are 0 to " + std::to_string(n - 1)),
                        where);
  }
  check(r, "cuDeviceGet", where);
  return device{ordinal, handle};
}

std::vector<device> device::all(std::source_location where) {
  std::vector<device> devices;
  const int n = count(where);
  devices.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    devices.push_back(get(i, where));
  }
  return devices;
}

device device::by_pci_bus_id(std::string_view bus_id, std::source_location where) {
  const std::string id{bus_id};
  CUdevice handle{};
  const CUresult r = detail::driver().cuDeviceGetByPCIBusId(&handle, id.c_str());
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDeviceGetByPCIBusId", "\"" + id + "\"", where);
  }
  return device{handle, handle};  // the driver's CUdevice is the ordinal
}

std::string device::name(std::source_location where) const {
  std::array<char, 256> buffer{};
  check(detail::driver().cuDeviceGetName(buffer.data(), static_cast<int>(buffer.size()), handle_),
        "cuDeviceGetName", where);
  return buffer.data();
}

CUuuid device::uuid(std::source_location where) const {
  CUuuid id{};
  check(detail::driver().cuDeviceGetUuid(&id, handle_), "cuDeviceGetUuid", where);
  return id;
}

std::string device::pci_bus_id(std::source_location where) const {
  std::array<char, 64> buffer{};
  check(
      detail::driver().cuDeviceGetPCIBusId(buffer.data(), static_cast<int>(buffer.size()), handle_),
      "cuDeviceGetPCIBusId", where);
  return buffer.data();
}

std::size_t device::total_memory(std::source_location where) const {
  std::size_t bytes = 0;
  check(detail::driver().cuDeviceTotalMem(&bytes, handle_), "cuDeviceTotalMem", where);
  return bytes;
}

cuwrap::compute_capability device::compute_capability(std::source_location where) const {
  return {attribute<CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR>(where),
          attribute<CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR>(where)};
}

int device::raw_attribute(CUdevice_attribute attribute, std::source_location where) const {
  int value = 0;
  const CUresult r = detail::driver().cuDeviceGetAttribute(&value, attribute, handle_);
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuDeviceGetAttribute",
                        "attribute " + std::to_string(static_cast<int>(attribute)) + ", device " +
                            std::to_string(ordinal_),
                        where);
  }
  return value;
}

bool device::can_access_peer(device peer, std::source_location where) const {
  int can = 0;
  const CUresult r = detail::driver().cuDeviceCanAccessPeer(&can, handle_, peer.handle_);
  if (r != CUDA_SUCCESS) {
    detail::throw_error(
        make_error_code(r), "cuDeviceCanAccessPeer",
        "device " + std::to_string(ordinal_) + " and device " + std::to_string(peer.ordinal_),
        where);
  }
  return can != 0;
}

}  // namespace cuwrap
