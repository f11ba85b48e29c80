// Launch attributes of kernel nodes (node.hpp's KernelNode): cuGraphKernelNodeSetAttribute,
// cuGraphKernelNodeGetAttribute and cuGraphKernelNodeCopyAttributes. cuda.h's CUlaunchAttributeID
// says which attributes are "valid for graph nodes"; the others are CUDA_ERROR_INVALID_VALUE.
// Cooperative and cluster dimensions shape the node's launch; the priority applies when the
// executable graph uses node priorities (CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY); the
// rest are kept and reported.
#include <algorithm>

#include "graph/graph_internal.hpp"

namespace swcu {
namespace {

bool valid_for_nodes(int id) noexcept {
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING: return true;
    default: return false;
  }
}

CUresult set_attribute(KernelNode& k, int id, const CUlaunchAttributeValue& v) {
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: k.cooperative = v.cooperative != 0; return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
      const unsigned x = v.clusterDim.x, y = v.clusterDim.y, z = v.clusterDim.z;
      if (x == 0 || y == 0 || z == 0 || x * y * z > 16) return CUDA_ERROR_INVALID_VALUE;
      k.cluster = {x, y, z};
      return CUDA_SUCCESS;
    }
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: k.priority = v.priority; return CUDA_SUCCESS;
    default: {
      const auto it = std::find_if(k.attributes.begin(), k.attributes.end(),
                                   [id](const CUlaunchAttribute& a) { return raw(a.id) == id; });
      CUlaunchAttribute a{};
      a.id = static_cast<CUlaunchAttributeID>(id);
      a.value = v;
      if (it == k.attributes.end()) {
        k.attributes.push_back(a);
      } else {
        *it = a;
      }
      return CUDA_SUCCESS;
    }
  }
}

CUlaunchAttributeValue get_attribute(const KernelNode& k, int id) {
  CUlaunchAttributeValue v{};
  switch (id) {
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: v.cooperative = k.cooperative ? 1 : 0; break;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
      v.clusterDim.x = k.cluster[0];
      v.clusterDim.y = k.cluster[1];
      v.clusterDim.z = k.cluster[2];
      break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY: v.priority = k.priority; break;
    default:
      for (const CUlaunchAttribute& a : k.attributes) {
        if (raw(a.id) == id) v = a.value;
      }
  }
  return v;
}

KernelNode* kernel_node(State& s, CUgraphNode node) {
  Node* const n = find_node(s, node);
  return n != nullptr && n->type == CU_GRAPH_NODE_TYPE_KERNEL ? &n->as<KernelNode>() : nullptr;
}

}  // namespace
}  // namespace swcu

extern "C" {

CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                       const CUkernelNodeAttrValue* value) {
  const int id = swcu::raw(attr);
  return swcu::call(swcu::Sym::cuGraphKernelNodeSetAttribute, [=](swcu::State& s) -> CUresult {
    swcu::KernelNode* const k = swcu::kernel_node(s, hNode);
    if (k == nullptr || value == nullptr || !swcu::valid_for_nodes(id)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return swcu::set_attribute(*k, id, *value);
  });
}

CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                       CUkernelNodeAttrValue* value_out) {
  const int id = swcu::raw(attr);
  return swcu::call(swcu::Sym::cuGraphKernelNodeGetAttribute, [=](swcu::State& s) -> CUresult {
    const swcu::KernelNode* const k = swcu::kernel_node(s, hNode);
    if (k == nullptr || value_out == nullptr || !swcu::valid_for_nodes(id)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *value_out = swcu::get_attribute(*k, id);
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src) {
  return swcu::call(swcu::Sym::cuGraphKernelNodeCopyAttributes, [=](swcu::State& s) -> CUresult {
    swcu::KernelNode* const to = swcu::kernel_node(s, dst);
    const swcu::KernelNode* const from = swcu::kernel_node(s, src);
    if (to == nullptr || from == nullptr) return CUDA_ERROR_INVALID_VALUE;
    to->cooperative = from->cooperative;
    to->cluster = from->cluster;
    to->priority = from->priority;
    to->attributes = from->attributes;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
