// Helpers for the graph tests: the graph, capture and user-object functions (resolved like
// swcu::test::api()), and small builders.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "module_support.hpp"

namespace swcu::test {

// X(member, base name, version)
#define SWCU_TEST_GRAPH_FUNCTIONS(X)                                               \
  X(cuGraphCreate, cuGraphCreate, 10000)                                           \
  X(cuGraphDestroy, cuGraphDestroy, 10000)                                         \
  X(cuGraphClone, cuGraphClone, 10000)                                             \
  X(cuGraphNodeFindInClone, cuGraphNodeFindInClone, 10000)                         \
  X(cuGraphGetNodes, cuGraphGetNodes, 10000)                                       \
  X(cuGraphGetRootNodes, cuGraphGetRootNodes, 10000)                               \
  X(cuGraphGetEdges_v1, cuGraphGetEdges, 10000)                                    \
  X(cuGraphGetEdges, cuGraphGetEdges, 12030)                                       \
  X(cuGraphNodeGetType, cuGraphNodeGetType, 10000)                                 \
  X(cuGraphNodeGetDependencies_v1, cuGraphNodeGetDependencies, 10000)              \
  X(cuGraphNodeGetDependencies, cuGraphNodeGetDependencies, 12030)                 \
  X(cuGraphNodeGetDependentNodes_v1, cuGraphNodeGetDependentNodes, 10000)          \
  X(cuGraphNodeGetDependentNodes, cuGraphNodeGetDependentNodes, 12030)             \
  X(cuGraphAddDependencies_v1, cuGraphAddDependencies, 10000)                      \
  X(cuGraphAddDependencies, cuGraphAddDependencies, 12030)                         \
  X(cuGraphRemoveDependencies_v1, cuGraphRemoveDependencies, 10000)                \
  X(cuGraphRemoveDependencies, cuGraphRemoveDependencies, 12030)                   \
  X(cuGraphDestroyNode, cuGraphDestroyNode, 10000)                                 \
  X(cuGraphAddEmptyNode, cuGraphAddEmptyNode, 10000)                               \
  X(cuGraphAddKernelNode_v1, cuGraphAddKernelNode, 10000)                          \
  X(cuGraphAddKernelNode, cuGraphAddKernelNode, 12000)                             \
  X(cuGraphAddMemcpyNode, cuGraphAddMemcpyNode, 10000)                             \
  X(cuGraphAddMemsetNode, cuGraphAddMemsetNode, 10000)                             \
  X(cuGraphAddHostNode, cuGraphAddHostNode, 10000)                                 \
  X(cuGraphAddChildGraphNode, cuGraphAddChildGraphNode, 10000)                     \
  X(cuGraphAddEventRecordNode, cuGraphAddEventRecordNode, 11010)                   \
  X(cuGraphAddEventWaitNode, cuGraphAddEventWaitNode, 11010)                       \
  X(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode, 11040)                         \
  X(cuGraphAddMemFreeNode, cuGraphAddMemFreeNode, 11040)                           \
  X(cuGraphAddNode, cuGraphAddNode, 12030)                                         \
  X(cuGraphKernelNodeGetParams, cuGraphKernelNodeGetParams, 12000)                 \
  X(cuGraphKernelNodeSetParams, cuGraphKernelNodeSetParams, 12000)                 \
  X(cuGraphMemcpyNodeGetParams, cuGraphMemcpyNodeGetParams, 10000)                 \
  X(cuGraphMemcpyNodeSetParams, cuGraphMemcpyNodeSetParams, 10000)                 \
  X(cuGraphMemsetNodeGetParams, cuGraphMemsetNodeGetParams, 10000)                 \
  X(cuGraphMemsetNodeSetParams, cuGraphMemsetNodeSetParams, 10000)                 \
  X(cuGraphHostNodeGetParams, cuGraphHostNodeGetParams, 10000)                     \
  X(cuGraphHostNodeSetParams, cuGraphHostNodeSetParams, 10000)                     \
  X(cuGraphChildGraphNodeGetGraph, cuGraphChildGraphNodeGetGraph, 10000)           \
  X(cuGraphEventRecordNodeGetEvent, cuGraphEventRecordNodeGetEvent, 11010)         \
  X(cuGraphMemAllocNodeGetParams, cuGraphMemAllocNodeGetParams, 11040)             \
  X(cuGraphMemFreeNodeGetParams, cuGraphMemFreeNodeGetParams, 11040)               \
  X(cuGraphConditionalHandleCreate, cuGraphConditionalHandleCreate, 12030)         \
  X(cuGraphInstantiate, cuGraphInstantiateWithFlags, 11040)                        \
  X(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams, 12000)             \
  X(cuGraphExecGetFlags, cuGraphExecGetFlags, 12000)                               \
  X(cuGraphExecDestroy, cuGraphExecDestroy, 10000)                                 \
  X(cuGraphLaunch, cuGraphLaunch, 10000)                                           \
  X(cuGraphUpload, cuGraphUpload, 11010)                                           \
  X(cuGraphExecUpdate_v1, cuGraphExecUpdate, 10020)                                \
  X(cuGraphExecUpdate, cuGraphExecUpdate, 12000)                                   \
  X(cuGraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams, 12000)         \
  X(cuGraphExecMemcpyNodeSetParams, cuGraphExecMemcpyNodeSetParams, 10020)         \
  X(cuGraphExecMemsetNodeSetParams, cuGraphExecMemsetNodeSetParams, 10020)         \
  X(cuGraphExecHostNodeSetParams, cuGraphExecHostNodeSetParams, 10020)             \
  X(cuGraphExecChildGraphNodeSetParams, cuGraphExecChildGraphNodeSetParams, 11010) \
  X(cuGraphNodeSetEnabled, cuGraphNodeSetEnabled, 11060)                           \
  X(cuGraphNodeGetEnabled, cuGraphNodeGetEnabled, 11060)                           \
  X(cuGraphDebugDotPrint, cuGraphDebugDotPrint, 11030)                             \
  X(cuUserObjectCreate, cuUserObjectCreate, 11030)                                 \
  X(cuUserObjectRetain, cuUserObjectRetain, 11030)                                 \
  X(cuUserObjectRelease, cuUserObjectRelease, 11030)                               \
  X(cuGraphRetainUserObject, cuGraphRetainUserObject, 11030)                       \
  X(cuGraphReleaseUserObject, cuGraphReleaseUserObject, 11030)                     \
  X(cuStreamBeginCapture, cuStreamBeginCapture, 10010)                             \
  X(cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph, 12030)               \
  X(cuStreamEndCapture, cuStreamEndCapture, 10000)                                 \
  X(cuStreamIsCapturing, cuStreamIsCapturing, 10000)                               \
  X(cuStreamGetCaptureInfo_v2, cuStreamGetCaptureInfo, 11030)                      \
  X(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo, 12030)                         \
  X(cuStreamUpdateCaptureDependencies, cuStreamUpdateCaptureDependencies, 12030)   \
  X(cuThreadExchangeStreamCaptureMode, cuThreadExchangeStreamCaptureMode, 10010)   \
  X(cuGraphKernelNodeSetAttribute, cuGraphKernelNodeSetAttribute, 11000)           \
  X(cuGraphKernelNodeGetAttribute, cuGraphKernelNodeGetAttribute, 11000)           \
  X(cuGraphKernelNodeCopyAttributes, cuGraphKernelNodeCopyAttributes, 11000)       \
  X(cuGraphAddBatchMemOpNode, cuGraphAddBatchMemOpNode, 11070)                     \
  X(cuGraphBatchMemOpNodeGetParams, cuGraphBatchMemOpNodeGetParams, 11070)         \
  X(cuGraphBatchMemOpNodeSetParams, cuGraphBatchMemOpNodeSetParams, 11070)         \
  X(cuGraphExecBatchMemOpNodeSetParams, cuGraphExecBatchMemOpNodeSetParams, 11070) \
  X(cuGraphNodeSetParams, cuGraphNodeSetParams, 12020)                             \
  X(cuGraphExecNodeSetParams, cuGraphExecNodeSetParams, 12020)                     \
  X(add_ext_signal, cuGraphAddExternalSemaphoresSignalNode, 11020)                 \
  X(add_ext_wait, cuGraphAddExternalSemaphoresWaitNode, 11020)                     \
  X(ext_signal_params, cuGraphExternalSemaphoresSignalNodeGetParams, 11020)        \
  X(set_ext_wait, cuGraphExternalSemaphoresWaitNodeSetParams, 11020)               \
  X(ext_wait_params, cuGraphExternalSemaphoresWaitNodeGetParams, 11020)            \
  X(exec_set_ext_signal, cuGraphExecExternalSemaphoresSignalNodeSetParams, 11020)

struct GraphApi {
#define SWCU_TEST_GRAPH_MEMBER(member, base, version) PFN_##base##_v##version member = nullptr;
  SWCU_TEST_GRAPH_FUNCTIONS(SWCU_TEST_GRAPH_MEMBER)
#undef SWCU_TEST_GRAPH_MEMBER
  // cuGraphInstantiate_v2, the ABI of 11000 (cudaTypedefs.h declares its type internally only).
  CUresult(CUDAAPI* cuGraphInstantiate_v1)(CUgraphExec*, CUgraph, CUgraphNode*, char*,
                                           size_t) = nullptr;
  PFN_cuGraphLaunch_v10000_ptsz cuGraphLaunch_ptsz = nullptr;
  PFN_cuStreamBeginCapture_v10010_ptsz cuStreamBeginCapture_ptsz = nullptr;
  PFN_cuStreamEndCapture_v10000_ptsz cuStreamEndCapture_ptsz = nullptr;
};

inline const GraphApi& gr() {
  static const GraphApi functions = [] {
    GraphApi a;
#define SWCU_TEST_GRAPH_RESOLVE(member, base, version) \
  a.member = proc<PFN_##base##_v##version>(#base, version);
    SWCU_TEST_GRAPH_FUNCTIONS(SWCU_TEST_GRAPH_RESOLVE)
#undef SWCU_TEST_GRAPH_RESOLVE
    a.cuGraphInstantiate_v1 = proc<decltype(a.cuGraphInstantiate_v1)>("cuGraphInstantiate", 11000);
    const auto pt = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    a.cuGraphLaunch_ptsz = proc<PFN_cuGraphLaunch_v10000_ptsz>("cuGraphLaunch", 10000, pt);
    a.cuStreamBeginCapture_ptsz =
        proc<PFN_cuStreamBeginCapture_v10010_ptsz>("cuStreamBeginCapture", 10010, pt);
    a.cuStreamEndCapture_ptsz =
        proc<PFN_cuStreamEndCapture_v10000_ptsz>("cuStreamEndCapture", 10000, pt);
    return a;
  }();
  return functions;
}

[[nodiscard]] inline CUgraph create_graph() {
  CUgraph g = nullptr;
  REQUIRE(gr().cuGraphCreate(&g, 0) == CUDA_SUCCESS);
  return g;
}

[[nodiscard]] inline CUgraphExec instantiate(CUgraph g, unsigned long long flags = 0) {
  CUgraphExec e = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphInstantiate(&e, g, flags));
  return e;
}

