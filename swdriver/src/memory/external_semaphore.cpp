// cuImportExternalSemaphore, cuSignalExternalSemaphoresAsync, cuWaitExternalSemaphoresAsync
// (and their _ptsz twins) and cuDestroyExternalSemaphore (external.hpp); the reclaim of a
// context's external objects.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/api.hpp"
#include "core/logs.hpp"
#include "memory/external.hpp"
#include "memory/memory.hpp"
#include "sched/capture_hooks.hpp"

namespace swcu {
namespace {

const char* unsupported_semaphore_type(int type) noexcept {
  switch (type) {
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32:
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_KMT:
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE:
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_FENCE:
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX:
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX_KMT:
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32:
      return "Windows (NT, KMT and Direct3D) handles do not exist on Linux";
    case CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC:
      return "NvSciSync objects are not modelled (Tegra and DRIVE platforms)";
    default: return nullptr;
  }
}

constexpr unsigned kSignalFlags = CUDA_EXTERNAL_SEMAPHORE_SIGNAL_SKIP_NVSCIBUF_MEMSYNC;
constexpr unsigned kWaitFlags = CUDA_EXTERNAL_SEMAPHORE_WAIT_SKIP_NVSCIBUF_MEMSYNC;

CUresult submit(Sym sym, NullStream null, const CUexternalSemaphore* sems, const void* params,
                unsigned count, CUstream stream, bool signal) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    std::vector<SemaphoreStep> steps;
    if (const CUresult r = semaphore_steps(s, sems, params, signal, count, steps)) return r;
    if (const auto r = capture_semaphores(s, *q, sems, params, count, steps, signal)) return *r;
    for (const SemaphoreStep& step : steps) push(s, *q, semaphore_op(step, signal));
    kick(s, lock);
    return CUDA_SUCCESS;
  });
}

}  // namespace

SemaphorePayload::~SemaphorePayload() {
  if (mapping != nullptr) munmap(mapping, mapping_size);
}

void ExternalSemaphore::release() noexcept {
  payload.reset();
  if (fd >= 0) close(fd);
  fd = -1;
}

