// Virtual memory management (cuwrap/virtual_memory.hpp): physical memory, reservations,
// mappings, access and sharing.
#include "cuwrap/virtual_memory.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "cuwrap/detail/driver.hpp"

namespace cuwrap {
namespace {

const detail::driver_table& drv() { return detail::driver(); }

CUmemAllocationProp properties_of(memory_location location,
                                  const physical_memory_options& options) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = location.native();
  prop.requestedHandleTypes =
      options.posix_fd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  prop.allocFlags.gpuDirectRDMACapable = options.gpu_direct_rdma ? 1 : 0;
  return prop;
}

std::string location_text(memory_location location) {
  return location.type == CU_MEM_LOCATION_TYPE_HOST ? std::string{"the host"}
                                                    : "device " + std::to_string(location.id);
}

// A state to fill with a handle: allocated before the driver call, so that a failed allocation
// of the state never leaves a handle behind.
std::shared_ptr<detail::allocation_handle_state> new_handle_state(std::size_t bytes) {
  auto state = std::make_shared<detail::allocation_handle_state>();
  state->size = bytes;
  return state;
}

}  // namespace

namespace detail {

allocation_handle_state::~allocation_handle_state() {
  if (handle != 0) check_nothrow(driver().cuMemRelease(handle), "cuMemRelease");
}

reservation_state::~reservation_state() {
  if (address != 0) check_nothrow(driver().cuMemAddressFree(address, size), "cuMemAddressFree");
}

}  // namespace detail

std::size_t allocation_granularity(memory_location location, granularity_kind kind,
                                   const physical_memory_options& options,
                                   std::source_location where) {
  const CUmemAllocationProp prop = properties_of(location, options);
  std::size_t granularity = 0;
  const CUresult r = drv().cuMemGetAllocationGranularity(
      &granularity, &prop, static_cast<CUmemAllocationGranularity_flags>(kind));
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemGetAllocationGranularity",
                        "of memory on " + location_text(location), where);
  }
  return granularity;
}

physical_memory::physical_memory(memory_location location, std::size_t bytes,
                                 const physical_memory_options& options, std::source_location where)
    : state_{new_handle_state(bytes)} {
  const CUmemAllocationProp prop = properties_of(location, options);
  CUmemGenericAllocationHandle handle = 0;
  const CUresult r = drv().cuMemCreate(&handle, bytes, &prop, 0);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemCreate",
                        std::to_string(bytes) + " bytes on " + location_text(location) +
                            " (the size must be a multiple of allocation_granularity)",
                        where);
  }
  state_->handle = handle;
}

physical_memory physical_memory::import_fd(int fd, std::size_t bytes, std::source_location where) {
  auto state = new_handle_state(bytes);
  CUmemGenericAllocationHandle handle = 0;
  const CUresult r = drv().cuMemImportFromShareableHandle(
      &handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),  // NOLINT: the C ABI
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemImportFromShareableHandle",
                        "descriptor " + std::to_string(fd), where);
  }
  state->handle = handle;
  return physical_memory{std::move(state)};
}

physical_memory physical_memory::retain(CUdeviceptr address, std::size_t bytes,
                                        std::source_location where) {
  auto state = new_handle_state(bytes);
  CUmemGenericAllocationHandle handle = 0;
  const CUresult r = drv().cuMemRetainAllocationHandle(
      &handle, reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)));  // NOLINT
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemRetainAllocationHandle",
                        "of address " + std::to_string(address) + " (it must be mapped)", where);
  }
  state->handle = handle;
  return physical_memory{std::move(state)};
}

const std::shared_ptr<detail::allocation_handle_state>& physical_memory::state(
    const char* operation, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "physical_memory", operation, where);
  return state_;
}

physical_memory_properties physical_memory::properties(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "physical_memory", "properties", where);
  CUmemAllocationProp prop{};
  check(drv().cuMemGetAllocationPropertiesFromHandle(&prop, state_->handle),
        "cuMemGetAllocationPropertiesFromHandle", where);
  physical_memory_properties out;
  out.location = {prop.location.type, prop.location.id};
  out.posix_fd = (static_cast<unsigned>(prop.requestedHandleTypes) &
                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
  out.gpu_direct_rdma = prop.allocFlags.gpuDirectRDMACapable != 0;
  return out;
}