[[nodiscard]] inline CUgraphNode add_empty(CUgraph g, std::vector<CUgraphNode> deps = {}) {
  CUgraphNode n = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddEmptyNode(&n, g, deps.data(), deps.size()));
  return n;
}

[[nodiscard]] inline CUgraphNode add_host(CUgraph g, CUhostFn fn, void* data,
                                          std::vector<CUgraphNode> deps = {}) {
  const CUDA_HOST_NODE_PARAMS p{fn, data};
  CUgraphNode n = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddHostNode(&n, g, deps.data(), deps.size(), &p));
  return n;
}

/// A 32-bit memset node of `count` words.
[[nodiscard]] inline CUgraphNode add_fill32(CUgraph g, CUdeviceptr dst, unsigned value,
                                            std::size_t count, CUcontext ctx,
                                            std::vector<CUgraphNode> deps = {}) {
  CUDA_MEMSET_NODE_PARAMS p{};
  p.dst = dst;
  p.value = value;
  p.elementSize = 4;
  p.width = count;
  p.height = 1;
  CUgraphNode n = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemsetNode(&n, g, deps.data(), deps.size(), &p, ctx));
  return n;
}

/// A 1D copy with unified addresses (host or device, as the driver tells).
[[nodiscard]] inline CUDA_MEMCPY3D copy_1d(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes) {
  CUDA_MEMCPY3D p{};
  p.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.srcDevice = src;
  p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.dstDevice = dst;
  p.WidthInBytes = bytes;
  p.Height = 1;
  p.Depth = 1;
  return p;
}

