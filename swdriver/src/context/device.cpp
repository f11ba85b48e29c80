// Device queries: count, handles, names, UUIDs, memory, attributes, PCI ids and peers.
#include "context/device.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/api.hpp"
#include "core/config.hpp"

namespace swcu {
namespace {

constexpr int kSmCount = static_cast<int>(kDeviceSmCount);
constexpr int kClockKhz = 1980000;
constexpr int kSharedPerBlock = 49152;
constexpr int kRegistersPerBlock = 65536;
constexpr int kTotalConstantMemory = 65536;
constexpr int kMaxPitch = 2147483647;
constexpr int kTextureAlignment = 512;

// Parses hex digits, all of them; nullopt when empty, too long or not hex.
std::optional<unsigned> hex(std::string_view digits, std::size_t max_digits) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (digits.empty() || digits.size() > max_digits || ec != std::errc{} ||
      end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return value;
}

// "[domain:]bus:device.function" (hex, any case) -> bus, when domain, device and function are 0.
std::optional<unsigned> parse_pci_bus(std::string_view id) {
  const auto last_colon = id.rfind(':');
  if (last_colon == std::string_view::npos) return std::nullopt;
  const std::string_view slot = id.substr(last_colon + 1);
  std::string_view head = id.substr(0, last_colon);
  const auto domain_colon = head.find(':');
  if (domain_colon != std::string_view::npos) {
    const auto domain = hex(head.substr(0, domain_colon), 8);
    if (!domain || *domain != 0) return std::nullopt;
    head.remove_prefix(domain_colon + 1);
  }
  const auto bus = hex(head, 2);
  const auto dot = slot.find('.');
  if (!bus || dot == std::string_view::npos) return std::nullopt;
  const auto device = hex(slot.substr(0, dot), 2);
  const auto function = hex(slot.substr(dot + 1), 1);
  if (!device || !function || *device != 0 || *function != 0) return std::nullopt;
  return bus;
}

CUresult check_device(State& s, CUdevice dev) {
  return s.device(dev) == nullptr ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

CUresult get_uuid(Sym sym, CUuuid* uuid, CUdevice dev) {
  return call(sym, [=](State& s) -> CUresult {
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = check_device(s, dev)) return r;
    // "swcuda-device" followed by the ordinal: stable and distinct per device.
    static constexpr char kPrefix[] = "swcuda-device";
    static_assert(sizeof kPrefix <= sizeof uuid->bytes);
    std::memset(uuid->bytes, 0, sizeof uuid->bytes);
    std::memcpy(uuid->bytes, kPrefix, sizeof kPrefix - 1);
    uuid->bytes[sizeof uuid->bytes - 1] = static_cast<char>(dev);
    return CUDA_SUCCESS;
  });
}

}  // namespace

std::optional<int> device_attribute(int attribute, CUdevice device) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return kSharedPerBlock;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return kTotalConstantMemory;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return kMaxPitch;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return kRegistersPerBlock;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return kClockKhz;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return kTextureAlignment;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return kSmCount;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: return 0;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
    // CUDA array extents (memory/array.cpp checks cuArray3DCreate against them): an H100's,
    // as its deviceQuery reports them.
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE: return 8192;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS: return 2046;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT: return 65536;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH: return 16384;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS: return 2048;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH:
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH: return 32768;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS: return 2046;
    // Texture objects over linear and pitched memory (exec/texture.cpp checks against these),
    // and gather (tld4): an H100's limits. (TEXTURE_ALIGNMENT, TEXTURE_PITCH_ALIGNMENT and
    // SURFACE_ALIGNMENT are requirements and keep their values.)
    case CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER: return 1;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH: return 1 << 28;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH: return 131072;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT: return 65000;
    case CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH: return 2097120;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return pci_bus(device);
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 50 << 20;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 5;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 228 * 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: return 0;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return device;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: return 0;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
      return 1;  // device == host
    // The _V1 attributes ask about the deprecated _v1 stream memory operation API; an H200
    // (driver 580.159.04) reads 0 for them and 1 for the attributes below that replaced them.
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1: return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1: return 0;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;  // co-resident grid, grid.sync()
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES: return 1;  // a fence
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: return 0;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: return 0;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
      return 0;  // cuMemCreate never compresses
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 32505856;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: return 0;  // no nv-p2p
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED: return 0;  // no CUDA arrays
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED:
      return 0;  // no external semaphores
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    // GPUDirect RDMA needs the nv-p2p.h kernel interface, which a software driver has not.
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
      return CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
      return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 0;  // no CUDA arrays
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: return 1;          // exec/memops.cpp
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR: return 1;
    case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: return 0;  // no cuMemGetHandleForAddressRange
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT: return 4;
    case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED:
      return 1;  // cuTensorMapEncode* (exec/tensor_map.cpp), cp.async.bulk.tensor
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED: return 0;
    // No function is callable from both host and device: cuLibraryGetUnifiedFunction finds none
    // (module/library.cpp), as cuda.h allows on a system without such a device.
    case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS: return 0;
    case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG: return CU_DEVICE_NUMA_CONFIG_NONE;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
    case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: return 1;  // memory/multicast.cpp
    case CU_DEVICE_ATTRIBUTE_MPS_ENABLED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return 0;
    case CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK: return 0;
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH: return 0;
    case CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID: return 0x233010de;     // H100 SXM5, NVIDIA
    case CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID: return 0x16c110de;  // NVIDIA board
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED: return 1;  // memory/pool.cpp
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED: return 1;  // memory/pool.cpp
    case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED: return 0;
    case CU_DEVICE_ATTRIBUTE_MAX: break;
  }
  return std::nullopt;
}

}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::State;
using swcu::Sym;

