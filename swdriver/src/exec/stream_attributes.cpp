// Stream attributes: cuStreamSetAttribute, cuStreamGetAttribute and cuStreamCopyAttributes
// (and their _ptsz twins). The attributes cuda.h marks "Valid for streams" are stored per stream
// (Queue::attributes, sched/sched.hpp) after the checks cuda.h documents; the priority is the
// stream's priority, which cuStreamGetPriority reports too.
#include <algorithm>

#include "core/api.hpp"
#include "core/state.hpp"
#include "exec/launch.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

// cuCtxGetStreamPriorityRange (exec/stream.cpp): 0 (least) to -5 (greatest).
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;
// CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE and CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT
// (context/device.cpp).
constexpr std::size_t kMaxAccessPolicyWindow = 134213632;
constexpr unsigned kMemSyncDomains = 4;

}  // namespace

// The checks of an access policy window (CUaccessPolicyWindow in cuda.h): at most
// MAX_ACCESS_POLICY_WINDOW_SIZE bytes, a hit ratio in [0, 1], a known hit property and a miss
// property that is "either NORMAL or STREAMING".
bool valid_access_policy_window(const CUaccessPolicyWindow& w) noexcept {
  const int hit = raw(w.hitProp);
  const int miss = raw(w.missProp);
  return w.num_bytes <= kMaxAccessPolicyWindow && w.hitRatio >= 0.0f && w.hitRatio <= 1.0f &&
         hit >= CU_ACCESS_PROPERTY_NORMAL && hit <= CU_ACCESS_PROPERTY_PERSISTING &&
         (miss == CU_ACCESS_PROPERTY_NORMAL || miss == CU_ACCESS_PROPERTY_STREAMING);
}

namespace {

CUresult set(Queue& q, int attr, const CUstreamAttrValue& v) {
  StreamAttributes& a = q.attributes;
  switch (attr) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      if (!valid_access_policy_window(v.accessPolicyWindow)) return CUDA_ERROR_INVALID_VALUE;
      a.access_policy_window = v.accessPolicyWindow;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: {
      const int policy = raw(v.syncPolicy);
      if (policy < CU_SYNC_POLICY_AUTO || policy > CU_SYNC_POLICY_BLOCKING_SYNC) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      a.sync_policy = policy;
      return CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      // Clamped to the context's range, as cuStreamCreateWithPriority does.
      q.priority = std::clamp(v.priority, kGreatestPriority, kLeastPriority);
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      if (v.memSyncDomainMap.default_ >= kMemSyncDomains ||
          v.memSyncDomainMap.remote >= kMemSyncDomains) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      a.mem_sync_domain_map = v.memSyncDomainMap;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: {
      const int domain = raw(v.memSyncDomain);
      if (domain != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT &&
          domain != CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      a.mem_sync_domain = domain;
      return CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
      if (v.nvlinkUtilCentricScheduling > 1) return CUDA_ERROR_INVALID_VALUE;
      a.nvlink_util_centric_scheduling = v.nvlinkUtilCentricScheduling;
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;  // not valid for streams
  }
}

CUresult get(const Queue& q, int attr, CUstreamAttrValue& out) {
  const StreamAttributes& a = q.attributes;
  out = CUstreamAttrValue{};
  switch (attr) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      out.accessPolicyWindow = a.access_policy_window;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      out.syncPolicy = static_cast<CUsynchronizationPolicy>(a.sync_policy);
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: out.priority = q.priority; return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      out.memSyncDomainMap = a.mem_sync_domain_map;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      out.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(a.mem_sync_domain);
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
      out.nvlinkUtilCentricScheduling = a.nvlink_util_centric_scheduling;
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult set_attribute(Sym sym, NullStream null, CUstream handle, CUstreamAttrID attr,
                       const CUstreamAttrValue* value) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return set(*q, raw(attr), *value);
  });
}

CUresult get_attribute(Sym sym, NullStream null, CUstream handle, CUstreamAttrID attr,
                       CUstreamAttrValue* value) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, handle, null, q)) return r;
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return get(*q, raw(attr), *value);
  });
}

// "Both streams must have the same context" (CUDA_ERROR_INVALID_VALUE otherwise). Copies every
// stream attribute, the priority included.
CUresult copy_attributes(Sym sym, NullStream null, CUstream dst, CUstream src) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> to;
    std::shared_ptr<Queue> from;
    if (const CUresult r = resolve_stream(s, dst, null, to)) return r;
    if (const CUresult r = resolve_stream(s, src, null, from)) return r;
    if (to->ctx != from->ctx) return CUDA_ERROR_INVALID_VALUE;
    to->attributes = from->attributes;
    to->priority = from->priority;
    return CUDA_SUCCESS;
  });
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::kLegacy;
using swcu::kPerThread;
using swcu::Sym;

CUresult cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr,
                              const CUstreamAttrValue* value) {
  return swcu::set_attribute(Sym::cuStreamSetAttribute, kLegacy, hStream, attr, value);
}

CUresult cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                   const CUstreamAttrValue* value) {
  return swcu::set_attribute(Sym::cuStreamSetAttribute_ptsz, kPerThread, hStream, attr, value);
}

CUresult cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value) {
  return swcu::get_attribute(Sym::cuStreamGetAttribute, kLegacy, hStream, attr, value);
}

CUresult cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                   CUstreamAttrValue* value) {
  return swcu::get_attribute(Sym::cuStreamGetAttribute_ptsz, kPerThread, hStream, attr, value);
}

CUresult cuStreamCopyAttributes(CUstream dst, CUstream src) {
  return swcu::copy_attributes(Sym::cuStreamCopyAttributes, kLegacy, dst, src);
}

CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src) {
  return swcu::copy_attributes(Sym::cuStreamCopyAttributes_ptsz, kPerThread, dst, src);
}

}  // extern "C"
