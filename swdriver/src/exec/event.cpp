// Events: records in stream order, queries, synchronization and simulated elapsed time.
#include "core/api.hpp"
#include "memory/ipc.hpp"
#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

constexpr unsigned int kEventFlags =
    CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;

// A live event, and its context's sticky error.
CUresult find_event(State& s, CUevent handle, Event*& out) {
  out = s.find<Event>(SWCU_EVENT, handle);
  if (out == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return out->ctx->sticky_error;
}

// The asynchronous error captured by a record, reported once.
CUresult take_record_error(Completion& c) {
  if (!c.error || c.error->reported) return CUDA_SUCCESS;
  c.error->reported = true;
  return c.error->code;
}

CUresult destroy(Sym sym, CUevent handle) {
  return call(sym, [=](State& s) -> CUresult {
    Event* e = nullptr;
    if (const CUresult r = find_event(s, handle, e)) return r;
    s.destroy(SWCU_EVENT, handle);  // a pending record still completes; nothing waits on it here
    return CUDA_SUCCESS;
  });
}

CUresult record(Sym sym, NullStream null, CUevent event, CUstream stream, unsigned int flags) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    Event* e = nullptr;
    if (const CUresult r = find_event(s, event, e)) return r;
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (q->ctx != e->ctx) return CUDA_ERROR_INVALID_HANDLE;  // as documented
    if (const auto r = capture_record(s, *q, *e, flags)) return *r;
    // CU_EVENT_RECORD_EXTERNAL is only valid during stream capture.
    if (flags != CU_EVENT_RECORD_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
    Op op;
    op.kind = OpKind::record;
    if (e->ipc) prepare_ipc_record(e->ipc, op);  // publishes to other processes when it runs
    e->recorded = push(s, *q, std::move(op));
    kick(s, lock);  // may release the lock: `e` is not used after this
    return CUDA_SUCCESS;
  });
}

// cuCtxRecordEvent and cuCtxWaitEvent refuse a context with a capturing stream and invalidate
// every such capture ("the call will invalidate all the conflicting captures").
CUresult refuse_capturing_context(State& s, Context& ctx) {
  CUresult result = CUDA_SUCCESS;
  for (const auto& q : ctx.queues) {
    if (q->capture && capture_other(s, *q)) result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return result;
}

// The context a cuCtx{Record,Wait}Event names: live, without a sticky error. The reference
// does not say that NULL means the current context; this driver refuses it.
CUresult find_context(State& s, CUcontext handle, Context*& out) {
  if (handle == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  out = s.context(handle);
  if (out == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  return out->sticky_error;
}

// One record that completes when everything enqueued in the context's queues so far has: an
// operation of the context's record queue that depends on every other queue's tail.
CUresult record_context(State& s, Lock& lock, CUcontext handle, CUevent event) {
  Context* ctx = nullptr;
  if (const CUresult r = find_context(s, handle, ctx)) return r;
  Event* e = nullptr;
  if (const CUresult r = find_event(s, event, e)) return r;
  if (e->ctx != ctx) return CUDA_ERROR_INVALID_HANDLE;  // "must be from the same CUDA context"
  if (const CUresult r = refuse_capturing_context(s, *ctx)) return r;
  if (ctx->record_queue == nullptr) {
    ctx->record_queue = create_queue(s, *ctx, CU_STREAM_NON_BLOCKING, 0).get();
  }
  Op op;
  op.kind = OpKind::record;
  for (const auto& q : ctx->queues) {
    if (q.get() != ctx->record_queue && q->tail && !q->tail->done) op.deps.push_back(q->tail);
  }
  if (e->ipc) prepare_ipc_record(e->ipc, op);
  e->captured.reset();  // an ordinary record
  e->recorded = push(s, *ctx->record_queue, std::move(op));
  kick(s, lock);  // may release the lock: `e` is not used after this
  return CUDA_SUCCESS;
}

// Every operation enqueued in the context from now on waits for the event's last record.
CUresult wait_context(State& s, Lock& lock, CUcontext handle, CUevent event) {
  Context* ctx = nullptr;
  if (const CUresult r = find_context(s, handle, ctx)) return r;
  const Event* const e = s.find<Event>(SWCU_EVENT, event);  // may be of another context
  if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (const CUresult r = captured_event_wait_check(s, *e)) return r;
  if (const CUresult r = refuse_capturing_context(s, *ctx)) return r;
  // A record made by another process (ipc.hpp) is waited for here, as cuStreamWaitEvent does.
  if (e->ipc && recorded_elsewhere(*e->ipc)) return wait_remote_record(lock, e->ipc);
  if (e->recorded && !e->recorded->done) ctx->waits.push_back(e->recorded);
  return CUDA_SUCCESS;
}

CUresult elapsed(Sym sym, float* ms, CUevent start_handle, CUevent end_handle) {
  return call(sym, [=](State& s) -> CUresult {
    Event* start = nullptr;
    Event* end = nullptr;
    if (const CUresult r = find_event(s, start_handle, start)) return r;
    if (const CUresult r = find_event(s, end_handle, end)) return r;
    if (const CUresult r = captured_event_check(s, *start)) return r;
    if (const CUresult r = captured_event_check(s, *end)) return r;
    if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) != 0) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
    if (!start->recorded->done || !end->recorded->done) return CUDA_ERROR_NOT_READY;
    // Each device has its own clock: events of two devices cannot be compared.
    if (start->recorded->device != end->recorded->device) return CUDA_ERROR_INVALID_HANDLE;
    const auto diff = static_cast<long long>(end->recorded->time_ns) -
                      static_cast<long long>(start->recorded->time_ns);
    *ms = static_cast<float>(static_cast<double>(diff) / 1e6);
    return CUDA_SUCCESS;
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::call_async;
using swcu::Event;
using swcu::Lock;
using swcu::NullStream;
using swcu::State;
using swcu::Sym;

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return call(Sym::cuEventCreate, [=](State& s) -> CUresult {
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (phEvent == nullptr || (Flags & ~swcu::kEventFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) != 0 && (Flags & CU_EVENT_DISABLE_TIMING) == 0) {
      return CUDA_ERROR_INVALID_VALUE;  // interprocess events must disable timing
    }
    auto event = std::make_unique<Event>(ctx, Flags);
    if ((Flags & CU_EVENT_INTERPROCESS) != 0) {  // its state lives in shared memory (ipc.hpp)
      event->ipc = swcu::create_ipc_event();
      if (!event->ipc) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    Event* const e = s.registry(SWCU_EVENT).add(std::move(event));
    *phEvent = reinterpret_cast<CUevent>(e);
    return CUDA_SUCCESS;
  });
}

CUresult cuEventDestroy(CUevent hEvent) { return swcu::destroy(Sym::cuEventDestroy, hEvent); }

CUresult cuEventDestroy_v2(CUevent hEvent) { return swcu::destroy(Sym::cuEventDestroy_v2, hEvent); }

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  return swcu::record(Sym::cuEventRecord, NullStream::legacy, hEvent, hStream, 0);
}

CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return swcu::record(Sym::cuEventRecord_ptsz, NullStream::per_thread, hEvent, hStream, 0);
}

CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return swcu::record(Sym::cuEventRecordWithFlags, NullStream::legacy, hEvent, hStream, flags);
}

CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return swcu::record(Sym::cuEventRecordWithFlags_ptsz, NullStream::per_thread, hEvent, hStream,
                      flags);
}

