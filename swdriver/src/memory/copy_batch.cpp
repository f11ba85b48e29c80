// Batches of copies as one stream operation: cuMemcpyBatchAsync (pointer to pointer) and
// cuMemcpy3DBatchAsync (pointers and arrays), in their CUDA 13 forms (_v2) and the CUDA 12.8
// forms that report the failing copy in *failIdx.
//
// "The batch as a whole executes in stream order but copies within a batch are not guaranteed
// to execute in any specific order": here the copies run in list order, inside one operation.
// Every copy is checked at the call; one that fails fails the call and nothing is enqueued.
// Source access orders: CU_MEMCPY_SRC_ACCESS_ORDER_STREAM reads the source when the batch runs
// (pageable memory is staged, as for any Async copy); DURING_API_CALL and ANY read it during the
// call (it is staged), which both allow. Location hints and
// CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE are hints: checked, then ignored. While the stream
// captures, a batch is refused and recorded nowhere (capture_refused), as the driver does.
#include <limits>

#include "memory/array.hpp"
#include "memory/copy_3d.hpp"
#include "sched/capture_hooks.hpp"

namespace swcu {
namespace {

constexpr std::size_t kNoIndex = std::numeric_limits<std::size_t>::max();

bool valid_order(int order) {
  return order == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
         order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
         order == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

bool valid_flags(unsigned flags) {
  return (flags & ~CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) == 0;
}

// The stream of a batch: "Must not be legacy NULL stream" (for a _ptsz export, NULL is the
// per-thread stream, which is allowed).
CUresult batch_stream(State& s, CUstream stream, NullStream null, std::shared_ptr<Queue>& q) {
  if (stream == CU_STREAM_LEGACY || (stream == nullptr && null == NullStream::legacy)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return resolve_stream(s, stream, null, q);
}

// Stages what the order asks to be read during the call, and pageable sources of copies that do
// not run at once.
void stage_if_needed(State& s, Queue& q, Copy3D& c, int order) {
  if (c.bytes() == 0) return;
  if (order != CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || (c.src.pageable && !runs_at_once(q))) {
    stage_source(s, c);
  }
}

CUresult batch(Sym sym, NullStream null, CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes,
               size_t count, CUmemcpyAttributes* attrs, size_t* attr_idxs, size_t num_attrs,
               size_t* fail_idx, CUstream stream) {
  if (fail_idx != nullptr) *fail_idx = kNoIndex;
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = batch_stream(s, stream, null, q)) return r;
    if (count == 0 || dsts == nullptr || srcs == nullptr || sizes == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // "the first entry in attrsIdxs must always be 0. Also, each entry must be greater than the
    // previous entry and the last entry should be less than count. Furthermore, numAttrs must be
    // lesser than or equal to count."
    if (num_attrs == 0 || num_attrs > count || attrs == nullptr || attr_idxs == nullptr ||
        attr_idxs[0] != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (std::size_t k = 0; k < num_attrs; ++k) {
      if ((k > 0 && attr_idxs[k] <= attr_idxs[k - 1]) || attr_idxs[k] >= count) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      if (!valid_order(raw(attrs[k].srcAccessOrder)) || !valid_flags(attrs[k].flags)) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    std::vector<Copy3D> copies(count);
    std::size_t k = 0;
    for (std::size_t i = 0; i < count; ++i) {
      while (k + 1 < num_attrs && attr_idxs[k + 1] <= i) ++k;
      Copy3D& c = copies[i];
      c.width = sizes[i];
      c.height = c.depth = 1;
      CUresult r = resolve_linear(s, CU_MEMORYTYPE_UNIFIED, dsts[i], 0, 0, 0, 0, 0, c.width, 1, 1,
                                  false, CopyMode::async, c.dst);
      if (r == CUDA_SUCCESS) {
        r = resolve_linear(s, CU_MEMORYTYPE_UNIFIED, srcs[i], 0, 0, 0, 0, 0, c.width, 1, 1, false,
                           CopyMode::async, c.src);
      }
      if (r != CUDA_SUCCESS) {
        if (fail_idx != nullptr) *fail_idx = i;
        return r;
      }
      stage_if_needed(s, *q, c, raw(attrs[k].srcAccessOrder));
    }
    if (const auto r = capture_refused(s, *q)) return *r;
    return submit_copies(s, lock, *q, std::move(copies), false);
  });
}

// One operand of a CUDA_MEMCPY3D_BATCH_OP as a copy side, `element` bytes per element.
CUresult operand(State& s, const CUmemcpy3DOperand& o, const CUextent3D& e, std::size_t element,
                 CopySide& out) {
  const std::size_t width = e.width * element;
  switch (raw(o.type)) {
    case CU_MEMCPY_OPERAND_TYPE_POINTER: {
      // rowLength "must either be zero or be greater than or equal to the width of the copy"
      // (likewise layerHeight and the height); zero is tightly packed.
      const auto& p = o.op.ptr;
      if ((p.rowLength != 0 && p.rowLength < e.width) ||
          (p.layerHeight != 0 && p.layerHeight < e.height)) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      const std::size_t row = (p.rowLength == 0 ? e.width : p.rowLength) * element;
      const std::size_t layer = p.layerHeight == 0 ? e.height : p.layerHeight;
      return resolve_linear(s, CU_MEMORYTYPE_UNIFIED, p.ptr, 0, 0, 0, row, layer, width, e.height,
                            e.depth, false, CopyMode::async, out);
    }
    case CU_MEMCPY_OPERAND_TYPE_ARRAY: {
      const auto& a = o.op.array;
      return resolve_array(s, a.array, a.offset.x * element, a.offset.y, a.offset.z, width,
                           e.height, e.depth, out);
    }
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

// The element size of a batch op: 1 between pointers, the array's with one array; two arrays
// "must match".
CUresult element_size(State& s, const CUDA_MEMCPY3D_BATCH_OP& op, std::size_t& out) {
  out = 0;
  for (const CUmemcpy3DOperand* o : {&op.src, &op.dst}) {
    if (raw(o->type) != CU_MEMCPY_OPERAND_TYPE_ARRAY) continue;
    Array* a = nullptr;
    if (find_array(s, o->op.array.array, a) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
    if (out != 0 && out != a->element_bytes()) return CUDA_ERROR_INVALID_VALUE;
    out = a->element_bytes();
  }
  if (out == 0) out = 1;
  return CUDA_SUCCESS;
}

CUresult batch_3d(Sym sym, NullStream null, size_t num_ops, CUDA_MEMCPY3D_BATCH_OP* ops,
                  size_t* fail_idx, unsigned long long flags, CUstream stream) {
  if (fail_idx != nullptr) *fail_idx = kNoIndex;
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = batch_stream(s, stream, null, q)) return r;
    // "flags - Flags for future use, must be zero now."
    if (num_ops == 0 || ops == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::vector<Copy3D> copies(num_ops);
    for (std::size_t i = 0; i < num_ops; ++i) {
      const CUDA_MEMCPY3D_BATCH_OP& op = ops[i];
      const auto fail = [&](CUresult r) {
        if (fail_idx != nullptr) *fail_idx = i;
        return r;
      };
      // "The width, height and depth components must not be 0."
      if (op.extent.width == 0 || op.extent.height == 0 || op.extent.depth == 0 ||
          !valid_order(raw(op.srcAccessOrder)) || !valid_flags(op.flags)) {
        return fail(CUDA_ERROR_INVALID_VALUE);
      }
      std::size_t element = 1;
      if (const CUresult r = element_size(s, op, element)) return fail(r);
      if (op.extent.width > std::numeric_limits<std::size_t>::max() / element) {
        return fail(CUDA_ERROR_INVALID_VALUE);
      }
      Copy3D& c = copies[i];
      c.width = op.extent.width * element;
      c.height = op.extent.height;
      c.depth = op.extent.depth;
      if (const CUresult r = operand(s, op.dst, op.extent, element, c.dst)) return fail(r);
      if (const CUresult r = operand(s, op.src, op.extent, element, c.src)) return fail(r);
      stage_if_needed(s, *q, c, raw(op.srcAccessOrder));
    }
    if (const auto r = capture_refused(s, *q)) return *r;
    return submit_copies(s, lock, *q, std::move(copies), false);
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::NullStream;
using swcu::Sym;

CUresult cuMemcpyBatchAsync_v2(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                               CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                               CUstream hStream) {
  return swcu::batch(Sym::cuMemcpyBatchAsync_v2, NullStream::legacy, dsts, srcs, sizes, count,
                     attrs, attrsIdxs, numAttrs, nullptr, hStream);
}

CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes,
                                    size_t count, CUmemcpyAttributes* attrs, size_t* attrsIdxs,
                                    size_t numAttrs, CUstream hStream) {
  return swcu::batch(Sym::cuMemcpyBatchAsync_v2_ptsz, NullStream::per_thread, dsts, srcs, sizes,
                     count, attrs, attrsIdxs, numAttrs, nullptr, hStream);
}

CUresult cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                            CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                            size_t* failIdx, CUstream hStream) {
  return swcu::batch(Sym::cuMemcpyBatchAsync, NullStream::legacy, dsts, srcs, sizes, count, attrs,
                     attrsIdxs, numAttrs, failIdx, hStream);
}

CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                 CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                 size_t* failIdx, CUstream hStream) {
  return swcu::batch(Sym::cuMemcpyBatchAsync_ptsz, NullStream::per_thread, dsts, srcs, sizes, count,
                     attrs, attrsIdxs, numAttrs, failIdx, hStream);
}

CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList,
                                 unsigned long long flags, CUstream hStream) {
  return swcu::batch_3d(Sym::cuMemcpy3DBatchAsync_v2, NullStream::legacy, numOps, opList, nullptr,
                        flags, hStream);
}

CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList,
                                      unsigned long long flags, CUstream hStream) {
  return swcu::batch_3d(Sym::cuMemcpy3DBatchAsync_v2_ptsz, NullStream::per_thread, numOps, opList,
                        nullptr, flags, hStream);
}

CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx,
                              unsigned long long flags, CUstream hStream) {
  return swcu::batch_3d(Sym::cuMemcpy3DBatchAsync, NullStream::legacy, numOps, opList, failIdx,
                        flags, hStream);
}

CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx,
                                   unsigned long long flags, CUstream hStream) {
  return swcu::batch_3d(Sym::cuMemcpy3DBatchAsync_ptsz, NullStream::per_thread, numOps, opList,
                        failIdx, flags, hStream);
}

}  // extern "C"