CUresult cuDeviceGetCount(int* count) {
  return call(Sym::cuDeviceGetCount, [=](State& s) -> CUresult {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *count = static_cast<int>(s.devices.size());
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  return call(Sym::cuDeviceGet, [=](State& s) -> CUresult {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_device(s, ordinal)) return r;
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  return call(Sym::cuDeviceGetName, [=](State& s) -> CUresult {
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_device(s, dev)) return r;
    std::snprintf(name, static_cast<std::size_t>(len), "swcuda simulated H100 (device %d)", dev);
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return swcu::get_uuid(Sym::cuDeviceGetUuid, uuid, dev);
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return swcu::get_uuid(Sym::cuDeviceGetUuid_v2, uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  return call(Sym::cuDeviceTotalMem_v2, [=](State& s) -> CUresult {
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_device(s, dev)) return r;
    *bytes = static_cast<size_t>(swcu::config().device_memory);
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  const int attribute = swcu::raw(attrib);
  return call(Sym::cuDeviceGetAttribute, [=](State& s) -> CUresult {
    if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_device(s, dev)) return r;
    const auto value = swcu::device_attribute(attribute, dev);
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    *pi = *value;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  return call(Sym::cuDeviceComputeCapability, [=](State& s) -> CUresult {
    if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_device(s, dev)) return r;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
  return call(Sym::cuDeviceGetProperties, [=](State& s) -> CUresult {
    if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_device(s, dev)) return r;
    *prop = CUdevprop{};
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->sharedMemPerBlock = swcu::kSharedPerBlock;
    prop->totalConstantMemory = swcu::kTotalConstantMemory;
    prop->SIMDWidth = 32;
    prop->memPitch = swcu::kMaxPitch;
    prop->regsPerBlock = swcu::kRegistersPerBlock;
    prop->clockRate = swcu::kClockKhz;
    prop->textureAlign = swcu::kTextureAlignment;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  return call(Sym::cuDeviceGetPCIBusId, [=](State& s) -> CUresult {
    if (pciBusId == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_device(s, dev)) return r;
    std::snprintf(pciBusId, static_cast<std::size_t>(len), "0000:%02X:00.0", swcu::pci_bus(dev));
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  return call(Sym::cuDeviceGetByPCIBusId, [=](State& s) -> CUresult {
    if (dev == nullptr || pciBusId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto bus = swcu::parse_pci_bus(pciBusId);
    for (CUdevice d = 0; bus && d < static_cast<CUdevice>(s.devices.size()); ++d) {
      if (*bus == static_cast<unsigned>(swcu::pci_bus(d))) {
        *dev = d;
        return CUDA_SUCCESS;
      }
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  return call(Sym::cuDeviceCanAccessPeer, [=](State& s) -> CUresult {
    if (canAccessPeer == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.device(dev) == nullptr || s.device(peerDev) == nullptr) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    // A device is not its own peer: 0, as the real driver answers.
    *canAccessPeer = swcu::config().can_access_peer(dev, peerDev) ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                 CUdevice dstDevice) {
  const int attribute = swcu::raw(attrib);
  return call(Sym::cuDeviceGetP2PAttribute, [=](State& s) -> CUresult {
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.device(srcDevice) == nullptr || s.device(dstDevice) == nullptr ||
        srcDevice == dstDevice) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    const int linked = swcu::config().can_access_peer(srcDevice, dstDevice) ? 1 : 0;
    switch (attribute) {
      case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; return CUDA_SUCCESS;
      case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
      case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
      case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
        *value = linked;
        return CUDA_SUCCESS;
      case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED:
        *value = 0;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

}  // extern "C"
