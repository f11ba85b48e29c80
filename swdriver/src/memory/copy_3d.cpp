// 3D copies between host, device, pitched and array memory (copy_3d.hpp), and the calls that are
// one such copy: cuMemcpy3D(Async), cuMemcpy3DPeer(Async), cuMemcpyAtoH/HtoA/AtoD/DtoA/AtoA.
#include "memory/copy_3d.hpp"

#include <cstring>
#include <limits>
#include <optional>

#include "memory/array.hpp"
#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"

namespace swcu {
namespace {

constexpr std::size_t kMaxPitch = std::numeric_limits<int>::max();  // CU_DEVICE_ATTRIBUTE_MAX_PITCH
constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

// a * b + c, or nullopt on overflow.
std::optional<std::size_t> mul_add(std::size_t a, std::size_t b, std::size_t c) {
  if (b != 0 && a > (kMax - c) / b) return std::nullopt;
  return a * b + c;
}

Access access_for(CopyMode mode) { return mode == CopyMode::sync ? Access::now : Access::enqueue; }

// The address of row (y, z) of a side (array sides: the live array `a`).
unsigned char* row_address(const CopySide& side, const Array* a, std::size_t y, std::size_t z) {
  if (side.is_array) return a->element(0, side.y + y, side.z + z) + side.x;
  return reinterpret_cast<unsigned char*>(side.address + z * side.slice + y * side.pitch);
}

// Whether a side is still there when the copy runs (`a`: its array, looked up again).
bool still_there(State& s, const CopySide& side, Array*& a, int device, bool write) {
  if (side.is_array) return find_array(s, side.array, a) == CUDA_SUCCESS;
  if (!side.checked) return true;
  return find_range(s, side.address, side.span, Access::execute) != nullptr &&
         device_may_access(s, device, side.address, side.span, write);
}

}  // namespace

CUresult run_copy_3d(State& s, const Copy3D& c, int device) {
  if (c.bytes() == 0) return CUDA_SUCCESS;
  Array* dst_array = nullptr;
  Array* src_array = nullptr;
  if (!still_there(s, c.dst, dst_array, device, true) ||
      (!c.staged && !still_there(s, c.src, src_array, device, false))) {
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  for (std::size_t z = 0; z < c.depth; ++z) {
    for (std::size_t y = 0; y < c.height; ++y) {
      const unsigned char* src = c.staged ? c.staged->data() + (z * c.height + y) * c.width
                                          : row_address(c.src, src_array, y, z);
      std::memmove(row_address(c.dst, dst_array, y, z), src, c.width);
    }
  }
  return CUDA_SUCCESS;
}

namespace {

// The queue of a call: the stream of an Async call, else the current context's default stream.
CUresult queue_for(State& s, CopyMode mode, NullStream null, CUstream stream,
                   std::shared_ptr<Queue>& out) {
  if (mode == CopyMode::async) return resolve_stream(s, stream, null, out);
  Context* ctx = nullptr;
  if (const CUresult r = current_context(s, ctx)) return r;
  out = default_queue(s, *ctx, null).shared_from_this();
  return CUDA_SUCCESS;
}

// A copy between two memory types the call names (cuMemcpyAtoH and the like), as a CUDA_MEMCPY3D
// of one row.
CUDA_MEMCPY3D row_copy(std::size_t bytes) {
  CUDA_MEMCPY3D p{};
  p.WidthInBytes = bytes;
  p.Height = 1;
  p.Depth = 1;
  return p;
}

}  // namespace

CUresult resolve_linear(State& s, int type, std::uintptr_t base, std::size_t x, std::size_t y,
                        std::size_t z, std::size_t pitch, std::size_t slice_height,
                        std::size_t width, std::size_t height, std::size_t depth, bool unaligned,
                        CopyMode mode, CopySide& out) {
  if (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // "srcPitch must be greater than or equal to WidthInBytes + srcXInBytes" and "srcHeight must be
  // greater than or equal to Height + srcY" where they are used (several rows, several slices).
  if ((height > 1 || depth > 1) && (pitch < width || x > pitch - width)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (depth > 1 && (slice_height < height || y > slice_height - height)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!unaligned && pitch > kMaxPitch) return CUDA_ERROR_INVALID_VALUE;
  if (depth <= 1) slice_height = std::max(slice_height, height + y);
  const auto slice = mul_add(pitch, slice_height, 0);
  const auto offset = slice ? mul_add(*slice, z, 0) : std::nullopt;
  const auto start = offset ? mul_add(pitch, y, *offset) : std::nullopt;
  if (!start || *start > kMax - x || base > kMax - (*start + x)) return CUDA_ERROR_INVALID_VALUE;
  out = CopySide{};
  out.address = base + *start + x;
  out.pitch = pitch;
  out.slice = *slice;
  if (width != 0 && height != 0 && depth != 0) {
    const auto rows = mul_add(*slice, depth - 1, 0);
    const auto span = rows ? mul_add(pitch, height - 1, *rows) : std::nullopt;
    if (!span || *span > kMax - width) return CUDA_ERROR_INVALID_VALUE;
    out.span = *span + width;
  }
  if (out.span == 0) return CUDA_SUCCESS;
  if (out.address == 0) return CUDA_ERROR_INVALID_VALUE;
  const Allocation* const a = find_allocation(s, out.address);
  const bool host_memory = a != nullptr && (a->memory == Allocation::Memory::host ||
                                            a->memory == Allocation::Memory::registered);
  if (type == CU_MEMORYTYPE_DEVICE || a != nullptr) {
    // Device memory must lie inside one allocation; so must driver-known host memory.
    if (find_range(s, out.address, out.span, access_for(mode)) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    out.checked = true;
    out.device = !host_memory;
  } else {
    out.pageable = true;
  }
  return CUDA_SUCCESS;
}

CUresult resolve_array(State& s, CUarray handle, std::size_t x, std::size_t y, std::size_t z,
                       std::size_t width, std::size_t height, std::size_t depth, CopySide& out) {
  Array* a = nullptr;
  if (find_array(s, handle, a) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  const std::size_t e = a->element_bytes();
  // "For CUDA arrays, srcXInBytes must be evenly divisible by the array element size."
  if (x % e != 0 || width % e != 0) return CUDA_ERROR_INVALID_VALUE;
  if (x > a->row_bytes() || width > a->row_bytes() - x) return CUDA_ERROR_INVALID_VALUE;
  if (y > a->height || height > a->height - y) return CUDA_ERROR_INVALID_VALUE;
  if (z > a->depth || depth > a->depth - z) return CUDA_ERROR_INVALID_VALUE;
  out = CopySide{};
  out.is_array = true;
  out.array = handle;
  out.x = x;
  out.y = y;
  out.z = z;
  out.device = true;
  return CUDA_SUCCESS;
}

CUresult resolve_memcpy3d(State& s, const CUDA_MEMCPY3D& p, bool unaligned, CopyMode mode,
                          Copy3D& out) {
  // "The srcLOD and dstLOD members of the CUDA_MEMCPY3D structure must be set to 0."
  if (p.srcLOD != 0 || p.dstLOD != 0) return CUDA_ERROR_INVALID_VALUE;
  out.width = p.WidthInBytes;
  out.height = p.Height;
  out.depth = p.Depth;
  const int dst_type = raw(p.dstMemoryType);
  const int src_type = raw(p.srcMemoryType);
  CUresult r = CUDA_SUCCESS;
  if (dst_type == CU_MEMORYTYPE_ARRAY) {
    r = resolve_array(s, p.dstArray, p.dstXInBytes, p.dstY, p.dstZ, out.width, out.height,
                      out.depth, out.dst);
  } else {
    const auto base =
        dst_type == CU_MEMORYTYPE_HOST ? reinterpret_cast<std::uintptr_t>(p.dstHost) : p.dstDevice;
    r = resolve_linear(s, dst_type, base, p.dstXInBytes, p.dstY, p.dstZ, p.dstPitch, p.dstHeight,
                       out.width, out.height, out.depth, unaligned, mode, out.dst);
  }
  if (r != CUDA_SUCCESS) return r;
  if (src_type == CU_MEMORYTYPE_ARRAY) {
    return resolve_array(s, p.srcArray, p.srcXInBytes, p.srcY, p.srcZ, out.width, out.height,
                         out.depth, out.src);
  }
  const auto base =
      src_type == CU_MEMORYTYPE_HOST ? reinterpret_cast<std::uintptr_t>(p.srcHost) : p.srcDevice;
  return resolve_linear(s, src_type, base, p.srcXInBytes, p.srcY, p.srcZ, p.srcPitch, p.srcHeight,
                        out.width, out.height, out.depth, unaligned, mode, out.src);
}

void stage_source(State& s, Copy3D& c) {
  auto buffer = std::make_shared<std::vector<unsigned char>>(c.bytes());
  Array* a = nullptr;
  if (c.src.is_array) (void)find_array(s, c.src.array, a);
  for (std::size_t z = 0; z < c.depth; ++z) {
    for (std::size_t y = 0; y < c.height; ++y) {
      std::memcpy(buffer->data() + (z * c.height + y) * c.width, row_address(c.src, a, y, z),
                  c.width);
    }
  }
  c.staged = std::move(buffer);
}

Op copies_op(std::vector<Copy3D> copies, int device) {
  Op op;
  for (const Copy3D& c : copies) op.bytes += c.bytes();
  op.work = [copies = std::move(copies), device](State& s) -> CUresult {
    for (const Copy3D& c : copies) {
      if (c.bytes() == 0) continue;
      if (const CUresult r = run_copy_3d(s, c, device)) return r;
    }
    return CUDA_SUCCESS;
  };
  return op;
}

CUresult submit_copies(State& s, Lock& lock, Queue& q, std::vector<Copy3D> copies, bool wait) {
  const bool linear = copies.size() == 1 && !copies[0].dst.is_array && !copies[0].src.is_array &&
                      copies[0].depth <= 1;
  if (linear) {
    const Copy3D& c = copies[0];
    const CopyShape shape{c.dst.address,
                          c.src.address,
                          c.dst.pitch,
                          c.src.pitch,
                          c.bytes() == 0 ? 0 : c.width,
                          c.bytes() == 0 ? 0 : c.height};
    if (const auto r = capture_copy(s, q, wait, shape)) return *r;
  } else if (const auto r = capture_copies(s, q, wait, copies)) {
    return *r;
  }
  const auto done = push(s, q, copies_op(std::move(copies), q.device));
  if (!wait) {
    kick(s, lock);
    return CUDA_SUCCESS;
  }
  wait_for(s, lock, done);
  if (q.ctx == nullptr) return CUDA_SUCCESS;
  if (q.ctx->sticky_error != CUDA_SUCCESS) return q.ctx->sticky_error;
  return take_error(q);
}

CUresult memcpy3d(Sym sym, CopyMode mode, NullStream null, CUstream stream, const CUDA_MEMCPY3D* p,
                  bool unaligned) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = queue_for(s, mode, null, stream, q)) return r;
    if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Copy3D c;
    if (const CUresult r = resolve_memcpy3d(s, *p, unaligned, mode, c)) return r;
    const bool host_to_host = !c.dst.device && !c.src.device;
    const bool wait = mode == CopyMode::sync || host_to_host;
    if (!wait && c.src.pageable && c.bytes() != 0 && !runs_at_once(*q)) stage_source(s, c);
    std::vector<Copy3D> copies;
    copies.push_back(std::move(c));
    return submit_copies(s, lock, *q, std::move(copies), wait);
  });
}

namespace {

// cuMemcpy3DPeer(Async): CUDA_MEMCPY3D_PEER names each side's context; the synchronous form
// runs in the destination context's default stream. Device memory must be on its context's
// device.
CUresult memcpy3d_peer(Sym sym, CopyMode mode, NullStream null, CUstream stream,
                       const CUDA_MEMCPY3D_PEER* p) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (mode == CopyMode::async) {
      if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    }
    if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Context* const dst_ctx = s.context(p->dstContext);
    Context* const src_ctx = s.context(p->srcContext);
    if (dst_ctx == nullptr || src_ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (dst_ctx->sticky_error != CUDA_SUCCESS) return dst_ctx->sticky_error;
    if (src_ctx->sticky_error != CUDA_SUCCESS) return src_ctx->sticky_error;
    CUDA_MEMCPY3D d{};
    d.srcXInBytes = p->srcXInBytes, d.srcY = p->srcY, d.srcZ = p->srcZ, d.srcLOD = p->srcLOD;
    d.srcMemoryType = p->srcMemoryType, d.srcHost = p->srcHost, d.srcDevice = p->srcDevice;
    d.srcArray = p->srcArray, d.srcPitch = p->srcPitch, d.srcHeight = p->srcHeight;
    d.dstXInBytes = p->dstXInBytes, d.dstY = p->dstY, d.dstZ = p->dstZ, d.dstLOD = p->dstLOD;
    d.dstMemoryType = p->dstMemoryType, d.dstHost = p->dstHost, d.dstDevice = p->dstDevice;
    d.dstArray = p->dstArray, d.dstPitch = p->dstPitch, d.dstHeight = p->dstHeight;
    d.WidthInBytes = p->WidthInBytes, d.Height = p->Height, d.Depth = p->Depth;
    Copy3D c;
    if (const CUresult r = resolve_memcpy3d(s, d, false, mode, c)) return r;
    // Each side's memory is its context's: device memory on that device, arrays of it.
    const auto on = [&s](const CopySide& side, const Context& ctx) {
      if (side.is_array) {
        Array* a = nullptr;
        return find_array(s, side.array, a) == CUDA_SUCCESS && a->device == ctx.device;
      }
      if (!side.checked || !side.device) return true;
      const Allocation* const a = find_allocation(s, side.address);
      return a->memory != Allocation::Memory::device || a->device == ctx.device;
    };
    if (c.bytes() != 0 && (!on(c.dst, *dst_ctx) || !on(c.src, *src_ctx))) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (mode == CopyMode::sync) q = default_queue(s, *dst_ctx, null).shared_from_this();
    const bool wait = mode == CopyMode::sync;
    if (!wait && c.src.pageable && c.bytes() != 0 && !runs_at_once(*q)) stage_source(s, c);
    std::vector<Copy3D> copies;
    copies.push_back(std::move(c));
    return submit_copies(s, lock, *q, std::move(copies), wait);
  });
}

// The array copies with a linear side: `bytes` from or to an array's first row at byte `offset`.
CUresult array_linear(Sym sym, CopyMode mode, NullStream null, CUstream stream, CUarray array,
                      std::size_t offset, int other_type, std::uintptr_t other, std::size_t bytes,
                      bool to_array) {
  CUDA_MEMCPY3D p = row_copy(bytes);
  if (to_array) {
    p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    p.dstArray = array;
    p.dstXInBytes = offset;
    p.srcMemoryType = static_cast<CUmemorytype>(other_type);
    p.srcHost = reinterpret_cast<const void*>(other);
    p.srcDevice = other;
  } else {
    p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    p.srcArray = array;
    p.srcXInBytes = offset;
    p.dstMemoryType = static_cast<CUmemorytype>(other_type);
    p.dstHost = reinterpret_cast<void*>(other);
    p.dstDevice = other;
  }
  return memcpy3d(sym, mode, null, stream, &p, false);
}

CUresult array_to_array(Sym sym, CUarray dst, std::size_t dst_offset, CUarray src,
                        std::size_t src_offset, std::size_t bytes) {
  CUDA_MEMCPY3D p = row_copy(bytes);
  p.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  p.dstArray = dst;
  p.dstXInBytes = dst_offset;
  p.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  p.srcArray = src;
  p.srcXInBytes = src_offset;
  const NullStream null =
      sym == Sym::cuMemcpyAtoA_v2_ptds ? NullStream::per_thread : NullStream::legacy;
  return memcpy3d(sym, CopyMode::sync, null, nullptr, &p, false);
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;
constexpr CopyMode kSync = CopyMode::sync;
constexpr CopyMode kAsync = CopyMode::async;
constexpr int kHost = CU_MEMORYTYPE_HOST;
constexpr int kDevice = CU_MEMORYTYPE_DEVICE;

std::uintptr_t host(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::host;
using swcu::kAsync;
using swcu::kDevice;
using swcu::kHost;
using swcu::kLegacy;
using swcu::kPerThread;
using swcu::kSync;
using swcu::Sym;

CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* pCopy) {
  return swcu::memcpy3d(Sym::cuMemcpy3D_v2, kSync, kLegacy, nullptr, pCopy, false);
}

CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D* pCopy) {
  return swcu::memcpy3d(Sym::cuMemcpy3D_v2_ptds, kSync, kPerThread, nullptr, pCopy, false);
}

CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return swcu::memcpy3d(Sym::cuMemcpy3DAsync_v2, kAsync, kLegacy, hStream, pCopy, false);
}

CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D* pCopy, CUstream hStream) {
  return swcu::memcpy3d(Sym::cuMemcpy3DAsync_v2_ptsz, kAsync, kPerThread, hStream, pCopy, false);
}

CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER* pCopy) {
  return swcu::memcpy3d_peer(Sym::cuMemcpy3DPeer, kSync, kLegacy, nullptr, pCopy);
}

CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER* pCopy) {
  return swcu::memcpy3d_peer(Sym::cuMemcpy3DPeer_ptds, kSync, kPerThread, nullptr, pCopy);
}

CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream) {
  return swcu::memcpy3d_peer(Sym::cuMemcpy3DPeerAsync, kAsync, kLegacy, hStream, pCopy);
}

CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream) {
  return swcu::memcpy3d_peer(Sym::cuMemcpy3DPeerAsync_ptsz, kAsync, kPerThread, hStream, pCopy);
}

// The 1D array copies: ByteCount bytes at byte offset srcOffset/dstOffset of the array's first
// row (a 1D array's only row). A copy that runs past the row is CUDA_ERROR_INVALID_VALUE.

CUresult cuMemcpyAtoH_v2(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyAtoH_v2, kSync, kLegacy, nullptr, srcArray, srcOffset,
                            kHost, host(dstHost), ByteCount, false);
}

