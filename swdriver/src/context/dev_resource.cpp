// Device resources (cuda.h, Green Contexts): SM resources of a device, a context or a green
// context (cuDeviceGetDevResource, cuCtxGetDevResource, cuGreenCtxGetDevResource), splitting
// them (cuDevSmResourceSplitByCount) and descriptors (cuDevResourceGenerateDesc).
//
// A resource is a plain struct the program holds; the driver marks the ones it wrote in the
// struct's internal padding (ResourceTag) and refuses the rest.
#include <algorithm>
#include <cstring>
#include <set>

#include "context/green_context.hpp"
#include "core/api.hpp"

namespace swcu {

void write_sm_resource(CUdevResource& out, int device, unsigned sm_count, unsigned min_partition,
                       unsigned alignment, std::uint64_t split, std::uint32_t index) noexcept {
  std::memset(&out, 0, sizeof out);
  out.type = CU_DEV_RESOURCE_TYPE_SM;
  out.sm.smCount = sm_count;
  out.sm.minSmPartitionSize = min_partition;
  out.sm.smCoscheduledAlignment = alignment;
  const ResourceTag tag{kResourceMagic, device, split, index, sm_count};
  static_assert(sizeof tag <= sizeof out._internal_padding);
  std::memcpy(out._internal_padding, &tag, sizeof tag);
}

namespace {

// The tag of a resource this driver wrote: CUDA_ERROR_INVALID_RESOURCE_TYPE for another type,
// CUDA_ERROR_INVALID_VALUE for a struct it did not write or one changed since ("This structure
// should not be directly modified outside of the API that created it", cuda.h).
CUresult read_tag(const CUdevResource& r, ResourceTag& tag) noexcept {
  if (raw(r.type) != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  std::memcpy(&tag, r._internal_padding, sizeof tag);
  if (tag.magic != kResourceMagic || tag.sm_count != r.sm.smCount) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// The SM resource of a context: the device's SMs, or a green context's partition.
CUresult context_resource(const Context& ctx, CUdevResource* out, CUdevResourceType type) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (raw(type) != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  const unsigned alignment = ctx.green != nullptr ? ctx.green->sm_alignment : kDeviceSmAlignment;
  write_sm_resource(*out, ctx.device, ctx.sm_count, kSmPartitionMin, alignment, 0, 0);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::State;
using swcu::Sym;

CUresult cuDeviceGetDevResource(CUdevice device, CUdevResource* resource, CUdevResourceType type) {
  return swcu::call(Sym::cuDeviceGetDevResource, [=](State& s) -> CUresult {
    if (s.device(device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    if (resource == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (swcu::raw(type) != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    swcu::write_sm_resource(*resource, device, swcu::kDeviceSmCount, swcu::kSmPartitionMin,
                            swcu::kDeviceSmAlignment, 0, 0);
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetDevResource(CUcontext hCtx, CUdevResource* resource, CUdevResourceType type) {
  return swcu::call(Sym::cuCtxGetDevResource, [=](State& s) -> CUresult {
    const swcu::Context* const ctx = s.context(hCtx);
    if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    return swcu::context_resource(*ctx, resource, type);
  });
}

CUresult cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource* resource,
                                  CUdevResourceType type) {
  return swcu::call(Sym::cuGreenCtxGetDevResource, [=](State& s) -> CUresult {
    const auto* const green = s.find<swcu::GreenContext>(SWCU_GREEN_CONTEXT, hCtx);
    if (green == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    return swcu::context_resource(*green->view, resource, type);
  });
}

// Groups of max(minCount, the minimum partition) SMs rounded up to the granularity, as many as
// fit (or as asked for); what is left is the remainder. A split's outputs cannot be split again
// (cuda.h: "the output results cannot be split again without first creating a descriptor and a
// green context with that descriptor").
CUresult cuDevSmResourceSplitByCount(CUdevResource* result, unsigned int* nbGroups,
                                     const CUdevResource* input, CUdevResource* remaining,
                                     unsigned int useFlags, unsigned int minCount) {
  return swcu::call(Sym::cuDevSmResourceSplitByCount, [=](State& s) -> CUresult {
    if (nbGroups == nullptr || input == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::ResourceTag tag{};
    if (const CUresult r = swcu::read_tag(*input, tag)) return r;
    if (s.device(tag.device) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
    constexpr unsigned kKnownFlags = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
                                     CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;
    if ((useFlags & ~kKnownFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
    if (result != nullptr && *nbGroups == 0) return CUDA_ERROR_INVALID_VALUE;
    const unsigned available = input->sm.smCount;
    if (minCount > available) return CUDA_ERROR_INVALID_VALUE;  // "between 0 and the SM count"
    if (tag.split != 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    const unsigned granularity = (useFlags & CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING) != 0
                                     ? swcu::kSmPartitionMinIgnoringCoscheduling
                                     : swcu::kSmPartitionMin;
    const unsigned count =
        (std::max(minCount, granularity) + granularity - 1) / granularity * granularity;
    const unsigned possible = available / count;
    if (possible == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    if (result == nullptr) {  // a query of how many groups a split makes
      *nbGroups = possible;
      return CUDA_SUCCESS;
    }
    const unsigned groups = std::min(*nbGroups, possible);
    const unsigned long long split = s.next_split_id++;
    for (unsigned i = 0; i < groups; ++i) {
      swcu::write_sm_resource(result[i], tag.device, count, granularity, granularity, split, i);
    }
    if (remaining != nullptr) {
      const unsigned left = available - groups * count;
      swcu::write_sm_resource(*remaining, tag.device, left, granularity, left % 2 == 0 ? 2 : 1,
                              split, groups);
    }
    *nbGroups = groups;
    return CUDA_SUCCESS;
  });
}

// One descriptor of resources of one device: one resource, or outputs of one split (each once).
CUresult cuDevResourceGenerateDesc(CUdevResourceDesc* phDesc, CUdevResource* resources,
                                   unsigned int nbResources) {
  return swcu::call(Sym::cuDevResourceGenerateDesc, [=](State& s) -> CUresult {
    if (phDesc == nullptr || resources == nullptr || nbResources == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::ResourceTag first{};
    unsigned total = 0;
    std::set<std::uint32_t> seen;
    for (unsigned i = 0; i < nbResources; ++i) {
      swcu::ResourceTag tag{};
      if (const CUresult r = swcu::read_tag(resources[i], tag)) return r;
      if (i == 0) first = tag;
      if (tag.device != first.device) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
      if (nbResources > 1 && (tag.split == 0 || tag.split != first.split)) {
        return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;  // "from the same split API instance"
      }
      if (!seen.insert(tag.index).second) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
      total += tag.sm_count;
    }
    if (total == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;  // an empty remainder
    auto desc = std::make_unique<swcu::ResourceDesc>();
    desc->device = first.device;
    desc->sm_count = total;
    s.resource_descs.push_back(std::move(desc));
    *phDesc = reinterpret_cast<CUdevResourceDesc>(s.resource_descs.back().get());
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
