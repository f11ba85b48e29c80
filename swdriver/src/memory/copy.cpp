// Copies and memsets: stream operations on real memory.
//
// A synchronous call (cuMemcpyHtoD, cuMemsetD8, ...) enqueues its operation in the current
// context's legacy default stream (the per-thread one for _ptds exports), so it waits for what
// that stream's barrier waits for, then runs the scheduler until the operation is done: the call
// returns after the copy. An Async call enqueues in its stream. Addresses are checked when the
// call is made (a device range must lie inside one allocation: live for a synchronous call, or
// allocated earlier in stream order for an enqueued one) and again when the operation executes
// (a range freed meanwhile fails it with CUDA_ERROR_ILLEGAL_ADDRESS, sticky as on a GPU).
//
// Pageable host memory (not allocated or registered with the driver) as the source of an Async
// copy is staged at the call, as the driver documents; copies between two host buffers are
// synchronous even when Async.
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "memory/copy_3d.hpp"
#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"

namespace swcu {
namespace {

constexpr std::size_t kMaxPitch = std::numeric_limits<int>::max();  // CU_DEVICE_ATTRIBUTE_MAX_PITCH

enum class Mode { sync, async };

// What an address is to the driver.
enum class Space { pageable, pinned, device };

Space space_of(State& s, std::uintptr_t address) {
  const Allocation* const a = find_allocation(s, address);
  if (a == nullptr) return Space::pageable;
  switch (a->memory) {
    case Allocation::Memory::host:
    case Allocation::Memory::registered: return Space::pinned;
    default: return Space::device;
  }
}

// One side of a copy: where, how many bytes per row, and whether it is driver memory that must
// still be there when the copy executes.
struct Side {
  std::uintptr_t address = 0;
  std::size_t pitch = 0;
  bool checked = false;  ///< inside an allocation: checked again at execution
  Space space = Space::pageable;
};

// A (possibly 2D) copy of `height` rows of `width` bytes.
struct Copy {
  Side dst, src;
  std::size_t width = 0, height = 1;
  std::shared_ptr<std::vector<unsigned char>> staged;  ///< the source, copied at the call
  int device = -1;  ///< the device whose stream runs it (pool access); -1: a staged peer copy

