// Memcpy nodes with CUDA arrays or several slices (copy_nodes.hpp), and the capture of such
// copies and of batches (the capture_copies hook, memory/copy_3d.hpp).
#include "graph/copy_nodes.hpp"

#include "graph/capture.hpp"
#include "graph/graph.hpp"
#include "memory/array.hpp"
#include "memory/memory.hpp"

namespace swcu {
namespace {

// The device of the allocation at `address`; -1 for host memory (driver-known or not).
int device_of(State& s, std::uintptr_t address) {
  const Allocation* const a = find_allocation(s, address);
  if (a == nullptr || a->memory == Allocation::Memory::host ||
      a->memory == Allocation::Memory::registered) {
    return -1;
  }
  return a->device;
}

// What an exec update may not change about one side of a copy.
struct Operand {
  int type = 0;                  ///< CUmemorytype as given
  int device = -1;               ///< -1: host memory; -2: an array that is gone
  const Context* ctx = nullptr;  ///< an array's context
  bool operator==(const Operand&) const = default;
};

Operand operand(State& s, const CopyNode& c, bool src) {
  Operand o;
  o.type = raw(src ? c.params.srcMemoryType : c.params.dstMemoryType);
  if (!c.general) {
    o.device = device_of(s, src ? c.shape.src : c.shape.dst);
    return o;
  }
  const CopySide& side = src ? c.general->src : c.general->dst;
  if (!side.is_array) {
    o.device = device_of(s, side.address);
    return o;
  }
  Array* a = nullptr;
  if (find_array(s, side.array, a) != CUDA_SUCCESS) {
    o.device = -2;
    return o;
  }
  o.device = a->device;
  o.ctx = a->ctx;
  return o;
}

// One side of a captured copy as CUDA_MEMCPY3D describes it (what cuGraphMemcpyNodeGetParams
// reports): an array and its offset, or an address (CU_MEMORYTYPE_UNIFIED) with its pitches.
void describe(const CopySide& side, CUmemorytype& type, CUarray& array, CUdeviceptr& device,
              std::size_t& x, std::size_t& y, std::size_t& z, std::size_t& pitch,
              std::size_t& height) {
  if (side.is_array) {
    type = CU_MEMORYTYPE_ARRAY;
    array = side.array;
    x = side.x, y = side.y, z = side.z;
    return;
  }
  type = CU_MEMORYTYPE_UNIFIED;
  device = static_cast<CUdeviceptr>(side.address);
  pitch = side.pitch;
  height = side.pitch != 0 ? side.slice / side.pitch : 0;
}

CUDA_MEMCPY3D params_of(const Copy3D& c) {
  CUDA_MEMCPY3D p{};
  describe(c.src, p.srcMemoryType, p.srcArray, p.srcDevice, p.srcXInBytes, p.srcY, p.srcZ,
           p.srcPitch, p.srcHeight);
  describe(c.dst, p.dstMemoryType, p.dstArray, p.dstDevice, p.dstXInBytes, p.dstY, p.dstZ,
           p.dstPitch, p.dstHeight);
  p.WidthInBytes = c.width;
  p.Height = c.height;
  p.Depth = c.depth;
  return p;
}

}  // namespace

bool general_copy(const CUDA_MEMCPY3D& p) noexcept {
  return raw(p.srcMemoryType) == CU_MEMORYTYPE_ARRAY ||
         raw(p.dstMemoryType) == CU_MEMORYTYPE_ARRAY || p.Depth > 1 || p.srcZ != 0 || p.dstZ != 0;
}

CUresult make_copy_node(State& s, const CUDA_MEMCPY3D& p, CopyNode& out) {
  if (!general_copy(p)) {
    out.general.reset();
    return make_copy(s, p, out.shape);
  }
  if (p.Depth == 0 || p.Height == 0) return CUDA_ERROR_INVALID_VALUE;
  Copy3D c;
  if (const CUresult r = resolve_memcpy3d(s, p, false, CopyMode::async, c)) return r;
  out.shape = CopyShape{};
  out.general = std::move(c);
  return CUDA_SUCCESS;
}

bool copy_operands_changed(State& s, const CopyNode& old, const CopyNode& now) {
  return operand(s, old, true) != operand(s, now, true) ||
         operand(s, old, false) != operand(s, now, false);
}

bool one_dimensional(const CopyNode& c) noexcept {
  return c.params.Height == 1 && c.params.Depth == 1 && c.params.WidthInBytes != 0;
}

bool copies_array(const CopyNode& c) noexcept {
  return c.general && (c.general->src.is_array || c.general->dst.is_array);
}

// A stream capture records each copy as a memcpy node that reads its source when the graph runs
// (a staged source is dropped).
Captured capture_copies(State& s, Queue& q, bool sync, const std::vector<Copy3D>& copies) {
  return capture_nodes(s, q, sync, [&](std::vector<std::unique_ptr<Node>>& out) -> CUresult {
    for (const Copy3D& c : copies) {
      auto n = std::make_unique<Node>(CU_GRAPH_NODE_TYPE_MEMCPY);
      CopyNode& node = n->as<CopyNode>();
      node.params = params_of(c);
      node.general = c;
      node.general->staged.reset();
      node.ctx = q.ctx != nullptr ? q.ctx->handle() : nullptr;
      out.push_back(std::move(n));
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace swcu
