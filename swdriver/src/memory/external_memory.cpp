// cuImportExternalMemory, cuExternalMemoryGetMappedBuffer, cuExternalMemoryGetMappedMipmappedArray
// and cuDestroyExternalMemory (external.hpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "core/api.hpp"
#include "core/logs.hpp"
#include "memory/array.hpp"
#include "memory/external.hpp"
#include "memory/memory.hpp"

namespace swcu {
namespace {

// Handle types that exist only on Windows, or need NvSciBuf or a Tegra dma_buf: the Linux x86
// driver refuses them (CUDA_ERROR_NOT_SUPPORTED), and this driver says why on stderr.
const char* unsupported_memory_type(int type) noexcept {
  switch (type) {
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32:
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_KMT:
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP:
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE:
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE:
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT:
      return "Windows (NT, KMT and Direct3D) handles do not exist on Linux";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF:
      return "NvSciBuf objects are not modelled (Tegra and DRIVE platforms)";
    case CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD:
      return "dma_buf import is supported only on Tegra Jetson Thor (cuda.h)";
    default: return nullptr;
  }
}

}  // namespace

void ExternalMemory::release() noexcept {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace swcu

using swcu::call;
using swcu::State;
using swcu::Sym;

extern "C" {

CUresult cuImportExternalMemory(CUexternalMemory* extMem_out,
                                const CUDA_EXTERNAL_MEMORY_HANDLE_DESC* memHandleDesc) {
  return call(Sym::cuImportExternalMemory, [=](State& s) -> CUresult {
    if (extMem_out == nullptr || memHandleDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const CUDA_EXTERNAL_MEMORY_HANDLE_DESC& d = *memHandleDesc;
    const int type = swcu::raw(d.type);
    if (const char* why = swcu::unsupported_memory_type(type)) {
      swcu::report(CU_LOG_LEVEL_ERROR,
                   "cuImportExternalMemory: handle type " + std::to_string(type) + ": " + why);
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (type != CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD) return CUDA_ERROR_INVALID_VALUE;
    if ((d.flags & ~static_cast<unsigned>(CUDA_EXTERNAL_MEMORY_DEDICATED)) != 0 || d.size == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const int fd = d.handle.fd;
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) return CUDA_ERROR_INVALID_HANDLE;  // not a descriptor
    if (static_cast<unsigned long long>(st.st_size) < d.size) {
      swcu::report(CU_LOG_LEVEL_ERROR, "cuImportExternalMemory: size " + std::to_string(d.size) +
                                           " is larger than the file descriptor's object (" +
                                           std::to_string(st.st_size) + " bytes)");
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto m = std::make_unique<swcu::ExternalMemory>();
    m->size = d.size;
    m->ctx = ctx;
    m->flags = d.flags;
    swcu::ExternalMemory* const raw = s.registry(SWCU_EXTERNAL_MEMORY).add(std::move(m));
    raw->fd = fd;  // the descriptor is the driver's from here on (closed by the destroy)
    *extMem_out = reinterpret_cast<CUexternalMemory>(raw);
    return CUDA_SUCCESS;
  });
}

CUresult cuExternalMemoryGetMappedBuffer(CUdeviceptr* devPtr, CUexternalMemory extMem,
                                         const CUDA_EXTERNAL_MEMORY_BUFFER_DESC* bufferDesc) {
  return call(Sym::cuExternalMemoryGetMappedBuffer, [=](State& s) -> CUresult {
    if (devPtr == nullptr || bufferDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto* const m = s.find<swcu::ExternalMemory>(SWCU_EXTERNAL_MEMORY, extMem);
    if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const CUDA_EXTERNAL_MEMORY_BUFFER_DESC& b = *bufferDesc;
    // "flags must be zero"; the range lies inside the imported size.
    if (b.flags != 0 || b.size == 0 || b.offset > m->size || b.size > m->size - b.offset) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    // mmap takes page-aligned offsets: map from the page that holds `offset`.
    const std::size_t page = swcu::page_size();
    const std::uint64_t start = b.offset / page * page;
    const std::size_t lead = static_cast<std::size_t>(b.offset - start);
    const std::size_t bytes = (lead + static_cast<std::size_t>(b.size) + page - 1) / page * page;
    void* const p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, m->fd,
                         static_cast<off_t>(start));
    if (p == MAP_FAILED) {
      swcu::report(CU_LOG_LEVEL_ERROR,
                   std::string{"cuExternalMemoryGetMappedBuffer: mmap: "} + std::strerror(errno));
      return CUDA_ERROR_OPERATING_SYSTEM;
    }
    auto a = std::make_unique<swcu::Allocation>(SWCU_DEVICE_ALLOCATION,
                                                swcu::Allocation::Memory::device);
    a->mapping = p;
    a->mapping_size = bytes;
    a->base = reinterpret_cast<std::uintptr_t>(p) + lead;
    a->size = static_cast<std::size_t>(b.size);
    a->ctx = ctx;
    a->device = ctx->device;
    a->buffer_id = s.next_buffer_id++;
    *devPtr = static_cast<CUdeviceptr>(swcu::add_allocation(s, std::move(a))->base);
    return CUDA_SUCCESS;
  });
}

// The levels lie in the imported memory from mipmapDesc->offset on (array.hpp), as mapped
// buffers do: a kernel's surface writes and a mapped buffer of the same range see the same bytes.
CUresult cuExternalMemoryGetMappedMipmappedArray(
    CUmipmappedArray* mipmap, CUexternalMemory extMem,
    const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC* mipmapDesc) {
  return call(Sym::cuExternalMemoryGetMappedMipmappedArray, [=](State& s) -> CUresult {
    if (mipmap == nullptr || mipmapDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto* const m = s.find<swcu::ExternalMemory>(SWCU_EXTERNAL_MEMORY, extMem);
    if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const CUresult r =
        swcu::map_mipmapped_array(s, *ctx, mipmapDesc->arrayDesc, mipmapDesc->numLevels, m->fd,
                                  mipmapDesc->offset, m->size, mipmap);
    if (r == CUDA_ERROR_INVALID_VALUE) {
      swcu::report(CU_LOG_LEVEL_ERROR,
                   "cuExternalMemoryGetMappedMipmappedArray: the descriptor is not one "
                   "cuMipmappedArrayCreate takes, numLevels is 0, or the levels from offset " +
                       std::to_string(mipmapDesc->offset) + " do not fit the " +
                       std::to_string(m->size) + " imported bytes");
    }
    return r;
  });
}

CUresult cuDestroyExternalMemory(CUexternalMemory extMem) {
  return call(Sym::cuDestroyExternalMemory, [=](State& s) -> CUresult {
    if (s.find<swcu::ExternalMemory>(SWCU_EXTERNAL_MEMORY, extMem) == nullptr) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    // Mapped buffers stay until cuMemFree (cuda.h: "must be freed ... explicitly").
    s.destroy(SWCU_EXTERNAL_MEMORY, extMem);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