CUresult cuMemcpyAtoH_v2_ptds(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyAtoH_v2_ptds, kSync, kPerThread, nullptr, srcArray,
                            srcOffset, kHost, host(dstHost), ByteCount, false);
}

CUresult cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void* srcHost,
                         size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyHtoA_v2, kSync, kLegacy, nullptr, dstArray, dstOffset,
                            kHost, host(srcHost), ByteCount, true);
}

CUresult cuMemcpyHtoA_v2_ptds(CUarray dstArray, size_t dstOffset, const void* srcHost,
                              size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyHtoA_v2_ptds, kSync, kPerThread, nullptr, dstArray,
                            dstOffset, kHost, host(srcHost), ByteCount, true);
}

CUresult cuMemcpyAtoHAsync_v2(void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                              CUstream hStream) {
  return swcu::array_linear(Sym::cuMemcpyAtoHAsync_v2, kAsync, kLegacy, hStream, srcArray,
                            srcOffset, kHost, host(dstHost), ByteCount, false);
}

CUresult cuMemcpyAtoHAsync_v2_ptsz(void* dstHost, CUarray srcArray, size_t srcOffset,
                                   size_t ByteCount, CUstream hStream) {
  return swcu::array_linear(Sym::cuMemcpyAtoHAsync_v2_ptsz, kAsync, kPerThread, hStream, srcArray,
                            srcOffset, kHost, host(dstHost), ByteCount, false);
}

