// Node parameters (graph_internal.hpp): checking what a program gives for a node and making
// what the node keeps; where a node may go (conditional bodies, embedded graphs); the
// cuGraphNodeParams union shared by cuGraphAddNode and cuGraphNodeSetParams.
#include <algorithm>
#include <cstring>
#include <limits>

#include "graph/copy_nodes.hpp"
#include "graph/ext_semaphore_nodes.hpp"
#include "graph/graph_internal.hpp"
#include "graph/memop_nodes.hpp"
#include "module/module.hpp"

namespace swcu {
namespace {

constexpr unsigned kMaxBlock[3] = {1024, 1024, 64};
constexpr unsigned kMaxGrid[3] = {2147483647u, 65535, 65535};
constexpr std::size_t kMaxParamBytes = 32764;

CUresult pack_kernel(const CUDA_KERNEL_NODE_PARAMS_v2& p, const KernelDesc& k, KernelNode& out) {
  if (p.kernelParams != nullptr && p.extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (k.layout_known) {
    for (const ParamLayout& l : k.params) {
      out.offsets.push_back(l.offset);
      out.sizes.push_back(l.size);
    }
  }
  if (p.extra != nullptr) {
    const void* buffer = nullptr;
    const std::size_t* size = nullptr;
    for (std::size_t i = 0; p.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buffer = p.extra[i + 1];
      } else if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
        size = static_cast<const std::size_t*>(p.extra[i + 1]);
      } else {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (size == nullptr || (*size > 0 && buffer == nullptr) || *size > kMaxParamBytes) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (k.layout_known && *size < k.params_size) return CUDA_ERROR_INVALID_VALUE;
    const auto* bytes = static_cast<const unsigned char*>(buffer);
    out.params.assign(bytes, bytes + *size);
    out.from_extra = true;
    return CUDA_SUCCESS;
  }
  if (!k.layout_known) return p.kernelParams != nullptr ? CUDA_ERROR_INVALID_IMAGE : CUDA_SUCCESS;
  if (k.params.empty()) return CUDA_SUCCESS;
  if (p.kernelParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  out.params.assign(k.params_size, 0);
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    if (p.kernelParams[i] == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(out.params.data() + k.params[i].offset, p.kernelParams[i], k.params[i].size);
  }
  return CUDA_SUCCESS;
}

// One side of a CUDA_MEMCPY3D: where it starts, checked like an enqueued copy's.
CUresult copy_side(State& s, int type, const void* host, CUdeviceptr device, std::size_t x,
                   std::size_t y, std::size_t z, std::size_t pitch, std::size_t width,
                   std::size_t height, std::uintptr_t& address, std::size_t& out_pitch) {
  std::uintptr_t base = 0;
  switch (type) {
    case CU_MEMORYTYPE_HOST: base = reinterpret_cast<std::uintptr_t>(host); break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: base = device; break;
    case CU_MEMORYTYPE_ARRAY: return CUDA_ERROR_NOT_SUPPORTED;  // no CUDA arrays here
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (z != 0) return CUDA_ERROR_NOT_SUPPORTED;  // one slice only (Depth 1)
  if (height > 1 && (pitch < width || x > pitch - width)) return CUDA_ERROR_INVALID_VALUE;
  if (y != 0 && pitch > (std::numeric_limits<std::size_t>::max() - x) / y) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  address = base + y * pitch + x;
  out_pitch = height > 1 ? pitch : width;
  if (width == 0) return CUDA_SUCCESS;
  if (height > 1 && pitch > (std::numeric_limits<std::size_t>::max() - width) / (height - 1)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t span = (height - 1) * out_pitch + width;
  const bool driver_memory = find_allocation(s, address) != nullptr;
  if (type == CU_MEMORYTYPE_DEVICE || driver_memory) {
    if (find_range(s, address, span, Access::enqueue) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  } else if (address == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// Node types a conditional body (and what it embeds) may hold.
bool allowed_in_body(int type) noexcept {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_GRAPH:
    case CU_GRAPH_NODE_TYPE_MEMSET:
    case CU_GRAPH_NODE_TYPE_MEMCPY:
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return true;
    default: return false;
  }
}

// A child graph moved into a node (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE): it stops being a
// program's graph.
CUresult move_child(State& s, Graph& parent, CUgraph child, std::unique_ptr<Graph>& out) {
  Graph* const g = s.find<Graph>(SWCU_GRAPH, child);
  if (g == nullptr || g == &top_graph(parent) || g->capturing ||
      contains(*g, CU_GRAPH_NODE_TYPE_CONDITIONAL) || exec_count(g->id) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (in_body(parent) && !only_body_types(*g)) return CUDA_ERROR_INVALID_VALUE;
  std::unique_ptr<Object> taken = s.registry(SWCU_GRAPH).take(child);
  out.reset(static_cast<Graph*>(taken.release()));
  out->ctx = nullptr;
  return CUDA_SUCCESS;
}

// The child graph of a cuGraphAddNode child graph node, moved or cloned.
CUresult child_from_union(State& s, Graph& g, const CUDA_CHILD_GRAPH_NODE_PARAMS& p,
                          std::unique_ptr<Graph>& out) {
  const int ownership = raw(p.ownership);
  if (ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE) return move_child(s, g, p.graph, out);
  if (ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) return CUDA_ERROR_INVALID_VALUE;
  const Graph* const child = find_graph(s, p.graph);
  if (child == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (in_body(g) && !only_body_types(*child)) return CUDA_ERROR_INVALID_VALUE;
  return make_child(s, *child, out);
}

}  // namespace

// ---- graph.hpp ----

CUresult make_kernel(State& s, const CUDA_KERNEL_NODE_PARAMS_v2& p, KernelNode& out) {
  const void* const handle =
      p.func != nullptr ? static_cast<const void*>(p.func) : static_cast<const void*>(p.kern);
  if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const KernelDesc* const k = describe(s, handle);
  if (k == nullptr) return CUDA_ERROR_INVALID_VALUE;
  FuncSettings set;
  if (Function* const f = find_function(s, handle)) {
    set = effective_settings(*f);
    out.owner = f->module->ctx;
  } else if (p.ctx != nullptr) {
    out.owner = s.context(p.ctx);
    if (out.owner == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  }
  const unsigned grid[3] = {p.gridDimX, p.gridDimY, p.gridDimZ};
  const unsigned block[3] = {p.blockDimX, p.blockDimY, p.blockDimZ};
  for (int i = 0; i < 3; ++i) {
    if (grid[i] == 0 || block[i] == 0 || grid[i] > kMaxGrid[i] || block[i] > kMaxBlock[i]) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  const unsigned long long threads = 1ULL * block[0] * block[1] * block[2];
  if (threads > static_cast<unsigned long long>(kMaxThreadsPerBlock) ||
      threads > static_cast<unsigned long long>(max_threads(*k)) ||
      p.sharedMemBytes > static_cast<unsigned>(max_dynamic_shared(*k, set))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult r = pack_kernel(p, *k, out)) return r;
  out.func = p.func;
  out.kern = p.kern;
  out.ctx = p.ctx;
  std::copy(grid, grid + 3, out.grid.begin());
  std::copy(block, block + 3, out.block.begin());
  out.shared = p.sharedMemBytes;
  out.name = k->name;
  return CUDA_SUCCESS;
}

CUresult make_copy(State& s, const CUDA_MEMCPY3D& p, CopyShape& out) {
  if (p.Depth != 1 || p.Height == 0) {
    return p.Depth > 1 ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
  }
  if (const CUresult r =
          copy_side(s, raw(p.dstMemoryType), p.dstHost, p.dstDevice, p.dstXInBytes, p.dstY, p.dstZ,
                    p.dstPitch, p.WidthInBytes, p.Height, out.dst, out.dst_pitch)) {
    return r;
  }
  if (const CUresult r =
          copy_side(s, raw(p.srcMemoryType), p.srcHost, p.srcDevice, p.srcXInBytes, p.srcY, p.srcZ,
                    p.srcPitch, p.WidthInBytes, p.Height, out.src, out.src_pitch)) {
    return r;
  }
  out.width = p.WidthInBytes;
  out.height = p.Height;
  return CUDA_SUCCESS;
}

CUresult make_fill(State& s, const CUDA_MEMSET_NODE_PARAMS& p, FillShape& out) {
  const unsigned size = p.elementSize;
  if ((size != 1 && size != 2 && size != 4) || p.dst % size != 0 || p.width == 0 || p.height == 0 ||
      p.width > std::numeric_limits<std::size_t>::max() / size) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t row = p.width * size;
  if (p.height > 1 &&
      (p.pitch < row || p.pitch % size != 0 ||
       p.pitch > (std::numeric_limits<std::size_t>::max() - row) / (p.height - 1))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const std::size_t span = (p.height - 1) * p.pitch + row;
  if (find_range(s, p.dst, span, Access::enqueue) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  out.dst = p.dst;
  out.pitch = p.height > 1 ? p.pitch : row;
  out.value = size == 4 ? p.value : (size == 2 ? (p.value & 0xffffu) : (p.value & 0xffu));
  out.element_size = size;
  out.width = p.width;
  out.height = p.height;
  return CUDA_SUCCESS;
}

CUresult make_child(State& s, const Graph& child, std::unique_ptr<Graph>& out) {
  if (memory_graph(child) || contains(child, CU_GRAPH_NODE_TYPE_CONDITIONAL) || child.capturing) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  out = copy_graph(s, child, true);
  return CUDA_SUCCESS;
}

void attach_child(Node& n, std::unique_ptr<Graph> graph) {
  ChildNode& c = n.as<ChildNode>();
  graph->parent = &n;
  c.handle = graph->handle();
  c.graph = std::move(graph);
}

// ---- graph_internal.hpp ----

bool only_body_types(const Graph& g) noexcept {
  return std::all_of(g.nodes.begin(), g.nodes.end(), [](const std::unique_ptr<Node>& n) {
    if (!allowed_in_body(n->type)) return false;
    const ChildNode* const c = n->if_kind<ChildNode>();
    return c == nullptr || !c->graph || only_body_types(*c->graph);
  });
}

CUresult check_placement(const Graph& g, int type) noexcept {
  if (in_body(g) && !allowed_in_body(type)) return CUDA_ERROR_INVALID_VALUE;
  if ((type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || type == CU_GRAPH_NODE_TYPE_MEM_FREE) &&
      g.parent != nullptr) {
    return CUDA_ERROR_INVALID_VALUE;  // not in child graphs or bodies
  }
  return CUDA_SUCCESS;
}

bool default_edges(const CUgraphEdgeData* data, std::size_t count) noexcept {
  if (data == nullptr) return true;
  for (std::size_t i = 0; i < count; ++i) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&data[i]);
    if (std::any_of(bytes, bytes + sizeof(CUgraphEdgeData),
                    [](unsigned char b) { return b != 0; })) {
      return false;
    }
  }
  return true;
}

CUresult set_kernel(State& s, Node& n, const CUDA_KERNEL_NODE_PARAMS_v2& p) {
  KernelNode k;
  if (const CUresult r = make_kernel(s, p, k)) return r;
  KernelNode& kernel = n.as<KernelNode>();
  kernel = std::move(k);
  adopt(*n.graph, kernel.owner);
  return CUDA_SUCCESS;
}

CUresult set_copy(State& s, Node& n, const CUDA_MEMCPY3D& p, CUcontext ctx) {
  Context* c = nullptr;
  if (const CUresult r = context_arg(s, ctx, c)) return r;
  CopyNode made;
  if (const CUresult r = make_copy_node(s, p, made)) return r;
  CopyNode& copy = n.as<CopyNode>();
  copy.params = p;
  copy.shape = made.shape;
  copy.general = std::move(made.general);
  copy.ctx = ctx != nullptr ? ctx : (c != nullptr ? c->handle() : nullptr);
  adopt(*n.graph, c);
  return CUDA_SUCCESS;
}

CUresult set_fill(State& s, Node& n, const CUDA_MEMSET_NODE_PARAMS& p, CUcontext ctx) {
  Context* c = nullptr;
  if (const CUresult r = context_arg(s, ctx, c)) return r;
  FillShape shape;
  if (const CUresult r = make_fill(s, p, shape)) return r;
  FillNode& fill = n.as<FillNode>();
  fill.params = p;
  fill.shape = shape;
  fill.ctx = ctx != nullptr ? ctx : (c != nullptr ? c->handle() : nullptr);
  adopt(*n.graph, c);
  return CUDA_SUCCESS;
}

CUresult set_host(Node& n, const CUDA_HOST_NODE_PARAMS& p) {
  if (p.fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  n.as<HostNode>().params = p;
  return CUDA_SUCCESS;
}

CUresult set_event(State& s, Node& n, CUevent event, CUresult invalid) {
  const Event* const e = s.find<Event>(SWCU_EVENT, event);
  if (e == nullptr) return invalid;
  n.as<EventNode>().event = event;
  adopt(*n.graph, e->ctx);
  return CUDA_SUCCESS;
}

CUresult from_union(State& s, Graph& g, Node& n, CUgraphNodeParams& p, bool adding) {
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS_v2 k{};
      std::memcpy(&k, &p.kernel, sizeof k);  // v3 has v2's layout
      return set_kernel(s, n, k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      if (p.memcpy.flags != 0 || p.memcpy.reserved != 0) return CUDA_ERROR_INVALID_VALUE;
      return set_copy(s, n, p.memcpy.copyParams, p.memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS m{};
      m.dst = p.memset.dst;
      m.pitch = p.memset.pitch;
      m.value = p.memset.value;
      m.elementSize = p.memset.elementSize;
      m.width = p.memset.width;
      m.height = p.memset.height;
      return set_fill(s, n, m, p.memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST: return set_host(n, {p.host.fn, p.host.userData});
    case CU_GRAPH_NODE_TYPE_EMPTY: return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      return set_event(s, n, p.eventWait.event, CUDA_ERROR_INVALID_VALUE);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      return set_event(s, n, p.eventRecord.event, CUDA_ERROR_INVALID_VALUE);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
      const CUDA_BATCH_MEM_OP_NODE_PARAMS m{p.memOp.ctx, p.memOp.count, p.memOp.paramArray,
                                            p.memOp.flags};
      return set_memop_node(s, n, m);
    }
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return set_ext_semaphore_node(s, n, p);
    default: break;
  }
  if (!adding) return CUDA_ERROR_NOT_SUPPORTED;
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      std::unique_ptr<Graph> child;
      if (const CUresult r = child_from_union(s, g, p.graph, child)) return r;
      attach_child(n, std::move(child));
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      CUDA_MEM_ALLOC_NODE_PARAMS a{};
      std::memcpy(&a, &p.alloc, sizeof a);  // v2 has v1's layout
      if (const CUresult r = make_alloc(s, a, n.as<AllocNode>())) return r;
      p.alloc.dptr = a.dptr;
      return CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return make_free(g, p.free.dptr, n.as<FreeNode>());
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return make_conditional(s, g, n, p.conditional);
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUDA_KERNEL_NODE_PARAMS_v2 kernel_params(KernelNode& k) {
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  p.func = k.func;
  p.kern = k.kern;
  p.ctx = k.ctx;
  p.gridDimX = k.grid[0];
  p.gridDimY = k.grid[1];
  p.gridDimZ = k.grid[2];
  p.blockDimX = k.block[0];
  p.blockDimY = k.block[1];
  p.blockDimZ = k.block[2];
  p.sharedMemBytes = k.shared;
  if (k.from_extra) {
    k.extra_size = k.params.size();
    k.extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, k.params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
               &k.extra_size, CU_LAUNCH_PARAM_END};
    p.extra = k.extra.data();
  } else {
    k.param_pointers.resize(k.offsets.size());
    for (std::size_t i = 0; i < k.offsets.size(); ++i) {
      k.param_pointers[i] = k.params.data() + k.offsets[i];
    }
    p.kernelParams = k.param_pointers.empty() ? nullptr : k.param_pointers.data();
  }
  return p;
}

}  // namespace swcu