file_descriptor physical_memory::export_fd(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "physical_memory", "export_fd", where);
  int fd = -1;
  const CUresult r = drv().cuMemExportToShareableHandle(
      &fd, state_->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemExportToShareableHandle",
                        "as a POSIX file descriptor (the memory must be created with "
                        "physical_memory_options::posix_fd)",
                        where);
  }
  return file_descriptor{fd};
}

address_reservation::address_reservation(std::size_t bytes, std::size_t alignment, CUdeviceptr hint,
                                         std::source_location where)
    : state_{std::make_shared<detail::reservation_state>()} {
  CUdeviceptr address = 0;
  const CUresult r = drv().cuMemAddressReserve(&address, bytes, alignment, hint, 0);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemAddressReserve",
                        std::to_string(bytes) + " bytes aligned to " + std::to_string(alignment),
                        where);
  }
  state_->address = address;
  state_->size = bytes;
}

memory_mapping address_reservation::map_handle(
    std::size_t offset, const std::shared_ptr<detail::allocation_handle_state>& handle,
    std::size_t handle_offset, std::size_t bytes, std::source_location where) {
  detail::expect_not_moved_from(!empty(), "address_reservation", "map", where);
  if (offset > state_->size || bytes > state_->size - offset) {
    detail::throw_error(
        make_error_code(CUDA_ERROR_INVALID_VALUE), "cuwrap::address_reservation::map",
        std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
            " do not fit the reservation of " + std::to_string(state_->size) + " bytes",
        where);
  }
  const CUdeviceptr address = state_->address + offset;
  const CUresult r = drv().cuMemMap(address, bytes, handle_offset, handle->handle, 0);
  if (r != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(r), "cuMemMap",
                        std::to_string(bytes) + " bytes from offset " +
                            std::to_string(handle_offset) + " at reservation offset " +
                            std::to_string(offset) +
                            " (sizes and offsets must be multiples of the granularity, and the "
                            "range not mapped yet)",
                        where);
  }
  return memory_mapping{state_, handle, address, bytes};
}

memory_mapping address_reservation::map(std::size_t offset, const physical_memory& memory,
                                        std::size_t memory_offset, std::size_t bytes,
                                        std::source_location where) {
  detail::expect_not_moved_from(!empty(), "address_reservation", "map", where);
  return map_handle(offset, memory.state("map", where), memory_offset, bytes, where);
}

memory_mapping address_reservation::map(std::size_t offset, const physical_memory& memory,
                                        std::source_location where) {
  return map(offset, memory, 0, memory.size(), where);
}

memory_mapping::~memory_mapping() {
  if (reservation_) check_nothrow(detail::driver().cuMemUnmap(address_, size_), "cuMemUnmap");
}

void memory_mapping::set_access(std::span<const access_descriptor> descriptors,
                                std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_mapping", "set_access", where);
  std::vector<CUmemAccessDesc> native(descriptors.size());
  for (std::size_t i = 0; i < descriptors.size(); ++i) {
    native[i].location = descriptors[i].location.native();
    native[i].flags = static_cast<CUmemAccess_flags>(descriptors[i].access);
  }
  check(drv().cuMemSetAccess(address_, size_, native.data(), native.size()), "cuMemSetAccess",
        where);
}

void memory_mapping::set_access(device d, memory_access access, std::source_location where) const {
  const access_descriptor one{memory_location::on(d), access};
  set_access(std::span{&one, 1}, where);
}

memory_access memory_mapping::access(memory_location location, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "memory_mapping", "access", where);
  const CUmemLocation native = location.native();
  unsigned long long flags = 0;
  check(drv().cuMemGetAccess(&flags, &native, address_), "cuMemGetAccess", where);
  return static_cast<memory_access>(flags);
}

void memory_mapping::unmap(std::source_location where) {
  detail::expect_not_moved_from(!empty(), "memory_mapping", "unmap", where);
  check(drv().cuMemUnmap(address_, size_), "cuMemUnmap", where);
  reservation_.reset();
  handle_.reset();
  address_ = 0;
  size_ = 0;
}

}  // namespace cuwrap