[[nodiscard]] inline CUgraphNode add_copy(CUgraph g, CUdeviceptr dst, CUdeviceptr src,
                                          std::size_t bytes, CUcontext ctx,
                                          std::vector<CUgraphNode> deps = {}) {
  const CUDA_MEMCPY3D p = copy_1d(dst, src, bytes);
  CUgraphNode n = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemcpyNode(&n, g, deps.data(), deps.size(), &p, ctx));
  return n;
}

template <class T>
[[nodiscard]] CUdeviceptr address(T* p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

[[nodiscard]] inline std::vector<CUgraphNode> nodes_of(CUgraph g) {
  std::size_t n = 0;
  REQUIRE(gr().cuGraphGetNodes(g, nullptr, &n) == CUDA_SUCCESS);
  std::vector<CUgraphNode> out(n);
  REQUIRE(gr().cuGraphGetNodes(g, out.data(), &n) == CUDA_SUCCESS);
  return out;
}

[[nodiscard]] inline std::vector<std::pair<CUgraphNode, CUgraphNode>> edges_of(CUgraph g) {
  std::size_t n = 0;
  REQUIRE(gr().cuGraphGetEdges(g, nullptr, nullptr, nullptr, &n) == CUDA_SUCCESS);
  std::vector<CUgraphNode> from(n), to(n);
  REQUIRE(gr().cuGraphGetEdges(g, from.data(), to.data(), nullptr, &n) == CUDA_SUCCESS);
  std::vector<std::pair<CUgraphNode, CUgraphNode>> out;
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(from[i], to[i]);
  return out;
}

[[nodiscard]] inline CUgraphNodeType type_of(CUgraphNode n) {
  CUgraphNodeType t{};
  REQUIRE(gr().cuGraphNodeGetType(n, &t) == CUDA_SUCCESS);
  return t;
}

/// A scratch file name, removed when it goes.
class TempFile {
 public:
  TempFile() {
    char name[] = "/tmp/swcuda-graph-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path_ = name;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const char* path() const { return path_.c_str(); }
  [[nodiscard]] std::string read() const {
    std::ifstream in(path_);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  std::string path_;
};

}  // namespace swcu::test
