// Stream memory operations: cuStreamWaitValue32/64, cuStreamWriteValue32/64 and
// cuStreamBatchMemOp (their v1, _v2 and _ptsz exports).
//
// A write is device work that stores the value when the stream reaches it (a release store; the
// flush and barrier operations are sequentially consistent fences). A wait is an operation that
// the scheduler runs only once its condition holds on the memory (Op::ready, sched/sched.hpp):
// other streams go on meanwhile, and a synchronizing call that needs it runs their work and polls
// the memory, which a kernel, another stream, a host thread (page-locked or registered memory) or
// another process (memory opened with cuIpcOpenMemHandle) may write.
#include <cstdint>
#include <vector>

#include "core/api.hpp"
#include "exec/memops.hpp"
#include "sched/capture_hooks.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

using Abi = MemOpAbi;

// Whether a write moves bytes, for the simulated clock.
unsigned long long bytes_of(const MemOp& m) noexcept {
  switch (m.kind) {
    case CU_STREAM_MEM_OP_WRITE_VALUE_32: return 4;
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: return 8;
    default: return 0;
  }
}

// The stream operation for `m`.
Op make_op(const MemOp& m, int device) {
  Op op;
  op.kind = OpKind::work;
  op.bytes = bytes_of(m);
  if (is_wait(m)) op.ready = [m, device](State& s) { return memop_ready(s, device, m); };
  op.work = [m, device](State& s) { return run_memop(s, device, m); };
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
      if (const CUresult r = check_memop(s, abi, m)) return r;
    }
    if (const auto r = capture_memops(s, *q, ops)) return *r;
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
  for (unsigned i = 0; i < count; ++i) ops.push_back(decode_memop(params[i]));
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
