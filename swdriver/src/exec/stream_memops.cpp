// Stream memory operations: cuStreamWaitValue32/64, cuStreamWriteValue32/64 and
// cuStreamBatchMemOp (their v1, _v2 and _ptsz exports).
//
// A write is device work that stores the value when the stream reaches it (a release store; the
// flush and barrier operations are sequentially consistent fences). A wait is an operation that
// the scheduler runs only once its condition holds on the memory (Op::ready, sched/sched.hpp):
// other streams go on meanwhile, and a synchronizing call that needs it runs their work and polls
// the memory, which a kernel, another stream, a host thread (page-locked or registered memory) or
// another process (memory opened with cuIpcOpenMemHandle) may write.
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/api.hpp"
#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

// Which ABI an export has: v1 (CUDA 8/9: no barrier operation) or v2 (CUDA 11.7).
enum class Abi { v1, v2 };

constexpr unsigned kConditionMask = 0xf;

// Whether (*addr, value) satisfy the CUstreamWaitValue_flags condition `flags` (cuda.h: GEQ is
// the cyclic (intN_t)(*addr - value) >= 0; EQ; AND (*addr & value) != 0; NOR ~(*addr | value)
// != 0).
template <class T>
bool holds(T current, T value, unsigned flags) noexcept {
  switch (flags & kConditionMask) {
    case CU_STREAM_WAIT_VALUE_GEQ:
      return static_cast<std::make_signed_t<T>>(static_cast<T>(current - value)) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return current == value;
    case CU_STREAM_WAIT_VALUE_AND: return (current & value) != 0;
    default: return static_cast<T>(~(current | value)) != 0;  // NOR
  }
}

// One validated memory operation.
struct MemOp {
  unsigned kind = 0;  // CUstreamBatchMemOpType
  CUdeviceptr address = 0;
  std::uint64_t value = 0;
  unsigned flags = 0;
};

[[nodiscard]] unsigned width_of(unsigned kind) noexcept {
  switch (kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_32: return 4;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: return 8;
    default: return 0;
  }
}

