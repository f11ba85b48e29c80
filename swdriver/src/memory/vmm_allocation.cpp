// Virtual memory management, physical side: cuMemCreate, cuMemRelease, granularity, properties,
// and sharing as POSIX file descriptors (vmm_allocation.hpp).
#include "memory/vmm_allocation.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <memory>

#include "core/config.hpp"
#include "memory/memory.hpp"
#include "memory/multicast.hpp"

namespace swcu {
namespace {

constexpr std::uint32_t kVmmMagic = 0x76637773;  // "swcv"
constexpr std::uint32_t kVmmVersion = 1;
constexpr unsigned kKnownHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                       CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT |
                                       CU_MEM_HANDLE_TYPE_FABRIC;

// The page after an allocation's memory in its memfd.
struct VmmFileHeader {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t location_type;
  std::int32_t location_id;
  std::uint64_t size;
  std::uint32_t handle_types;
  std::int32_t pid;  ///< the creating process (for diagnostics)
};

// Checks properties as cuMemCreate and cuMemGetAllocationGranularity take them.
CUresult check_properties(State& s, const CUmemAllocationProp& prop) {
  switch (raw(prop.type)) {
    case CU_MEM_ALLOCATION_TYPE_PINNED: break;
    case CU_MEM_ALLOCATION_TYPE_MANAGED: return CUDA_ERROR_NOT_SUPPORTED;  // not simulated
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  const auto handle_types = static_cast<unsigned>(raw(prop.requestedHandleTypes));
  if ((handle_types & ~kKnownHandleTypes) != 0) return CUDA_ERROR_INVALID_VALUE;
  switch (raw(prop.location.type)) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      if (s.device(prop.location.id) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
      break;
    case CU_MEM_LOCATION_TYPE_HOST:
      // "HOST allocations are not IPC capable and CUmemAllocationProp::requestedHandleTypes
      // must be 0, any other value will result in CUDA_ERROR_INVALID_VALUE."
      if (handle_types != 0) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:  // CU_DEVICE_ATTRIBUTE_HOST_NUMA_..._SUPPORTED is 0
      return CUDA_ERROR_NOT_SUPPORTED;
    default:  // "Specifying CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT ... CUDA_ERROR_INVALID_VALUE"
      return CUDA_ERROR_INVALID_VALUE;
  }
  // Win32, KMT and fabric handles: not on this system (their device attributes are 0).
  if ((handle_types & ~static_cast<unsigned>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) != 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  // "In all other cases, this field is required to be zero."
  if (prop.win32HandleMetaData != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (prop.allocFlags.usage != 0) return CUDA_ERROR_NOT_SUPPORTED;  // no sparse arrays here
  // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is 0: no RDMA-capable memory.
  if (prop.allocFlags.gpuDirectRDMACapable != 0) return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

// A new memfd of `size` bytes with its header page; -1 when the system refuses.
int create_file(const CUmemAllocationProp& prop, std::size_t size) noexcept {
  const std::size_t page = page_size();
  if (size > static_cast<std::size_t>(std::numeric_limits<off_t>::max()) - page) return -1;
  const int fd = memfd_create("swcuda-vmm-allocation", MFD_CLOEXEC);
  if (fd < 0) return -1;
  const VmmFileHeader h{kVmmMagic,
                        kVmmVersion,
                        raw(prop.location.type),
                        prop.location.id,
                        size,
                        static_cast<std::uint32_t>(raw(prop.requestedHandleTypes)),
                        static_cast<std::int32_t>(getpid())};
  if (ftruncate(fd, static_cast<off_t>(size + page)) != 0 ||
      pwrite(fd, &h, sizeof h, static_cast<off_t>(size)) != static_cast<ssize_t>(sizeof h)) {
    close(fd);
    return -1;
  }
  return fd;
}

// Frees `v` when neither a handle reference nor a mapping holds it.
void free_if_unused(State& s, VmmAllocation& v) noexcept {
  if (v.refs != 0 || v.mappings != 0) return;
  if (v.multicast) release_multicast(s, v);
  if (v.charged != 0) {
    s.devices[static_cast<std::size_t>(v.prop.location.id)].memory_used -= v.charged;
  }
  s.destroy(SWCU_VMM_ALLOCATION, &v);
}

CUmemGenericAllocationHandle handle_of(const VmmAllocation& v) noexcept {
  return static_cast<CUmemGenericAllocationHandle>(reinterpret_cast<std::uintptr_t>(&v));
}

// Makes `v` live; returns its handle.
CUmemGenericAllocationHandle add(State& s, std::unique_ptr<VmmAllocation> v) {
  VmmAllocation* const raw_v = v.get();
  try {
    s.registry(SWCU_VMM_ALLOCATION).add(std::move(v));
  } catch (...) {
    if (v) v->release();
    throw;
  }
  return handle_of(*raw_v);
}

// The memory block id of the memfd with `inode`: that of a live handle of the same memory, else
// a new one.
unsigned long long block_id_of(State& s, std::uint64_t inode) {
  const auto same = s.registry(SWCU_VMM_ALLOCATION).handles_if([inode](const Object& o) {
    return static_cast<const VmmAllocation&>(o).inode == inode;
  });
  if (!same.empty()) return s.find<VmmAllocation>(SWCU_VMM_ALLOCATION, same.front())->block_id;
  return s.next_buffer_id++;
}

// cuMemImportFromShareableHandle of a POSIX descriptor: the allocation behind it, or the code.
CUresult import_fd(State& s, int fd, CUmemGenericAllocationHandle* out) {
  struct stat st {};
  const std::size_t page = page_size();
  if (fd < 0 || fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < page) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  VmmFileHeader h{};
  const auto header_at = static_cast<off_t>(static_cast<std::uint64_t>(st.st_size) - page);
  if (pread(fd, &h, sizeof h, header_at) != static_cast<ssize_t>(sizeof h) ||
      h.magic != kVmmMagic || h.version != kVmmVersion ||
      h.size != static_cast<std::uint64_t>(header_at)) {
    return CUDA_ERROR_INVALID_VALUE;  // not an allocation this driver exported
  }
  // "If the current process cannot support the memory described by this shareable handle, this
  // API will error as CUDA_ERROR_NOT_SUPPORTED": a device this process does not have.
  if (h.location_type == CU_MEM_LOCATION_TYPE_DEVICE && s.device(h.location_id) == nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  auto v = std::make_unique<VmmAllocation>();
  v->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (v->fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
  v->size = static_cast<std::size_t>(h.size);
  v->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  v->prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(h.handle_types);
  v->prop.location.type = static_cast<CUmemLocationType>(h.location_type);
  v->prop.location.id = h.location_id;
  v->inode = static_cast<std::uint64_t>(st.st_ino);
  v->block_id = block_id_of(s, v->inode);
  *out = add(s, std::move(v));
  return CUDA_SUCCESS;
}

}  // namespace

void VmmAllocation::release() noexcept {
  if (fd >= 0) close(fd);
  fd = -1;
}

VmmAllocation* find_vmm_allocation(State& s, CUmemGenericAllocationHandle handle) noexcept {
  auto* const v = s.find<VmmAllocation>(
      SWCU_VMM_ALLOCATION, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(handle)));
  return v != nullptr && v->refs != 0 ? v : nullptr;
}

std::size_t minimum_granularity(const CUmemLocation& location) noexcept {
  return raw(location.type) == CU_MEM_LOCATION_TYPE_HOST ? page_size() : kVmmGranularity;
}

CUmemGenericAllocationHandle retain(VmmAllocation& v) noexcept {
  ++v.refs;
  return handle_of(v);
}

void unmapped(State& s, VmmAllocation& v) noexcept {
  --v.mappings;
  free_if_unused(s, v);
}

}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::State;
using swcu::Sym;
using swcu::VmmAllocation;

// "This granularity can be used as a multiple for alignment, size, or address mapping." Device
// memory: 2 MiB, minimum and recommended; host memory: a page minimum, 2 MiB recommended.
CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
  const int which = swcu::raw(option);
  return call(Sym::cuMemGetAllocationGranularity, [=](State& s) -> CUresult {
    if (granularity == nullptr || prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (which != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
        which != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (const CUresult r = swcu::check_properties(s, *prop)) return r;
    *granularity = which == CU_MEM_ALLOC_GRANULARITY_MINIMUM
                       ? swcu::minimum_granularity(prop->location)
                       : swcu::kVmmGranularity;
    return CUDA_SUCCESS;
  });
}

// "The size of this allocation must be a multiple of the the value given via
// cuMemGetAllocationGranularity with the CU_MEM_ALLOC_GRANULARITY_MINIMUM flag." Flags: "for
// future use, must be zero now." Device memory is charged to the device's capacity.
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                     const CUmemAllocationProp* prop, unsigned long long flags) {
  return call(Sym::cuMemCreate, [=](State& s) -> CUresult {
    if (handle == nullptr || prop == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_properties(s, *prop)) return r;
    if (size == 0 || size % swcu::minimum_granularity(prop->location) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const bool on_device = swcu::raw(prop->location.type) == CU_MEM_LOCATION_TYPE_DEVICE;
    if (on_device) {
      const swcu::Device& dev = s.devices[static_cast<std::size_t>(prop->location.id)];
      if (size > swcu::config().device_memory - dev.memory_used) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    auto v = std::make_unique<VmmAllocation>();
    v->fd = swcu::create_file(*prop, size);
    if (v->fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    v->size = size;
    v->prop = *prop;
    v->prop.location.id = on_device ? prop->location.id : 0;  // "id is ignored for HOST"
    v->prop.allocFlags.compressionType = 0;  // never compressible: "query ... to validate"
    v->charged = on_device ? size : 0;
    struct stat st {};
    v->inode = fstat(v->fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
    v->block_id = s.next_buffer_id++;  // a new physical allocation
    *handle = swcu::add(s, std::move(v));
    if (on_device) s.devices[static_cast<std::size_t>(prop->location.id)].memory_used += size;
    return CUDA_SUCCESS;
  });
}

// "The generic memory handle can be freed when there are still outstanding mappings made with
// this handle." A handle without a reference left is refused ("If handle is not a valid handle
// the behavior is undefined").
CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return call(Sym::cuMemRelease, [=](State& s) -> CUresult {
    VmmAllocation* const v = swcu::find_vmm_allocation(s, handle);
    if (v == nullptr) return CUDA_ERROR_INVALID_VALUE;
    --v->refs;
    swcu::free_if_unused(s, *v);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                CUmemGenericAllocationHandle handle) {
  return call(Sym::cuMemGetAllocationPropertiesFromHandle, [=](State& s) -> CUresult {
    const VmmAllocation* const v = swcu::find_vmm_allocation(s, handle);
    if (prop == nullptr || v == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *prop = v->prop;
    return CUDA_SUCCESS;
  });
}

// A POSIX file descriptor (an int the caller owns and closes) of an allocation created with
// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR among its requested handle types.
CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType,
                                      unsigned long long flags) {
  const int type = swcu::raw(handleType);
  return call(Sym::cuMemExportToShareableHandle, [=](State& s) -> CUresult {
    const VmmAllocation* const v = swcu::find_vmm_allocation(s, handle);
    if (shareableHandle == nullptr || v == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (v->multicast) return CUDA_ERROR_NOT_SUPPORTED;  // multicast objects stay in the process
    if (type == CU_MEM_HANDLE_TYPE_WIN32 || type == CU_MEM_HANDLE_TYPE_WIN32_KMT ||
        type == CU_MEM_HANDLE_TYPE_FABRIC) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        (static_cast<unsigned>(swcu::raw(v->prop.requestedHandleTypes)) &
         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const int fd = fcntl(v->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
    *static_cast<int*>(shareableHandle) = fd;
    return CUDA_SUCCESS;
  });
}

// For CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, `osHandle` is the descriptor itself (cast to a
// pointer), which the caller keeps and closes. Each import is a new handle: "There is no
// guarantee that the contents of handle will be the same CUDA memory handle for the same given
// OS shareable handle".
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                        CUmemAllocationHandleType shHandleType) {
  const int type = swcu::raw(shHandleType);
  return call(Sym::cuMemImportFromShareableHandle, [=](State& s) -> CUresult {
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEM_HANDLE_TYPE_WIN32 || type == CU_MEM_HANDLE_TYPE_WIN32_KMT ||
        type == CU_MEM_HANDLE_TYPE_FABRIC) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
    const auto value = reinterpret_cast<std::intptr_t>(osHandle);
    if (value < 0 || value > std::numeric_limits<int>::max()) return CUDA_ERROR_INVALID_VALUE;
    return swcu::import_fd(s, static_cast<int>(value), handle);
  });
}

}  // extern "C"