  [[nodiscard]] std::size_t bytes() const { return width * height; }
};

// The bytes a pitched range spans: (height - 1) rows of `pitch` and one of `width`; nullopt on
// overflow.
std::optional<std::size_t> extent(std::size_t pitch, std::size_t width, std::size_t height) {
  if (width == 0 || height == 0) return 0;
  const std::size_t rows = height - 1;
  if (rows != 0 && pitch > (std::numeric_limits<std::size_t>::max() - width) / rows) {
    return std::nullopt;
  }
  return rows * pitch + width;
}

Access access_for(Mode mode) { return mode == Mode::sync ? Access::now : Access::enqueue; }

// A device side: the whole range inside one allocation the call may use.
CUresult device_side(State& s, Side& side, std::size_t span, Mode mode) {
  if (span != 0 && find_range(s, side.address, span, access_for(mode)) == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  side.checked = span != 0;
  side.space = Space::device;
  return CUDA_SUCCESS;
}

// A host side: any memory; driver memory is checked like a device range.
CUresult host_side(State& s, Side& side, std::size_t span, Mode mode) {
  if (span != 0 && side.address == 0) return CUDA_ERROR_INVALID_VALUE;
  side.space = space_of(s, side.address);
  if (side.space == Space::pageable || span == 0) return CUDA_SUCCESS;
  if (find_range(s, side.address, span, access_for(mode)) == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  side.checked = true;
  return CUDA_SUCCESS;
}

// A unified address: driver memory (checked) or pageable host memory.
CUresult unified_side(State& s, Side& side, std::size_t span, Mode mode) {
  return host_side(s, side, span, mode);
}

bool still_there(State& s, const Side& side, std::size_t span) {
  return !side.checked || find_range(s, side.address, span, Access::execute) != nullptr;
}

Op copy_op(const Copy& c) {
  Op op;
  op.bytes = c.bytes();
  op.work = [c](State& s) -> CUresult {
    const std::size_t dst_span = *extent(c.dst.pitch, c.width, c.height);
    const std::size_t src_span = *extent(c.src.pitch, c.width, c.height);
    if (!still_there(s, c.dst, dst_span) || (!c.staged && !still_there(s, c.src, src_span))) {
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    if ((c.dst.checked && !device_may_access(s, c.device, c.dst.address, dst_span, true)) ||
        (c.src.checked && !c.staged &&
         !device_may_access(s, c.device, c.src.address, src_span, false))) {
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    const auto* src =
        c.staged ? c.staged->data() : reinterpret_cast<const unsigned char*>(c.src.address);
    const std::size_t src_pitch = c.staged ? c.width : c.src.pitch;
    auto* dst = reinterpret_cast<unsigned char*>(c.dst.address);
    for (std::size_t row = 0; row < c.height; ++row) {
      std::memmove(dst + row * c.dst.pitch, src + row * src_pitch, c.width);
    }
    return CUDA_SUCCESS;
  };
  return op;
}

// Copies `src` rows into a buffer so that the caller may reuse pageable memory at once.
void stage(Copy& c) {
  auto buffer = std::make_shared<std::vector<unsigned char>>(c.bytes());
  const auto* src = reinterpret_cast<const unsigned char*>(c.src.address);
  for (std::size_t row = 0; row < c.height; ++row) {
    std::memcpy(buffer->data() + row * c.width, src + row * c.src.pitch, c.width);
  }
  c.staged = std::move(buffer);
}

// The queue of a call: the stream of an Async call, else the current context's default stream.
CUresult queue_for(State& s, Mode mode, NullStream null, CUstream stream,
                   std::shared_ptr<Queue>& out) {
  if (mode == Mode::async) return resolve_stream(s, stream, null, out);
  Context* ctx = nullptr;
  if (const CUresult r = current_context(s, ctx)) return r;
  out = default_queue(s, *ctx, null).shared_from_this();
  return CUDA_SUCCESS;
}

// Runs `op` in `q`: to completion for a synchronous call (reporting its error), else enqueued.
CUresult submit(State& s, Lock& lock, Queue& q, Op op, bool wait) {
  const auto done = push(s, q, std::move(op));
  if (!wait) {
    kick(s, lock);
    return CUDA_SUCCESS;
  }
  wait_for(s, lock, done);
  if (q.ctx == nullptr) return CUDA_SUCCESS;
  if (q.ctx->sticky_error != CUDA_SUCCESS) return q.ctx->sticky_error;
  return take_error(q);
}

// What a stream capture records for a copy (capture.hpp).
CopyShape shape_of(const Copy& c) {
  return {c.dst.address, c.src.address, c.dst.pitch, c.src.pitch, c.width, c.height};
}

// Every copy: `check` validates the sides (and may fill in their spaces).
template <class Check>
CUresult copy(Sym sym, Mode mode, NullStream null, CUstream stream, Copy c, Check check) {
  return call_async(sym, [=, c = std::move(c)](State& s, Lock& lock) mutable -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = queue_for(s, mode, null, stream, q)) return r;
    if (const CUresult r = check(s, c)) return r;
    if (const auto r = capture_copy(s, *q, mode == Mode::sync, shape_of(c))) return *r;
    const bool host_to_host = c.dst.space != Space::device && c.src.space != Space::device;
    const bool wait = mode == Mode::sync || host_to_host;
    if (!wait && c.src.space == Space::pageable && c.bytes() != 0 && !runs_at_once(*q)) stage(c);
    c.device = q->device;
    return submit(s, lock, *q, copy_op(c), wait);
  });
}

Copy linear(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) {
  Copy c;
  c.dst.address = dst;
  c.src.address = src;
  c.dst.pitch = c.src.pitch = bytes;
  c.width = bytes;
  return c;
}

template <CUresult (*Dst)(State&, Side&, std::size_t, Mode),
          CUresult (*Src)(State&, Side&, std::size_t, Mode)>
CUresult copy_linear(Sym sym, Mode mode, NullStream null, CUstream stream, CUdeviceptr dst,
                     CUdeviceptr src, std::size_t bytes) {
  return copy(sym, mode, null, stream, linear(dst, src, bytes), [mode](State& s, Copy& c) {
    if (const CUresult r = Dst(s, c.dst, c.width, mode)) return r;
    return Src(s, c.src, c.width, mode);
  });
}

// cuMemcpyPeer: device memory of the given contexts (each range on its context's device).
CUresult peer_side(State& s, Side& side, std::size_t bytes, Mode mode, CUcontext handle) {
  const Context* const ctx = s.context(handle);
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->sticky_error != CUDA_SUCCESS) return ctx->sticky_error;
  if (const CUresult r = device_side(s, side, bytes, mode)) return r;
  const Allocation* const a = find_allocation(s, side.address);
  if (bytes != 0 && a->memory == Allocation::Memory::device && a->device != ctx->device) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// The synchronous form runs in the destination context's default stream, so it needs no current
// context; the Async form runs in its stream. Neither needs peer access: the driver stages such
// copies.
CUresult copy_peer(Sym sym, Mode mode, NullStream null, CUstream stream, CUdeviceptr dst,
                   CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, std::size_t bytes) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (mode == Mode::async) {
      if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    }
    Copy c = linear(dst, src, bytes);
    if (const CUresult r = peer_side(s, c.dst, bytes, mode, dst_ctx)) return r;
    if (const CUresult r = peer_side(s, c.src, bytes, mode, src_ctx)) return r;
    if (mode == Mode::sync) q = default_queue(s, *s.context(dst_ctx), null).shared_from_this();
    if (const auto r = capture_copy(s, *q, mode == Mode::sync, shape_of(c))) return *r;
    return submit(s, lock, *q, copy_op(c), mode == Mode::sync);
  });
}

// One side of a CUDA_MEMCPY2D: its memory type decides how the address is read and checked.
CUresult side_2d(State& s, int type, const void* host, CUdeviceptr device, std::size_t x,
                 std::size_t y, std::size_t pitch, std::size_t width, std::size_t height,
                 bool unaligned, Mode mode, Side& side) {
  std::uintptr_t base = 0;
  switch (type) {
    case CU_MEMORYTYPE_HOST: base = reinterpret_cast<std::uintptr_t>(host); break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: base = device; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (height > 1 && (pitch < width || x > pitch - width)) return CUDA_ERROR_INVALID_VALUE;
  if (!unaligned && pitch > kMaxPitch) return CUDA_ERROR_INVALID_VALUE;
  if (y != 0 && pitch > (std::numeric_limits<std::size_t>::max() - x) / y) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  side.address = base + y * pitch + x;
  side.pitch = pitch;
  const auto span = extent(pitch, width, height);
  if (!span) return CUDA_ERROR_INVALID_VALUE;
  switch (type) {
    case CU_MEMORYTYPE_HOST: return host_side(s, side, *span, mode);
    case CU_MEMORYTYPE_DEVICE: return device_side(s, side, *span, mode);
    default: return unified_side(s, side, *span, mode);
  }
}

CUresult copy_2d(Sym sym, Mode mode, NullStream null, CUstream stream, const CUDA_MEMCPY2D* p,
                 bool unaligned) {
  if (p == nullptr) {
    return call(sym, [](State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  if (raw(p->srcMemoryType) == CU_MEMORYTYPE_ARRAY ||
      raw(p->dstMemoryType) == CU_MEMORYTYPE_ARRAY) {
    // A copy to or from an array is a 3D copy of one slice (copy_3d.cpp).
    CUDA_MEMCPY3D d{};
    d.srcXInBytes = p->srcXInBytes, d.srcY = p->srcY, d.srcMemoryType = p->srcMemoryType;
    d.srcHost = p->srcHost, d.srcDevice = p->srcDevice, d.srcArray = p->srcArray;
    d.srcPitch = p->srcPitch;
    d.dstXInBytes = p->dstXInBytes, d.dstY = p->dstY, d.dstMemoryType = p->dstMemoryType;
    d.dstHost = p->dstHost, d.dstDevice = p->dstDevice, d.dstArray = p->dstArray;
    d.dstPitch = p->dstPitch;
    d.WidthInBytes = p->WidthInBytes, d.Height = p->Height, d.Depth = 1;
    const CopyMode m = mode == Mode::sync ? CopyMode::sync : CopyMode::async;
    return memcpy3d(sym, m, null, stream, &d, unaligned);
  }
  Copy c;
  c.width = p->WidthInBytes;
  c.height = p->WidthInBytes == 0 ? 0 : p->Height;
  const CUDA_MEMCPY2D d = *p;
  return copy(sym, mode, null, stream, c, [d, unaligned, mode](State& s, Copy& cp) -> CUresult {
    if (const CUresult r =
            side_2d(s, raw(d.dstMemoryType), d.dstHost, d.dstDevice, d.dstXInBytes, d.dstY,
                    d.dstPitch, d.WidthInBytes, d.Height, unaligned, mode, cp.dst)) {
      return r;
    }
    return side_2d(s, raw(d.srcMemoryType), d.srcHost, d.srcDevice, d.srcXInBytes, d.srcY,
                   d.srcPitch, d.WidthInBytes, d.Height, unaligned, mode, cp.src);
  });
}

// cuMemsetD8/16/32 and the 2D forms: `height` rows of `width` elements of `size` bytes.
CUresult memset(Sym sym, Mode mode, NullStream null, CUstream stream, CUdeviceptr dst,
                std::size_t pitch, unsigned int value, std::size_t size, std::size_t width,
                std::size_t height) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = queue_for(s, mode, null, stream, q)) return r;
    if (dst % size != 0 || (height > 1 && pitch % size != 0)) return CUDA_ERROR_INVALID_VALUE;
    if (width > std::numeric_limits<std::size_t>::max() / size) return CUDA_ERROR_INVALID_VALUE;
    const std::size_t row = width * size;
    if (height > 1 && pitch < row) return CUDA_ERROR_INVALID_VALUE;
    const auto span = extent(pitch, row, height);
    if (!span) return CUDA_ERROR_INVALID_VALUE;
    if (*span != 0 && find_range(s, dst, *span, access_for(mode)) == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const std::size_t fill_pitch = height > 1 ? pitch : row;
    const FillShape fill{dst, fill_pitch, value, static_cast<unsigned>(size), width, height};
    if (const auto r = capture_fill(s, *q, mode == Mode::sync, fill)) return *r;
    Op op;
    op.bytes = row * height;
    if (*span != 0) {
      const int device = q->device;
      op.work = [=](State& state) -> CUresult {
        if (find_range(state, dst, *span, Access::execute) == nullptr ||
            !device_may_access(state, device, dst, *span, true)) {
          return CUDA_ERROR_ILLEGAL_ADDRESS;
        }
        for (std::size_t r = 0; r < height; ++r) {
          auto* out = reinterpret_cast<unsigned char*>(dst + r * pitch);
          if (size == 1) {
            std::memset(out, static_cast<int>(value & 0xff), width);
            continue;
          }
          for (std::size_t i = 0; i < width; ++i) {
            if (size == 2) {
              const auto v = static_cast<std::uint16_t>(value);
              std::memcpy(out + i * 2, &v, 2);
            } else {
              std::memcpy(out + i * 4, &value, 4);
            }
          }
        }
        return CUDA_SUCCESS;
      };
    }
    return submit(s, lock, *q, std::move(op), mode == Mode::sync);
  });
}

CUresult unified(Sym sym, Mode mode, NullStream null, CUstream stream, CUdeviceptr dst,
                 CUdeviceptr src, std::size_t bytes) {
  return copy_linear<unified_side, unified_side>(sym, mode, null, stream, dst, src, bytes);
}

CUresult htod(Sym sym, Mode mode, NullStream null, CUstream stream, CUdeviceptr dst,
              const void* src, std::size_t bytes) {
  return copy_linear<device_side, host_side>(sym, mode, null, stream, dst,
                                             reinterpret_cast<CUdeviceptr>(src), bytes);
}

CUresult dtoh(Sym sym, Mode mode, NullStream null, CUstream stream, void* dst, CUdeviceptr src,
              std::size_t bytes) {
  return copy_linear<host_side, device_side>(sym, mode, null, stream,
                                             reinterpret_cast<CUdeviceptr>(dst), src, bytes);
}

CUresult dtod(Sym sym, Mode mode, NullStream null, CUstream stream, CUdeviceptr dst,
              CUdeviceptr src, std::size_t bytes) {
  return copy_linear<device_side, device_side>(sym, mode, null, stream, dst, src, bytes);
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;
constexpr Mode kSync = Mode::sync;
constexpr Mode kAsync = Mode::async;

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::kAsync;
using swcu::kLegacy;
using swcu::kPerThread;
using swcu::kSync;
using swcu::Sym;

// ---- linear copies ----

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return swcu::unified(Sym::cuMemcpy, kSync, kLegacy, nullptr, dst, src, ByteCount);
}

CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return swcu::unified(Sym::cuMemcpy_ptds, kSync, kPerThread, nullptr, dst, src, ByteCount);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return swcu::unified(Sym::cuMemcpyAsync, kAsync, kLegacy, hStream, dst, src, ByteCount);
}

CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return swcu::unified(Sym::cuMemcpyAsync_ptsz, kAsync, kPerThread, hStream, dst, src, ByteCount);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return swcu::htod(Sym::cuMemcpyHtoD_v2, kSync, kLegacy, nullptr, dstDevice, srcHost, ByteCount);
}

CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return swcu::htod(Sym::cuMemcpyHtoD_v2_ptds, kSync, kPerThread, nullptr, dstDevice, srcHost,
                    ByteCount);
}

CUresult cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return swcu::dtoh(Sym::cuMemcpyDtoH_v2, kSync, kLegacy, nullptr, dstHost, srcDevice, ByteCount);
}

CUresult cuMemcpyDtoH_v2_ptds(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return swcu::dtoh(Sym::cuMemcpyDtoH_v2_ptds, kSync, kPerThread, nullptr, dstHost, srcDevice,
                    ByteCount);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return swcu::dtod(Sym::cuMemcpyDtoD_v2, kSync, kLegacy, nullptr, dstDevice, srcDevice, ByteCount);
}

CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return swcu::dtod(Sym::cuMemcpyDtoD_v2_ptds, kSync, kPerThread, nullptr, dstDevice, srcDevice,
                    ByteCount);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                              CUstream hStream) {
  return swcu::htod(Sym::cuMemcpyHtoDAsync_v2, kAsync, kLegacy, hStream, dstDevice, srcHost,
                    ByteCount);
}

CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                                   CUstream hStream) {
  return swcu::htod(Sym::cuMemcpyHtoDAsync_v2_ptsz, kAsync, kPerThread, hStream, dstDevice, srcHost,
                    ByteCount);
}

