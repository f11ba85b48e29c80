// Peer access between contexts (cuCtxEnablePeerAccess, cuCtxDisablePeerAccess) and the atomic
// capabilities of a peer link. Which devices reach which is SWCUDA_P2P (config.hpp); what is
// enabled is State::peer_access, pairs of context ids that go when either context is destroyed
// or reset (reclaim_context). Access changes no behaviour: every context can already read every
// allocation (device memory is host memory), and peer copies work without it, as on a GPU where
// the driver stages them.
#include "core/api.hpp"
#include "core/config.hpp"

namespace swcu {
namespace {

// The peer context of an enable or disable call: CUDA_ERROR_INVALID_CONTEXT unless it is live.
CUresult find_peer(State& s, CUcontext handle, Context*& out) {
  out = s.context(handle);
  return out == nullptr ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

// What an sm_90 link does natively for one operation (CUatomicOperationCapability bits).
unsigned int atomic_capabilities(int operation) {
  constexpr unsigned int kInteger = CU_ATOMIC_CAPABILITY_SIGNED | CU_ATOMIC_CAPABILITY_UNSIGNED |
                                    CU_ATOMIC_CAPABILITY_REDUCTION |
                                    CU_ATOMIC_CAPABILITY_SCALAR_32 | CU_ATOMIC_CAPABILITY_SCALAR_64;
  switch (operation) {
    case CU_ATOMIC_OPERATION_INTEGER_ADD:
    case CU_ATOMIC_OPERATION_INTEGER_MIN:
    case CU_ATOMIC_OPERATION_INTEGER_MAX:
    case CU_ATOMIC_OPERATION_INTEGER_INCREMENT:
    case CU_ATOMIC_OPERATION_INTEGER_DECREMENT:
    case CU_ATOMIC_OPERATION_AND:
    case CU_ATOMIC_OPERATION_OR:
    case CU_ATOMIC_OPERATION_XOR: return kInteger;
    case CU_ATOMIC_OPERATION_EXCHANGE:
    case CU_ATOMIC_OPERATION_CAS:
      return CU_ATOMIC_CAPABILITY_SCALAR_32 | CU_ATOMIC_CAPABILITY_SCALAR_64 |
             CU_ATOMIC_CAPABILITY_SCALAR_128;
    case CU_ATOMIC_OPERATION_FLOAT_ADD:
      return CU_ATOMIC_CAPABILITY_REDUCTION | CU_ATOMIC_CAPABILITY_SCALAR_32 |
             CU_ATOMIC_CAPABILITY_SCALAR_64;
    default: return 0;  // float min and max: not native on sm_90
  }
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::Context;
using swcu::State;
using swcu::Sym;

// As documented: CUDA_ERROR_INVALID_CONTEXT without a current context, for a peer that is not a
// live context or is the current context itself; CUDA_ERROR_INVALID_VALUE for flags other than
// 0; CUDA_ERROR_PEER_ACCESS_UNSUPPORTED when cuDeviceCanAccessPeer says 0 (another context on
// the same device included); CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED the second time.
CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  return call(Sym::cuCtxEnablePeerAccess, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    Context* peer = nullptr;
    if (const CUresult r = swcu::find_peer(s, peerContext, peer)) return r;
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (peer == ctx) return CUDA_ERROR_INVALID_CONTEXT;
    if (!swcu::config().can_access_peer(ctx->device, peer->device)) {
      return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    }
    if (!s.peer_access.emplace(ctx->id, peer->id).second) {
      return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
  return call(Sym::cuCtxDisablePeerAccess, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    Context* peer = nullptr;
    if (const CUresult r = swcu::find_peer(s, peerContext, peer)) return r;
    if (s.peer_access.erase({ctx->id, peer->id}) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    return CUDA_SUCCESS;
  });
}

// Consistent with cuDeviceGetP2PAttribute: a link SWCUDA_P2P allows does every integer atomic,
// exchange, compare-and-swap and float add natively; no link, nothing.
CUresult cuDeviceGetP2PAtomicCapabilities(unsigned int* capabilities,
                                          const CUatomicOperation* operations, unsigned int count,
                                          CUdevice srcDevice, CUdevice dstDevice) {
  return call(Sym::cuDeviceGetP2PAtomicCapabilities, [=](State& s) -> CUresult {
    if (s.device(srcDevice) == nullptr || s.device(dstDevice) == nullptr ||
        srcDevice == dstDevice) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    if (capabilities == nullptr || operations == nullptr || count == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (unsigned int i = 0; i < count; ++i) {
      const int op = swcu::raw(operations[i]);
      if (op < 0 || op >= CU_ATOMIC_OPERATION_MAX) return CUDA_ERROR_INVALID_VALUE;
    }
    const bool linked = swcu::config().can_access_peer(srcDevice, dstDevice);
    for (unsigned int i = 0; i < count; ++i) {
      capabilities[i] = linked ? swcu::atomic_capabilities(swcu::raw(operations[i])) : 0;
    }
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