CUresult cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void* srcHost,
                              size_t ByteCount, CUstream hStream) {
  return swcu::array_linear(Sym::cuMemcpyHtoAAsync_v2, kAsync, kLegacy, hStream, dstArray,
                            dstOffset, kHost, host(srcHost), ByteCount, true);
}

CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray dstArray, size_t dstOffset, const void* srcHost,
                                   size_t ByteCount, CUstream hStream) {
  return swcu::array_linear(Sym::cuMemcpyHtoAAsync_v2_ptsz, kAsync, kPerThread, hStream, dstArray,
                            dstOffset, kHost, host(srcHost), ByteCount, true);
}

CUresult cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                         size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyAtoD_v2, kSync, kLegacy, nullptr, srcArray, srcOffset,
                            kDevice, dstDevice, ByteCount, false);
}

CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset,
                              size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyAtoD_v2_ptds, kSync, kPerThread, nullptr, srcArray,
                            srcOffset, kDevice, dstDevice, ByteCount, false);
}

CUresult cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                         size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyDtoA_v2, kSync, kLegacy, nullptr, dstArray, dstOffset,
                            kDevice, srcDevice, ByteCount, true);
}

CUresult cuMemcpyDtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice,
                              size_t ByteCount) {
  return swcu::array_linear(Sym::cuMemcpyDtoA_v2_ptds, kSync, kPerThread, nullptr, dstArray,
                            dstOffset, kDevice, srcDevice, ByteCount, true);
}

CUresult cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                         size_t ByteCount) {
  return swcu::array_to_array(Sym::cuMemcpyAtoA_v2, dstArray, dstOffset, srcArray, srcOffset,
                              ByteCount);
}

CUresult cuMemcpyAtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUarray srcArray,
                              size_t srcOffset, size_t ByteCount) {
  return swcu::array_to_array(Sym::cuMemcpyAtoA_v2_ptds, dstArray, dstOffset, srcArray, srcOffset,
                              ByteCount);
}

}  // extern "C"
