// Green contexts (cuda.h, Green Contexts): creation from a resource descriptor, the context a
// green context converts to, its streams, events and id.
//
// A green context owns a Context (`view`, the handle cuCtxFromGreenCtx returns) whose sm_count is
// its partition: launches, occupancy and %nsmid in it see only those SMs. It retains the
// device's primary context, whose modules and events its context may use.
#include "context/green_context.hpp"

#include <algorithm>

#include "context/context.hpp"
#include "context/reclaim.hpp"
#include "core/api.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

constexpr int kLeastPriority = 0;  // cuCtxGetStreamPriorityRange (exec/stream.cpp)
constexpr int kGreatestPriority = -5;

const ResourceDesc* find_desc(const State& s, CUdevResourceDesc handle) noexcept {
  for (const auto& d : s.resource_descs) {
    if (reinterpret_cast<CUdevResourceDesc>(d.get()) == handle) return d.get();
  }
  return nullptr;
}

// A live green context: CUDA_ERROR_INVALID_CONTEXT otherwise.
CUresult find_green(State& s, CUgreenCtx handle, GreenContext*& out) noexcept {
  out = s.find<GreenContext>(SWCU_GREEN_CONTEXT, handle);
  return out != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

// "The API will return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED if the specified green context
// hCtx has a stream in the capture mode."
bool capturing(const Context& ctx) noexcept {
  return std::any_of(ctx.queues.begin(), ctx.queues.end(),
                     [](const std::shared_ptr<Queue>& q) { return q->capture != nullptr; });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::GreenContext;
using swcu::State;
using swcu::Sym;

CUresult cuGreenCtxCreate(CUgreenCtx* phCtx, CUdevResourceDesc desc, CUdevice dev,
                          unsigned int flags) {
  return swcu::call(Sym::cuGreenCtxCreate, [=](State& s) -> CUresult {
    if (phCtx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (s.device(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    // CU_GREEN_CTX_DEFAULT_STREAM is required, and the only flag.
    if (flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
    const swcu::ResourceDesc* const d = swcu::find_desc(s, desc);
    if (d == nullptr || d->device != dev) return CUDA_ERROR_INVALID_VALUE;
    auto green = std::make_unique<GreenContext>();
    green->view = std::make_unique<swcu::Context>(SWCU_CONTEXT, dev, 0, swcu::kContextApiVersion,
                                                  s.next_context_id++);
    green->view->sm_count = d->sm_count;
    green->sm_alignment = d->sm_count % swcu::kSmPartitionMin == 0 ? swcu::kSmPartitionMin : 2;
    green->id = s.next_green_id++;
    s.green_contexts.reserve(s.green_contexts.size() + 1);  // nothing below may fail half-way
    swcu::Context& primary = swcu::retain_primary(s, dev);
    green->view->flags = primary.flags;
    green->view->green_primary = &primary;
    GreenContext* const g = s.registry(SWCU_GREEN_CONTEXT).add(std::move(green));
    g->view->green = g;
    s.green_contexts.emplace(g->view->handle(), g->view.get());
    *phCtx = reinterpret_cast<CUgreenCtx>(g);
    return CUDA_SUCCESS;
  });
}

// Its queued work runs first; its streams, events, modules and memory are reclaimed (the real
// driver leaves its streams behind, answering CUDA_ERROR_CONTEXT_IS_DESTROYED); then the primary
// context is released.
CUresult cuGreenCtxDestroy(CUgreenCtx hCtx) {
  return swcu::call(Sym::cuGreenCtxDestroy, [=](State& s, swcu::Lock& lock) -> CUresult {
    GreenContext* g = nullptr;
    if (const CUresult r = swcu::find_green(s, hCtx, g)) return r;
    swcu::drain_context(s, lock, *g->view);
    if (const CUresult r = swcu::find_green(s, hCtx, g)) return r;  // (the lock was released)
    const CUcontext view = g->view->handle();
    const int device = g->view->device;
    std::vector<CUcontext>& stack = swcu::context_stack();
    if (!stack.empty() && stack.back() == view) stack.pop_back();
    swcu::reclaim_context(s, *g->view);
    s.green_contexts.erase(view);
    s.destroy(SWCU_GREEN_CONTEXT, hCtx);
    return swcu::release_primary(s, lock, device);
  });
}

CUresult cuCtxFromGreenCtx(CUcontext* pContext, CUgreenCtx hCtx) {
  return swcu::call(Sym::cuCtxFromGreenCtx, [=](State& s) -> CUresult {
    if (pContext == nullptr) return CUDA_ERROR_INVALID_VALUE;
    GreenContext* g = nullptr;
    if (const CUresult r = swcu::find_green(s, hCtx, g)) return r;
    *pContext = g->view->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuGreenCtxStreamCreate(CUstream* phStream, CUgreenCtx greenCtx, unsigned int flags,
                                int priority) {
  return swcu::call(Sym::cuGreenCtxStreamCreate, [=](State& s) -> CUresult {
    GreenContext* g = nullptr;
    if (const CUresult r = swcu::find_green(s, greenCtx, g)) return r;
    // "CU_STREAM_NON_BLOCKING must be specified."
    if (phStream == nullptr || flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    const int clamped = std::clamp(priority, swcu::kGreatestPriority, swcu::kLeastPriority);
    auto stream = std::make_unique<swcu::Stream>(nullptr);
    g->view->queues.reserve(g->view->queues.size() + 1);
    stream->queue = swcu::create_queue(s, *g->view, flags, clamped);
    *phStream = reinterpret_cast<CUstream>(s.registry(SWCU_STREAM).add(std::move(stream)));
    return CUDA_SUCCESS;
  });
}

// NULL: the current context's green context (cuda.h).
CUresult cuGreenCtxGetId(CUgreenCtx greenCtx, unsigned long long* greenCtxId) {
  return swcu::call(Sym::cuGreenCtxGetId, [=](State& s) -> CUresult {
    if (greenCtxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    GreenContext* g = nullptr;
    if (greenCtx == nullptr) {
      swcu::Context* current = nullptr;
      if (const CUresult r = swcu::current_context(s, current)) return r;
      g = current->green;
      if (g == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    } else if (const CUresult r = swcu::find_green(s, greenCtx, g)) {
      return r;
    }
    *greenCtxId = g->id;
    return CUDA_SUCCESS;
  });
}

CUresult cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx* phCtx) {
  return swcu::call(Sym::cuStreamGetGreenCtx, [=](State& s) -> CUresult {
    std::shared_ptr<swcu::Queue> q;
    if (const CUresult r = swcu::resolve_stream(s, hStream, swcu::NullStream::legacy, q)) return r;
    if (phCtx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *phCtx = reinterpret_cast<CUgreenCtx>(q->ctx->green);
    return CUDA_SUCCESS;
  });
}

// The record completes when everything enqueued in the green context's streams (and its default
// stream) so far has: it waits for each stream's last operation.
CUresult cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent) {
  return swcu::call_async(Sym::cuGreenCtxRecordEvent, [=](State& s, swcu::Lock& lock) -> CUresult {
    GreenContext* g = nullptr;
    if (const CUresult r = swcu::find_green(s, hCtx, g)) return r;
    swcu::Event* const e = s.find<swcu::Event>(SWCU_EVENT, hEvent);
    // "hEvent and hCtx must be from the same primary context"
    if (e == nullptr || &e->ctx->space() != &g->view->space()) return CUDA_ERROR_INVALID_HANDLE;
    if (swcu::capturing(*g->view)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    swcu::Queue& target = swcu::legacy_queue(s, *g->view);
    swcu::Op op;
    op.kind = swcu::OpKind::record;
    for (const auto& q : g->view->queues) {
      if (q->tail && !q->tail->done) op.deps.push_back(q->tail);
    }
    e->recorded = swcu::push(s, target, std::move(op));
    swcu::kick(s, lock);
    return CUDA_SUCCESS;
  });
}

// Work enqueued afterwards in the green context, in any of its streams (also those created
// later) and its default stream, waits for the event's record.
CUresult cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent) {
  return swcu::call_async(Sym::cuGreenCtxWaitEvent, [=](State& s, swcu::Lock&) -> CUresult {
    GreenContext* g = nullptr;
    if (const CUresult r = swcu::find_green(s, hCtx, g)) return r;
    const swcu::Event* const e = s.find<swcu::Event>(SWCU_EVENT, hEvent);
    if (e == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // it may be of any context or device
    if (swcu::capturing(*g->view)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (e->recorded && !e->recorded->done) g->view->waits.push_back(e->recorded);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