// Before its first record an event stands for no work, so it is complete.
CUresult cuEventQuery(CUevent hEvent) {
  return call(Sym::cuEventQuery, [=](State& s, Lock& lock) -> CUresult {
    Event* e = nullptr;
    if (const CUresult r = swcu::find_event(s, hEvent, e)) return r;
    if (const CUresult r = swcu::captured_event_check(s, *e)) return r;
    if (e->ipc && swcu::recorded_elsewhere(*e->ipc)) {  // by another process
      return swcu::remote_record_done(*e->ipc) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    }
    if (!e->recorded) return CUDA_SUCCESS;
    const std::shared_ptr<swcu::Completion> recorded = e->recorded;
    // As cuStreamQuery: a stream memory wait before the record may have been released by the
    // host since, which no call told the scheduler; run what became runnable (immediate mode).
    if (!recorded->done) swcu::kick(s, lock);
    if (!recorded->done) return CUDA_ERROR_NOT_READY;
    return swcu::take_record_error(*recorded);
  });
}

CUresult cuEventSynchronize(CUevent hEvent) {
  return call(Sym::cuEventSynchronize, [=](State& s, Lock& lock) -> CUresult {
    Event* e = nullptr;
    if (const CUresult r = swcu::find_event(s, hEvent, e)) return r;
    if (const CUresult r = swcu::captured_event_check(s, *e)) return r;
    if (e->ipc && swcu::recorded_elsewhere(*e->ipc)) {  // by another process
      return swcu::wait_remote_record(lock, e->ipc);
    }
    if (!e->recorded) return CUDA_SUCCESS;
    const std::shared_ptr<swcu::Completion> recorded = e->recorded;
    const CUcontext ctx = e->ctx->handle();
    swcu::wait_for(s, lock, recorded);
    swcu::release_pool_memory(s);
    // Host functions ran without the lock: look the context up again.
    if (const swcu::Context* c = s.context(ctx); c != nullptr && c->sticky_error != CUDA_SUCCESS) {
      return c->sticky_error;
    }
    return swcu::take_record_error(*recorded);
  });
}

CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return swcu::elapsed(Sym::cuEventElapsedTime, pMilliseconds, hStart, hEnd);
}

CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return swcu::elapsed(Sym::cuEventElapsedTime_v2, pMilliseconds, hStart, hEnd);
}

CUresult cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent) {
  return call_async(Sym::cuCtxRecordEvent, [=](State& s, Lock& lock) -> CUresult {
    return swcu::record_context(s, lock, hCtx, hEvent);
  });
}

CUresult cuCtxWaitEvent(CUcontext hCtx, CUevent hEvent) {
  return call_async(Sym::cuCtxWaitEvent, [=](State& s, Lock& lock) -> CUresult {
    return swcu::wait_context(s, lock, hCtx, hEvent);
  });
}

}  // extern "C"