CUresult semaphore_steps(State& s, const CUexternalSemaphore* sems, const void* params, bool signal,
                         unsigned count, std::vector<SemaphoreStep>& out) {
  if (count > 0 && (sems == nullptr || params == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  out.reserve(count);
  for (unsigned i = 0; i < count; ++i) {
    const auto* const sem = s.find<ExternalSemaphore>(SWCU_EXTERNAL_SEMAPHORE, sems[i]);
    if (sem == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    SemaphoreStep step;
    step.payload = sem->payload;
    step.timeline = sem->timeline();
    if (signal) {
      const auto& p = static_cast<const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS*>(params)[i];
      if ((p.flags & ~kSignalFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
      step.value = p.params.fence.value;
    } else {
      const auto& p = static_cast<const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS*>(params)[i];
      if ((p.flags & ~kWaitFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
      step.value = p.params.fence.value;
    }
    out.push_back(std::move(step));
  }
  return CUDA_SUCCESS;
}

Op semaphore_op(const SemaphoreStep& step, bool signal) {
  Op op;
  op.kind = OpKind::work;
  if (signal) {
    // A timeline semaphore takes the fence value; a binary one becomes signaled.
    op.work = [step](State&) -> CUresult {
      step.payload->word().store(step.timeline ? step.value : 1, std::memory_order_release);
      return CUDA_SUCCESS;
    };
    return op;
  }
  // A timeline wait runs once the value reaches the fence value; a binary wait once the
  // semaphore is signaled, and consumes the signal (Vulkan's binary semaphore semantics).
  op.ready = [step](State&) {
    const std::uint64_t v = step.payload->word().load(std::memory_order_acquire);
    return step.timeline ? v >= step.value : v != 0;
  };
  op.work = [step](State&) -> CUresult {
    if (!step.timeline) step.payload->word().store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return CUDA_SUCCESS;
  };
  return op;
}

void reclaim_external(State& s, Context& ctx) noexcept {
  for (const void* h : s.registry(SWCU_EXTERNAL_MEMORY).handles_if([&ctx](const Object& o) {
         return static_cast<const ExternalMemory&>(o).ctx == &ctx;
       })) {
    s.reclaim(SWCU_EXTERNAL_MEMORY, h);
  }
  for (const void* h : s.registry(SWCU_EXTERNAL_SEMAPHORE).handles_if([&ctx](const Object& o) {
         return static_cast<const ExternalSemaphore&>(o).ctx == &ctx;
       })) {
    s.reclaim(SWCU_EXTERNAL_SEMAPHORE, h);
  }
}

}  // namespace swcu

using swcu::call;
using swcu::NullStream;
using swcu::State;
using swcu::Sym;

extern "C" {

CUresult cuImportExternalSemaphore(CUexternalSemaphore* extSem_out,
                                   const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC* semHandleDesc) {
  return call(Sym::cuImportExternalSemaphore, [=](State& s) -> CUresult {
    if (extSem_out == nullptr || semHandleDesc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC& d = *semHandleDesc;
    const int type = swcu::raw(d.type);
    if (const char* why = swcu::unsupported_semaphore_type(type)) {
      swcu::report(CU_LOG_LEVEL_ERROR,
                   "cuImportExternalSemaphore: handle type " + std::to_string(type) + ": " + why);
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if ((type != CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD &&
         type != CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD) ||
        d.flags != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::current_context(s, ctx)) return r;
    const int fd = d.handle.fd;
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) return CUDA_ERROR_INVALID_HANDLE;
    if (st.st_size < static_cast<off_t>(sizeof(std::uint64_t))) {
      swcu::report(CU_LOG_LEVEL_ERROR,
                   "cuImportExternalSemaphore: the software driver's semaphore is the first 8 "
                   "bytes of the descriptor's file, which has " +
                       std::to_string(st.st_size));
      return CUDA_ERROR_INVALID_VALUE;
    }
    const std::size_t page = swcu::page_size();
    void* const p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      swcu::report(CU_LOG_LEVEL_ERROR,
                   std::string{"cuImportExternalSemaphore: mmap: "} + std::strerror(errno));
      return CUDA_ERROR_OPERATING_SYSTEM;
    }
    auto sem = std::make_unique<swcu::ExternalSemaphore>();
    try {
      sem->payload = std::make_shared<swcu::SemaphorePayload>(p, page);
    } catch (...) {
      munmap(p, page);
      throw;
    }
    sem->type = type;
    sem->ctx = ctx;
    swcu::ExternalSemaphore* const raw = s.registry(SWCU_EXTERNAL_SEMAPHORE).add(std::move(sem));
    raw->fd = fd;  // the driver's from here on (cuda.h: ownership is transferred)
    *extSem_out = reinterpret_cast<CUexternalSemaphore>(raw);
    return CUDA_SUCCESS;
  });
}

CUresult cuSignalExternalSemaphoresAsync(const CUexternalSemaphore* extSemArray,
                                         const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* paramsArray,
                                         unsigned int numExtSems, CUstream stream) {
  return swcu::submit(Sym::cuSignalExternalSemaphoresAsync, NullStream::legacy, extSemArray,
                      paramsArray, numExtSems, stream, true);
}

CUresult cuSignalExternalSemaphoresAsync_ptsz(
    const CUexternalSemaphore* extSemArray,
    const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS* paramsArray, unsigned int numExtSems,
    CUstream stream) {
  return swcu::submit(Sym::cuSignalExternalSemaphoresAsync_ptsz, NullStream::per_thread,
                      extSemArray, paramsArray, numExtSems, stream, true);
}

CUresult cuWaitExternalSemaphoresAsync(const CUexternalSemaphore* extSemArray,
                                       const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* paramsArray,
                                       unsigned int numExtSems, CUstream stream) {
  return swcu::submit(Sym::cuWaitExternalSemaphoresAsync, NullStream::legacy, extSemArray,
                      paramsArray, numExtSems, stream, false);
}

CUresult cuWaitExternalSemaphoresAsync_ptsz(const CUexternalSemaphore* extSemArray,
                                            const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS* paramsArray,
                                            unsigned int numExtSems, CUstream stream) {
  return swcu::submit(Sym::cuWaitExternalSemaphoresAsync_ptsz, NullStream::per_thread, extSemArray,
                      paramsArray, numExtSems, stream, false);
}

CUresult cuDestroyExternalSemaphore(CUexternalSemaphore extSem) {
  return call(Sym::cuDestroyExternalSemaphore, [=](State& s) -> CUresult {
    if (s.find<swcu::ExternalSemaphore>(SWCU_EXTERNAL_SEMAPHORE, extSem) == nullptr) {
      return CUDA_ERROR_INVALID_HANDLE;
    }
    s.destroy(SWCU_EXTERNAL_SEMAPHORE, extSem);  // enqueued operations keep the payload
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