// The checks cuda.h documents (CUDA_ERROR_INVALID_VALUE): a known operation, its flags, an
// aligned address inside memory the device can reach that is not managed memory ("This function
// cannot be used with managed memory").
CUresult validate(State& s, Abi abi, const MemOp& m) {
  const unsigned width = width_of(m.kind);
  switch (m.kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      if ((m.flags & ~(kConditionMask | CU_STREAM_WAIT_VALUE_FLUSH)) != 0 ||
          (m.flags & kConditionMask) > CU_STREAM_WAIT_VALUE_NOR) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      if ((m.flags & ~static_cast<unsigned>(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      return m.flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_STREAM_MEM_OP_BARRIER:  // "Only supported in the _v2 API"
      if (abi == Abi::v1) return CUDA_ERROR_INVALID_VALUE;
      return m.flags == CU_STREAM_MEMORY_BARRIER_TYPE_SYS ||
                     m.flags == CU_STREAM_MEMORY_BARRIER_TYPE_GPU
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (m.address % width != 0) return CUDA_ERROR_INVALID_VALUE;
  const Allocation* const a = find_range(s, m.address, width, Access::enqueue);
  if (a == nullptr || a->memory == Allocation::Memory::managed) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

template <class T>
T load(CUdeviceptr address) noexcept {
  return std::atomic_ref<T>(*reinterpret_cast<T*>(address)).load(std::memory_order_acquire);
}

// Whether a device that runs the operation may still touch its memory: it may have been freed
// (or its access revoked) since the call.
bool reachable(State& s, int device, const MemOp& m, bool write) {
  const unsigned width = width_of(m.kind);
  return find_range(s, m.address, width, Access::execute) != nullptr &&
         device_may_access(s, device, m.address, width, write);
}

// The stream operation for `m`.
Op make_op(const MemOp& m, int device) {
  Op op;
  op.kind = OpKind::work;
  switch (m.kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      op.ready = [m, device](State& s) {
        if (!reachable(s, device, m, false)) return true;  // its work reports the fault
        return m.kind == CU_STREAM_MEM_OP_WAIT_VALUE_32
                   ? holds(load<std::uint32_t>(m.address), static_cast<std::uint32_t>(m.value),
                           m.flags)
                   : holds(load<std::uint64_t>(m.address), m.value, m.flags);
      };
      op.work = [m, device](State& s) -> CUresult {
        if (!reachable(s, device, m, false)) return CUDA_ERROR_ILLEGAL_ADDRESS;
        // CU_STREAM_WAIT_VALUE_FLUSH: writes that reached the memory before are visible after.
        if ((m.flags & CU_STREAM_WAIT_VALUE_FLUSH) != 0) {
          std::atomic_thread_fence(std::memory_order_seq_cst);
        }
        return CUDA_SUCCESS;
      };
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      op.bytes = width_of(m.kind);
      op.work = [m, device](State& s) -> CUresult {
        if (!reachable(s, device, m, true)) return CUDA_ERROR_ILLEGAL_ADDRESS;
        // The default write has a memory fence before it; NO_MEMORY_BARRIER only permits
        // reordering, which in-order execution never does.
        if (m.kind == CU_STREAM_MEM_OP_WRITE_VALUE_32) {
          std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(m.address))
              .store(static_cast<std::uint32_t>(m.value), std::memory_order_release);
        } else {
          std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(m.address))
              .store(m.value, std::memory_order_release);
        }
        return CUDA_SUCCESS;
      };
      break;
    default:  // FLUSH_REMOTE_WRITES and BARRIER
      op.work = [](State&) -> CUresult {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return CUDA_SUCCESS;
      };
      break;
  }
  return op;
}

// Validates every operation, then enqueues them in order (all or none). A capturing stream
// refuses them: graphs here have no memory-operation node (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
// which invalidates the capture).
CUresult submit(Sym sym, Abi abi, NullStream null, CUstream handle, std::vector<MemOp> ops) {
  return call_async(sym, [=, ops = std::move(ops)](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    for (const MemOp& m : ops) {
      if (const CUresult r = validate(s, abi, m)) return r;
    }
    if (const auto r = capture_other(s, *q)) return *r;
    for (const MemOp& m : ops) push(s, *q, make_op(m, q->device));
    kick(s, lock);
    return CUDA_SUCCESS;
  });
}

CUresult one(Sym sym, Abi abi, NullStream null, CUstream handle, unsigned kind, CUdeviceptr addr,
             std::uint64_t value, unsigned flags) {
  return submit(sym, abi, null, handle, {MemOp{kind, addr, value, flags}});
}

// cuStreamBatchMemOp: `count` below 256, flags 0.
CUresult batch(Sym sym, Abi abi, NullStream null, CUstream handle, unsigned count,
               const CUstreamBatchMemOpParams* params, unsigned flags) {
  if (count >= 256 || flags != 0 || (count != 0 && params == nullptr)) {
    return call(sym, [](State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  std::vector<MemOp> ops;
  ops.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    const CUstreamBatchMemOpParams& p = params[i];
    MemOp m;
    m.kind = static_cast<unsigned>(raw(p.operation));  // any value a caller passed
    switch (m.kind) {
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        m.address = p.waitValue.address;
        m.value =
            m.kind == CU_STREAM_MEM_OP_WAIT_VALUE_32 ? p.waitValue.value : p.waitValue.value64;
        m.flags = p.waitValue.flags;
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        m.address = p.writeValue.address;
        m.value =
            m.kind == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? p.writeValue.value : p.writeValue.value64;
        m.flags = p.writeValue.flags;
        break;
      case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: m.flags = p.flushRemoteWrites.flags; break;
      case CU_STREAM_MEM_OP_BARRIER: m.flags = p.memoryBarrier.flags; break;
      default: break;  // validate() refuses it
    }
    ops.push_back(m);
  }
  return submit(sym, abi, null, handle, std::move(ops));
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;
constexpr unsigned kWait32 = CU_STREAM_MEM_OP_WAIT_VALUE_32;
constexpr unsigned kWait64 = CU_STREAM_MEM_OP_WAIT_VALUE_64;
constexpr unsigned kWrite32 = CU_STREAM_MEM_OP_WRITE_VALUE_32;
constexpr unsigned kWrite64 = CU_STREAM_MEM_OP_WRITE_VALUE_64;

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::Abi;
using swcu::kLegacy;
using swcu::kPerThread;
using swcu::kWait32;
using swcu::kWait64;
using swcu::kWrite32;
using swcu::kWrite64;
using swcu::Sym;

// The v1 exports keep their names in the library (cuda.h maps the API names to the _v2 ones).
#define SWCU_MEMOP_EXPORTS(name, suffix, abi, kind, type, sym_tail)                     \
  CUresult name##suffix(CUstream s, CUdeviceptr addr, type value, unsigned int flags) { \
    return swcu::one(Sym::name##suffix, abi, sym_tail, s, kind, addr, value, flags);    \
  }

SWCU_MEMOP_EXPORTS(cuStreamWaitValue32, , Abi::v1, kWait32, cuuint32_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWaitValue32, _ptsz, Abi::v1, kWait32, cuuint32_t, kPerThread)
SWCU_MEMOP_EXPORTS(cuStreamWaitValue32, _v2, Abi::v2, kWait32, cuuint32_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWaitValue32, _v2_ptsz, Abi::v2, kWait32, cuuint32_t, kPerThread)
SWCU_MEMOP_EXPORTS(cuStreamWaitValue64, , Abi::v1, kWait64, cuuint64_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWaitValue64, _ptsz, Abi::v1, kWait64, cuuint64_t, kPerThread)
SWCU_MEMOP_EXPORTS(cuStreamWaitValue64, _v2, Abi::v2, kWait64, cuuint64_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWaitValue64, _v2_ptsz, Abi::v2, kWait64, cuuint64_t, kPerThread)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue32, , Abi::v1, kWrite32, cuuint32_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue32, _ptsz, Abi::v1, kWrite32, cuuint32_t, kPerThread)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue32, _v2, Abi::v2, kWrite32, cuuint32_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue32, _v2_ptsz, Abi::v2, kWrite32, cuuint32_t, kPerThread)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue64, , Abi::v1, kWrite64, cuuint64_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue64, _ptsz, Abi::v1, kWrite64, cuuint64_t, kPerThread)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue64, _v2, Abi::v2, kWrite64, cuuint64_t, kLegacy)
SWCU_MEMOP_EXPORTS(cuStreamWriteValue64, _v2_ptsz, Abi::v2, kWrite64, cuuint64_t, kPerThread)
#undef SWCU_MEMOP_EXPORTS

CUresult cuStreamBatchMemOp(CUstream s, unsigned int count, CUstreamBatchMemOpParams* params,
                            unsigned int flags) {
  return swcu::batch(Sym::cuStreamBatchMemOp, Abi::v1, kLegacy, s, count, params, flags);
}

CUresult cuStreamBatchMemOp_ptsz(CUstream s, unsigned int count, CUstreamBatchMemOpParams* params,
                                 unsigned int flags) {
  return swcu::batch(Sym::cuStreamBatchMemOp_ptsz, Abi::v1, kPerThread, s, count, params, flags);
}

CUresult cuStreamBatchMemOp_v2(CUstream s, unsigned int count, CUstreamBatchMemOpParams* params,
                               unsigned int flags) {
  return swcu::batch(Sym::cuStreamBatchMemOp_v2, Abi::v2, kLegacy, s, count, params, flags);
}

CUresult cuStreamBatchMemOp_v2_ptsz(CUstream s, unsigned int count,
                                    CUstreamBatchMemOpParams* params, unsigned int flags) {
  return swcu::batch(Sym::cuStreamBatchMemOp_v2_ptsz, Abi::v2, kPerThread, s, count, params, flags);
}

}  // extern "C"