CUresult cuMemcpyDtoHAsync_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                              CUstream hStream) {
  return swcu::dtoh(Sym::cuMemcpyDtoHAsync_v2, kAsync, kLegacy, hStream, dstHost, srcDevice,
                    ByteCount);
}

CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                   CUstream hStream) {
  return swcu::dtoh(Sym::cuMemcpyDtoHAsync_v2_ptsz, kAsync, kPerThread, hStream, dstHost, srcDevice,
                    ByteCount);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                              CUstream hStream) {
  return swcu::dtod(Sym::cuMemcpyDtoDAsync_v2, kAsync, kLegacy, hStream, dstDevice, srcDevice,
                    ByteCount);
}

CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                   CUstream hStream) {
  return swcu::dtod(Sym::cuMemcpyDtoDAsync_v2_ptsz, kAsync, kPerThread, hStream, dstDevice,
                    srcDevice, ByteCount);
}

// Synchronous peer copies run in the destination context's default stream.
CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                      CUcontext srcContext, size_t ByteCount) {
  return swcu::copy_peer(Sym::cuMemcpyPeer, kSync, kLegacy, nullptr, dstDevice, dstContext,
                         srcDevice, srcContext, ByteCount);
}

CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                           CUcontext srcContext, size_t ByteCount) {
  return swcu::copy_peer(Sym::cuMemcpyPeer_ptds, kSync, kPerThread, nullptr, dstDevice, dstContext,
                         srcDevice, srcContext, ByteCount);
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                           CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return swcu::copy_peer(Sym::cuMemcpyPeerAsync, kAsync, kLegacy, hStream, dstDevice, dstContext,
                         srcDevice, srcContext, ByteCount);
}

CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return swcu::copy_peer(Sym::cuMemcpyPeerAsync_ptsz, kAsync, kPerThread, hStream, dstDevice,
                         dstContext, srcDevice, srcContext, ByteCount);
}

// ---- 2D copies ----

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* pCopy) {
  return swcu::copy_2d(Sym::cuMemcpy2D_v2, kSync, kLegacy, nullptr, pCopy, false);
}

CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D* pCopy) {
  return swcu::copy_2d(Sym::cuMemcpy2D_v2_ptds, kSync, kPerThread, nullptr, pCopy, false);
}

CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* pCopy) {
  return swcu::copy_2d(Sym::cuMemcpy2DUnaligned_v2, kSync, kLegacy, nullptr, pCopy, true);
}

CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D* pCopy) {
  return swcu::copy_2d(Sym::cuMemcpy2DUnaligned_v2_ptds, kSync, kPerThread, nullptr, pCopy, true);
}

CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return swcu::copy_2d(Sym::cuMemcpy2DAsync_v2, kAsync, kLegacy, hStream, pCopy, false);
}

CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return swcu::copy_2d(Sym::cuMemcpy2DAsync_v2_ptsz, kAsync, kPerThread, hStream, pCopy, false);
}

// ---- memsets ----

CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return swcu::memset(Sym::cuMemsetD8_v2, kSync, kLegacy, nullptr, dstDevice, 0, uc, 1, N, 1);
}

CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return swcu::memset(Sym::cuMemsetD8_v2_ptds, kSync, kPerThread, nullptr, dstDevice, 0, uc, 1, N,
                      1);
}

CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return swcu::memset(Sym::cuMemsetD16_v2, kSync, kLegacy, nullptr, dstDevice, 0, us, 2, N, 1);
}

CUresult cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return swcu::memset(Sym::cuMemsetD16_v2_ptds, kSync, kPerThread, nullptr, dstDevice, 0, us, 2, N,
                      1);
}

CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return swcu::memset(Sym::cuMemsetD32_v2, kSync, kLegacy, nullptr, dstDevice, 0, ui, 4, N, 1);
}

CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return swcu::memset(Sym::cuMemsetD32_v2_ptds, kSync, kPerThread, nullptr, dstDevice, 0, ui, 4, N,
                      1);
}

CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                         size_t Height) {
  return swcu::memset(Sym::cuMemsetD2D8_v2, kSync, kLegacy, nullptr, dstDevice, dstPitch, uc, 1,
                      Width, Height);
}

CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                              size_t Width, size_t Height) {
  return swcu::memset(Sym::cuMemsetD2D8_v2_ptds, kSync, kPerThread, nullptr, dstDevice, dstPitch,
                      uc, 1, Width, Height);
}

CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                          size_t Height) {
  return swcu::memset(Sym::cuMemsetD2D16_v2, kSync, kLegacy, nullptr, dstDevice, dstPitch, us, 2,
                      Width, Height);
}

CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                               size_t Width, size_t Height) {
  return swcu::memset(Sym::cuMemsetD2D16_v2_ptds, kSync, kPerThread, nullptr, dstDevice, dstPitch,
                      us, 2, Width, Height);
}

CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                          size_t Height) {
  return swcu::memset(Sym::cuMemsetD2D32_v2, kSync, kLegacy, nullptr, dstDevice, dstPitch, ui, 4,
                      Width, Height);
}

CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                               size_t Width, size_t Height) {
  return swcu::memset(Sym::cuMemsetD2D32_v2_ptds, kSync, kPerThread, nullptr, dstDevice, dstPitch,
                      ui, 4, Width, Height);
}

CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD8Async, kAsync, kLegacy, hStream, dstDevice, 0, uc, 1, N, 1);
}

CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD8Async_ptsz, kAsync, kPerThread, hStream, dstDevice, 0, uc, 1,
                      N, 1);
}

CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD16Async, kAsync, kLegacy, hStream, dstDevice, 0, us, 2, N, 1);
}

CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N,
                               CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD16Async_ptsz, kAsync, kPerThread, hStream, dstDevice, 0, us, 2,
                      N, 1);
}

CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD32Async, kAsync, kLegacy, hStream, dstDevice, 0, ui, 4, N, 1);
}

CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD32Async_ptsz, kAsync, kPerThread, hStream, dstDevice, 0, ui, 4,
                      N, 1);
}

CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                           size_t Height, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD2D8Async, kAsync, kLegacy, hStream, dstDevice, dstPitch, uc, 1,
                      Width, Height);
}

CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                size_t Width, size_t Height, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD2D8Async_ptsz, kAsync, kPerThread, hStream, dstDevice, dstPitch,
                      uc, 1, Width, Height);
}

CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                            size_t Height, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD2D16Async, kAsync, kLegacy, hStream, dstDevice, dstPitch, us, 2,
                      Width, Height);
}

CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                 size_t Width, size_t Height, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD2D16Async_ptsz, kAsync, kPerThread, hStream, dstDevice,
                      dstPitch, us, 2, Width, Height);
}

CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                            size_t Height, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD2D32Async, kAsync, kLegacy, hStream, dstDevice, dstPitch, ui, 4,
                      Width, Height);
}

CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                 size_t Width, size_t Height, CUstream hStream) {
  return swcu::memset(Sym::cuMemsetD2D32Async_ptsz, kAsync, kPerThread, hStream, dstDevice,
                      dstPitch, ui, 4, Width, Height);
}

}  // extern "C"
