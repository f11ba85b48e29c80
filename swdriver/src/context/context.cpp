// Created contexts, the per-thread context stack, and queries on the current context.
#include "context/context.hpp"

#include <algorithm>

#include "context/reclaim.hpp"
#include "core/api.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

constexpr std::size_t kMaxPersistingL2 = 32505856;  // CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_...

// Execution affinity is only honoured under MPS, which the software driver does not have.
CUresult check_affinity(const CUexecAffinityParam* params, int count) {
  if (count < 0 || (count > 0 && params == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  for (int i = 0; i < count; ++i) {
    if (params[i].type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return CUDA_ERROR_INVALID_VALUE;
  }
  return count == 0 ? CUDA_SUCCESS : CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
}

struct CreateArgs {
  CUcontext* pctx;
  unsigned int flags;
  CUdevice dev;
  int api_version = kContextApiVersion;
  const CUexecAffinityParam* affinity = nullptr;
  int affinity_count = 0;
  const CUctxCigParam* cig = nullptr;
};

// Every cuCtxCreate ABI: validate, create, push onto the calling thread's stack.
CUresult create(Sym sym, const CreateArgs& a) {
  return call(sym, [&a](State& s) -> CUresult {
    if (a.pctx == nullptr || !valid_context_flags(a.flags)) return CUDA_ERROR_INVALID_VALUE;
    if (s.device(a.dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (a.affinity != nullptr && a.cig != nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = check_affinity(a.affinity, a.affinity_count)) return r;
    if (a.cig != nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // no graphics interop here

    std::vector<CUcontext>& stack = context_stack();
    stack.reserve(stack.size() + 1);  // the push below must not fail after the context exists
    Context* const ctx = s.registry(SWCU_CONTEXT)
                             .add(std::make_unique<Context>(SWCU_CONTEXT, a.dev, a.flags,
                                                            a.api_version, s.next_context_id++));
    stack.push_back(ctx->handle());
    *a.pctx = ctx->handle();
    return CUDA_SUCCESS;
  });
}

// A created context is destroyed regardless of the threads it is current to; on this thread
// it is popped when it is the current one. Its queued work runs first; then what it still owns
// is reclaimed. Primary contexts cannot be destroyed.
CUresult destroy(Sym sym, CUcontext ctx) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    Context* context = s.find<Context>(SWCU_CONTEXT, ctx);
    if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    drain_context(s, lock, *context);
    context = s.find<Context>(SWCU_CONTEXT, ctx);  // host functions ran without the lock
    if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    std::vector<CUcontext>& stack = context_stack();
    if (!stack.empty() && stack.back() == ctx) stack.pop_back();
    reclaim_context(s, *context);
    s.destroy(SWCU_CONTEXT, ctx);
    return CUDA_SUCCESS;
  });
}

CUresult push_context(Sym sym, CUcontext ctx) {
  return call(sym, [=](State& s) -> CUresult {
    if (s.context(ctx) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    context_stack().push_back(ctx);
    return CUDA_SUCCESS;
  });
}

CUresult pop(Sym sym, CUcontext* pctx) {
  return call(sym, [=](State&) -> CUresult {
    std::vector<CUcontext>& stack = context_stack();
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx != nullptr) *pctx = stack.back();
    stack.pop_back();
    return CUDA_SUCCESS;
  });
}

CUresult get_device(Sym sym, CUdevice* device, CUcontext handle) {
  return call(sym, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = context_or_current(s, handle, ctx)) return r;
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *device = ctx->device;
    return CUDA_SUCCESS;
  });
}

bool valid_limit(int limit) { return limit >= 0 && limit < CU_LIMIT_MAX; }

}  // namespace

CUresult current_context(State& s, Context*& out) noexcept {
  const std::vector<CUcontext>& stack = context_stack();
  if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  out = s.context(stack.back());
  if (out == nullptr) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  return out->sticky_error;
}

CUresult context_or_current(State& s, CUcontext handle, Context*& out) noexcept {
  if (handle == nullptr) return current_context(s, out);
  out = s.context(handle);
  if (out == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  return out->sticky_error;
}

void break_current_context(int code) noexcept {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  const std::vector<CUcontext>& stack = context_stack();
  if (stack.empty()) return;
  Context* const ctx = s.context(stack.back());
  if (ctx != nullptr && ctx->sticky_error == CUDA_SUCCESS) {
    ctx->sticky_error = static_cast<CUresult>(code);
  }
}

}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::Context;
using swcu::State;
using swcu::Sym;

CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return swcu::create(Sym::cuCtxCreate,
                      {.pctx = pctx, .flags = flags, .dev = dev, .api_version = 3010});
}

CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return swcu::create(Sym::cuCtxCreate_v2, {.pctx = pctx, .flags = flags, .dev = dev});
}

CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                        unsigned int flags, CUdevice dev) {
  return swcu::create(Sym::cuCtxCreate_v3, {.pctx = pctx,
                                            .flags = flags,
                                            .dev = dev,
                                            .affinity = paramsArray,
                                            .affinity_count = numParams});
}

CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags,
                        CUdevice dev) {
  swcu::CreateArgs args{.pctx = pctx, .flags = flags, .dev = dev};
  if (ctxCreateParams != nullptr) {
    args.affinity = ctxCreateParams->execAffinityParams;
    args.affinity_count = ctxCreateParams->numExecAffinityParams;
    args.cig = ctxCreateParams->cigParams;
  }
  return swcu::create(Sym::cuCtxCreate_v4, args);
}

CUresult cuCtxDestroy(CUcontext ctx) { return swcu::destroy(Sym::cuCtxDestroy, ctx); }

CUresult cuCtxDestroy_v2(CUcontext ctx) { return swcu::destroy(Sym::cuCtxDestroy_v2, ctx); }

CUresult cuCtxPushCurrent(CUcontext ctx) { return swcu::push_context(Sym::cuCtxPushCurrent, ctx); }

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  return swcu::push_context(Sym::cuCtxPushCurrent_v2, ctx);
}

CUresult cuCtxPopCurrent(CUcontext* pctx) { return swcu::pop(Sym::cuCtxPopCurrent, pctx); }

CUresult cuCtxPopCurrent_v2(CUcontext* pctx) { return swcu::pop(Sym::cuCtxPopCurrent_v2, pctx); }

// Replaces the top of the stack (pushes onto an empty one); NULL pops (a no-op when empty).
CUresult cuCtxSetCurrent(CUcontext ctx) {
  return call(Sym::cuCtxSetCurrent, [=](State& s) -> CUresult {
    std::vector<CUcontext>& stack = swcu::context_stack();
    if (ctx == nullptr) {
      if (!stack.empty()) stack.pop_back();
      return CUDA_SUCCESS;
    }
    if (s.context(ctx) == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    if (stack.empty()) {
      stack.push_back(ctx);
    } else {
      stack.back() = ctx;
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
  return call(Sym::cuCtxGetCurrent, [=](State&) -> CUresult {
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const std::vector<CUcontext>& stack = swcu::context_stack();
    *pctx = stack.empty() ? nullptr : stack.back();
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetDevice(CUdevice* device) {
  return swcu::get_device(Sym::cuCtxGetDevice, device, nullptr);
}

CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  return swcu::get_device(Sym::cuCtxGetDevice_v2, device, ctx);
}

CUresult cuCtxGetFlags(unsigned int* flags) {
  return call(Sym::cuCtxGetFlags, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = ctx->flags;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSetFlags(unsigned int flags) {
  return call(Sym::cuCtxSetFlags, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (!swcu::valid_context_flags(flags)) return CUDA_ERROR_INVALID_VALUE;
    ctx->flags = flags;
    if (ctx->is_primary()) s.device(ctx->device)->primary_flags = flags;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  return call(Sym::cuCtxGetApiVersion, [=](State& s) -> CUresult {
    Context* context = nullptr;
    if (const CUresult r = swcu::context_or_current(s, ctx, context)) return r;
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *version = static_cast<unsigned int>(context->api_version);
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  return call(Sym::cuCtxGetId, [=](State& s) -> CUresult {
    Context* context = nullptr;
    if (const CUresult r = swcu::context_or_current(s, ctx, context)) return r;
    if (ctxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *ctxId = context->id;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetLimit(size_t* pvalue, CUlimit limit_arg) {
  const int limit = swcu::raw(limit_arg);
  return call(Sym::cuCtxGetLimit, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (pvalue == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!swcu::valid_limit(limit)) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    *pvalue = ctx->limits[static_cast<std::size_t>(limit)];
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSetLimit(CUlimit limit_arg, size_t value) {
  const int limit = swcu::raw(limit_arg);
  return call(Sym::cuCtxSetLimit, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (!swcu::valid_limit(limit)) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    std::size_t stored = value;
    switch (limit) {
      case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:  // only below compute capability 9.0
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
      case CU_LIMIT_SHMEM_SIZE:  // query-only
      case CU_LIMIT_CIG_ENABLED: return CUDA_ERROR_INVALID_VALUE;
      case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: stored = std::min<std::size_t>(value, 128); break;
      case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
        stored = std::min(value, swcu::kMaxPersistingL2);
        break;
      case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED: stored = value != 0 ? 1 : 0; break;
      default: break;
    }
    ctx->limits[static_cast<std::size_t>(limit)] = stored;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return call(Sym::cuCtxGetStreamPriorityRange, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (leastPriority != nullptr) *leastPriority = 0;
    if (greatestPriority != nullptr) *greatestPriority = -5;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  return call(Sym::cuCtxGetCacheConfig, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    if (pconfig == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pconfig = ctx->cache_config;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSetCacheConfig(CUfunc_cache config_arg) {
  const int config = swcu::raw(config_arg);
  return call(Sym::cuCtxSetCacheConfig, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    switch (config) {
      case CU_FUNC_CACHE_PREFER_NONE:
      case CU_FUNC_CACHE_PREFER_SHARED:
      case CU_FUNC_CACHE_PREFER_L1:
      case CU_FUNC_CACHE_PREFER_EQUAL:
        ctx->cache_config = static_cast<CUfunc_cache>(config);
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

}  // extern "C"
