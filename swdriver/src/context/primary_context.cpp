// Primary contexts: one per device, reference counted by retain/release.
//
// While a device's primary context is retained its handle is stable. When the last reference is
// released the context is destroyed, and the next retain creates a new one with a new handle
// (the real driver may hand out the same value again; being stricter catches stale handles).
#include "context/context.hpp"
#include "context/reclaim.hpp"
#include "core/api.hpp"
#include "sched/sched.hpp"

namespace swcu {

Context& retain_primary(State& s, CUdevice dev) {
  Device& device = *s.device(dev);
  if (device.primary == nullptr) {
    device.primary =
        s.registry(SWCU_PRIMARY_CONTEXT)
            .add(std::make_unique<Context>(SWCU_PRIMARY_CONTEXT, dev, device.primary_flags,
                                           kContextApiVersion, s.next_context_id++));
  }
  ++device.primary_retains;
  return *device.primary;
}

CUresult release_primary(State& s, Lock& lock, CUdevice dev) {
  Device* const device = s.device(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (device->primary_retains == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (device->primary_retains == 1) {
    drain_context(s, lock, *device->primary);
    // Host functions ran without the lock: another thread may have retained or released.
    if (device->primary_retains == 0) return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (--device->primary_retains == 0) {
    reclaim_context(s, *device->primary);
    s.destroy(SWCU_PRIMARY_CONTEXT, device->primary);
    device->primary = nullptr;
  }
  return CUDA_SUCCESS;
}

namespace {

// The last release runs the context's queued work, then destroys it.
CUresult release(Sym sym, CUdevice dev) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult { return release_primary(s, lock, dev); });
}

// The legacy cuDevicePrimaryCtxSetFlags refuses while the context is active; _v2 does not.
CUresult set_flags(Sym sym, CUdevice dev, unsigned int flags, bool allow_active) {
  return call(sym, [=](State& s) -> CUresult {
    Device* const device = s.device(dev);
    if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (!valid_context_flags(flags)) return CUDA_ERROR_INVALID_VALUE;
    if (device->primary != nullptr && !allow_active) return CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;
    device->primary_flags = flags;
    if (device->primary != nullptr) device->primary->flags = flags;
    return CUDA_SUCCESS;
  });
}

// Resetting keeps the references (and the handle), destroys what the context owns (streams,
// events, memory: counted as reclaimed), clears a sticky error and restores its settings.
CUresult reset(Sym sym, CUdevice dev) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    Device* const device = s.device(dev);
    if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (device->primary != nullptr) drain_context(s, lock, *device->primary);
    if (device->primary != nullptr) {  // (host functions ran without the lock)
      reclaim_context(s, *device->primary);
      device->primary->reset_settings();
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::State;
using swcu::Sym;

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return swcu::call(Sym::cuDevicePrimaryCtxRetain, [=](State& s) -> CUresult {
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::Device* const device = s.device(dev);
    if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    *pctx = swcu::retain_primary(s, dev).handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  return swcu::release(Sym::cuDevicePrimaryCtxRelease, dev);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return swcu::release(Sym::cuDevicePrimaryCtxRelease_v2, dev);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  return swcu::call(Sym::cuDevicePrimaryCtxGetState, [=](State& s) -> CUresult {
    const swcu::Device* const device = s.device(dev);
    if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = device->primary_flags;
    *active = device->primary != nullptr ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  return swcu::set_flags(Sym::cuDevicePrimaryCtxSetFlags, dev, flags, false);
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return swcu::set_flags(Sym::cuDevicePrimaryCtxSetFlags_v2, dev, flags, true);
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  return swcu::reset(Sym::cuDevicePrimaryCtxReset, dev);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  return swcu::reset(Sym::cuDevicePrimaryCtxReset_v2, dev);
}

}  // extern "C"
