// Streams: creation, queries, synchronization (of a stream and of a whole context:
// cuCtxSynchronize), host functions and callbacks (sched/sched.hpp).
#include <algorithm>

#include "core/api.hpp"
#include "memory/ipc.hpp"
#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

// cuCtxGetStreamPriorityRange: 0 (least) to -5 (greatest).
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

CUresult create(Sym sym, CUstream* out, unsigned int flags, int priority) {
  return call(sym, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    if (out == nullptr || (flags & ~static_cast<unsigned int>(CU_STREAM_NON_BLOCKING)) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // Out of range priorities are clamped, as documented.
    const int clamped = std::clamp(priority, kGreatestPriority, kLeastPriority);
    Registry& streams = s.registry(SWCU_STREAM);
    auto stream = std::make_unique<Stream>(nullptr);
    ctx->queues.reserve(ctx->queues.size() + 1);
    stream->queue = create_queue(s, *ctx, flags, clamped);
    *out = reinterpret_cast<CUstream>(streams.add(std::move(stream)));
    return CUDA_SUCCESS;
  });
}

// The queue's work keeps running after the handle is gone; the queue goes when it drains.
CUresult destroy(Sym sym, CUstream handle) {
  return call(sym, [=](State& s) -> CUresult {
    Stream* const stream = s.find<Stream>(SWCU_STREAM, handle);
    if (stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    Queue& q = *stream->queue;
    if (q.ctx->sticky_error != CUDA_SUCCESS) return q.ctx->sticky_error;
    capture_stream_destroyed(s, q);
    q.destroyed = true;
    if (q.idle()) {
      std::erase_if(q.ctx->queues, [&q](const std::shared_ptr<Queue>& p) { return p.get() == &q; });
    }
    s.destroy(SWCU_STREAM, handle);
    return CUDA_SUCCESS;
  });
}

CUresult synchronize(Sym sym, NullStream null, CUstream handle) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    if (const CUresult r = capture_sync_check(s, *q)) return r;
    drain(s, lock, *q);
    release_pool_memory(s);                      // as documented for pools' release thresholds
    if (q->ctx == nullptr) return CUDA_SUCCESS;  // its context was destroyed meanwhile
    if (q->ctx->sticky_error != CUDA_SUCCESS) return q->ctx->sticky_error;
    return take_error(*q);
  });
}

CUresult query(Sym sym, NullStream null, CUstream handle) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    if (const CUresult r = capture_sync_check(s, *q)) return r;
    // A stream memory wait may have been released by the host since (no call told the
    // scheduler): run what became runnable (in immediate mode) before answering.
    if (!queue_done(*q)) kick(s, lock);
    if (!queue_done(*q)) return CUDA_ERROR_NOT_READY;
    return take_error(*q);
  });
}

CUresult wait_event(Sym sym, NullStream null, CUstream handle, CUevent event, unsigned int flags) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    const Event* const e = s.find<Event>(SWCU_EVENT, event);
    if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (const auto r = capture_wait(s, *q, *e, flags)) return *r;
    // CU_EVENT_WAIT_EXTERNAL is only valid during stream capture.
    if (flags != CU_EVENT_WAIT_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
    // A record made by another process (ipc.hpp) is waited for here, so that the stream's later
    // work is enqueued after it completed.
    if (e->ipc && recorded_elsewhere(*e->ipc)) return wait_remote_record(lock, e->ipc);
    Op op;
    op.kind = OpKind::wait;
    if (e->recorded && !e->recorded->done) op.deps.push_back(e->recorded);
    enqueue(s, lock, *q, std::move(op));
    return CUDA_SUCCESS;
  });
}

// A query of one property of a stream (special handles included).
template <class Read>
CUresult property(Sym sym, NullStream null, CUstream handle, Read read) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    return read(*q);
  });
}

CUresult get_priority(Sym sym, NullStream null, CUstream handle, int* priority) {
  return property(sym, null, handle, [=](const Queue& q) {
    if (priority == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *priority = q.priority;
    return CUDA_SUCCESS;
  });
}

CUresult get_flags(Sym sym, NullStream null, CUstream handle, unsigned int* flags) {
  return property(sym, null, handle, [=](const Queue& q) {
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = q.flags;
    return CUDA_SUCCESS;
  });
}

CUresult get_id(Sym sym, NullStream null, CUstream handle, unsigned long long* id) {
  return property(sym, null, handle, [=](const Queue& q) {
    if (id == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *id = q.id;
    return CUDA_SUCCESS;
  });
}

CUresult get_device(Sym sym, NullStream null, CUstream handle, CUdevice* device) {
  return property(sym, null, handle, [=](const Queue& q) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *device = q.device;
    return CUDA_SUCCESS;
  });
}

CUresult get_ctx(Sym sym, NullStream null, CUstream handle, CUcontext* pctx, CUgreenCtx* green,
                 bool has_green) {
  return property(sym, null, handle, [=](const Queue& q) {
    if (pctx == nullptr || (has_green && green == nullptr)) return CUDA_ERROR_INVALID_VALUE;
    *pctx = q.ctx->handle();
    if (has_green) *green = reinterpret_cast<CUgreenCtx>(q.ctx->green);  // or NULL
    return CUDA_SUCCESS;
  });
}

CUresult launch_host_func(Sym sym, NullStream null, CUstream handle, CUhostFn fn, void* data) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const auto r = capture_host_function(s, *q, fn, data)) return *r;
    Op op;
    op.kind = OpKind::host_function;
    op.host_function = fn;
    op.user_data = data;
    enqueue(s, lock, *q, std::move(op));
    return CUDA_SUCCESS;
  });
}

CUresult add_callback(Sym sym, NullStream null, CUstream handle, CUstreamCallback callback,
                      void* data, unsigned int flags) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (const auto r = capture_other(s, *q)) return *r;
    Op op;
    op.kind = OpKind::callback;
    op.callback = callback;
    op.stream_handle = handle;
    op.user_data = data;
    enqueue(s, lock, *q, std::move(op));
    return CUDA_SUCCESS;
  });
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;

// cuCtxSynchronize: runs the context's queued work, then reports its sticky error or the first
// unreported asynchronous error of its streams.
CUresult synchronize_context(Sym sym, CUcontext handle) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = context_or_current(s, handle, ctx)) return r;
    const CUcontext self = ctx->handle();
    drain_context(s, lock, *ctx);
    release_pool_memory(s);
    ctx = s.context(self);  // host functions ran without the lock: it may be gone
    if (ctx == nullptr) return CUDA_SUCCESS;
    if (ctx->sticky_error != CUDA_SUCCESS) return ctx->sticky_error;
    for (const auto& q : ctx->queues) {
      if (const CUresult r = take_error(*q)) return r;
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::kLegacy;
using swcu::kPerThread;
using swcu::Sym;

CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return swcu::create(Sym::cuStreamCreate, phStream, Flags, 0);
}

CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return swcu::create(Sym::cuStreamCreateWithPriority, phStream, flags, priority);
}

CUresult cuStreamDestroy(CUstream hStream) { return swcu::destroy(Sym::cuStreamDestroy, hStream); }

CUresult cuStreamDestroy_v2(CUstream hStream) {
  return swcu::destroy(Sym::cuStreamDestroy_v2, hStream);
}

CUresult cuStreamSynchronize(CUstream hStream) {
  return swcu::synchronize(Sym::cuStreamSynchronize, kLegacy, hStream);
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream) {
  return swcu::synchronize(Sym::cuStreamSynchronize_ptsz, kPerThread, hStream);
}

CUresult cuStreamQuery(CUstream hStream) {
  return swcu::query(Sym::cuStreamQuery, kLegacy, hStream);
}

CUresult cuStreamQuery_ptsz(CUstream hStream) {
  return swcu::query(Sym::cuStreamQuery_ptsz, kPerThread, hStream);
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return swcu::wait_event(Sym::cuStreamWaitEvent, kLegacy, hStream, hEvent, Flags);
}

CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return swcu::wait_event(Sym::cuStreamWaitEvent_ptsz, kPerThread, hStream, hEvent, Flags);
}

CUresult cuStreamGetPriority(CUstream hStream, int* priority) {
  return swcu::get_priority(Sym::cuStreamGetPriority, kLegacy, hStream, priority);
}

CUresult cuStreamGetPriority_ptsz(CUstream hStream, int* priority) {
  return swcu::get_priority(Sym::cuStreamGetPriority_ptsz, kPerThread, hStream, priority);
}

CUresult cuStreamGetFlags(CUstream hStream, unsigned int* flags) {
  return swcu::get_flags(Sym::cuStreamGetFlags, kLegacy, hStream, flags);
}

CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int* flags) {
  return swcu::get_flags(Sym::cuStreamGetFlags_ptsz, kPerThread, hStream, flags);
}

CUresult cuStreamGetId(CUstream hStream, unsigned long long* streamId) {
  return swcu::get_id(Sym::cuStreamGetId, kLegacy, hStream, streamId);
}

CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long* streamId) {
  return swcu::get_id(Sym::cuStreamGetId_ptsz, kPerThread, hStream, streamId);
}

CUresult cuStreamGetDevice(CUstream hStream, CUdevice* device) {
  return swcu::get_device(Sym::cuStreamGetDevice, kLegacy, hStream, device);
}

CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice* device) {
  return swcu::get_device(Sym::cuStreamGetDevice_ptsz, kPerThread, hStream, device);
}

CUresult cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  return swcu::get_ctx(Sym::cuStreamGetCtx, kLegacy, hStream, pctx, nullptr, false);
}

CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext* pctx) {
  return swcu::get_ctx(Sym::cuStreamGetCtx_ptsz, kPerThread, hStream, pctx, nullptr, false);
}

CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  return swcu::get_ctx(Sym::cuStreamGetCtx_v2, kLegacy, hStream, pCtx, pGreenCtx, true);
}

CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  return swcu::get_ctx(Sym::cuStreamGetCtx_v2_ptsz, kPerThread, hStream, pCtx, pGreenCtx, true);
}

CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return swcu::launch_host_func(Sym::cuLaunchHostFunc, kLegacy, hStream, fn, userData);
}

CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void* userData) {
  return swcu::launch_host_func(Sym::cuLaunchHostFunc_ptsz, kPerThread, hStream, fn, userData);
}

CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData,
                             unsigned int flags) {
  return swcu::add_callback(Sym::cuStreamAddCallback, kLegacy, hStream, callback, userData, flags);
}

CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void* userData,
                                  unsigned int flags) {
  return swcu::add_callback(Sym::cuStreamAddCallback_ptsz, kPerThread, hStream, callback, userData,
                            flags);
}

CUresult cuCtxSynchronize() { return swcu::synchronize_context(Sym::cuCtxSynchronize, nullptr); }

CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  return swcu::synchronize_context(Sym::cuCtxSynchronize_v2, ctx);
}

}  // extern "C"
