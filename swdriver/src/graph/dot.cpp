// cuGraphDebugDotPrint: a Graphviz description of a graph. Each graph is a cluster
// ("graph_<n>"), each node a box labelled with its index, its kind and its key parameters
// (kernel name and configuration, copy direction and size, memset value and shape...), each
// dependency an edge. Embedded graphs (child graph nodes, conditional bodies) are clusters of
// their own, reached by a dashed edge from their node. CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE (or the
// flag of a node kind) adds the addresses and handles behind a node.
#include <cstdio>
#include <string>
#include <unordered_map>

#include "graph/graph.hpp"

namespace swcu {
namespace {

constexpr unsigned kDotFlags = (1u << 16) - 1;  // every CU_GRAPH_DEBUG_DOT_FLAGS_* bit

std::string hex(std::uintptr_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

template <class T>
std::string hex(T* pointer) {
  return hex(reinterpret_cast<std::uintptr_t>(pointer));
}

const char* side(State& s, std::uintptr_t address) {
  const Allocation* const a = find_allocation(s, address);
  if (a == nullptr || a->memory == Allocation::Memory::host ||
      a->memory == Allocation::Memory::registered) {
    return "H";
  }
  return "D";
}

// A side of a memcpy node's 3D copy: A for a CUDA array (as in DtoA), else H or D.
std::string copy_3d_side(State& s, const CopySide& c) {
  return c.is_array ? "A" : side(s, c.address);
}

// Quotes for a DOT string (labels may hold kernel names with quotes or backslashes).
std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

class Printer {
 public:
  Printer(State& s, unsigned flags) : s_(s), flags_(flags) {}

  std::string print(const Graph& g) {
    out_ = "digraph dot {\n";
    level(g);
    out_ += "}\n";
    return out_;
  }

 private:
  bool detail(unsigned kind_flag) const {
    return (flags_ & (CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE | kind_flag)) != 0;
  }
  bool handles() const {
    return (flags_ & (CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE | CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES)) != 0;
  }

  std::string label(const Node& n, std::size_t index) {
    std::string l = std::to_string(index) + "\\n";
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL: {
        const KernelNode& k = n.as<KernelNode>();
        l += "KERNEL\\n" + escape(k.name) + "\\n<<<{" + std::to_string(k.grid[0]) + "," +
             std::to_string(k.grid[1]) + "," + std::to_string(k.grid[2]) + "},{" +
             std::to_string(k.block[0]) + "," + std::to_string(k.block[1]) + "," +
             std::to_string(k.block[2]) + "}," + std::to_string(k.shared) + ">>>";
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS)) {
          l += "\\nparams " + std::to_string(k.params.size()) + " bytes";
          for (std::size_t i = 0; i < k.offsets.size(); ++i) {
            l += "\\nparam " + std::to_string(i) + ": offset " + std::to_string(k.offsets[i]) +
                 ", size " + std::to_string(k.sizes[i]);
          }
        }
        if (handles()) l += "\\nfunction " + hex(k.func);
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEMCPY: {
        if (const auto& g = n.as<CopyNode>().general) {
          l += "MEMCPY\\n" + copy_3d_side(s_, g->src) + "to" + copy_3d_side(s_, g->dst) + "\\n" +
               std::to_string(g->bytes()) + " bytes";
          if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS)) {
            l += "\\nwidth " + std::to_string(g->width) + " height " + std::to_string(g->height) +
                 " depth " + std::to_string(g->depth);
          }
          break;
        }
        const CopyShape& c = n.as<CopyNode>().shape;
        l += std::string("MEMCPY\\n") + side(s_, c.src) + "to" + side(s_, c.dst) + "\\n" +
             std::to_string(c.width * c.height) + " bytes";
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS)) {
          l += "\\nsrc " + hex(c.src) + " pitch " + std::to_string(c.src_pitch) + "\\ndst " +
               hex(c.dst) + " pitch " + std::to_string(c.dst_pitch) + "\\nwidth " +
               std::to_string(c.width) + " height " + std::to_string(c.height);
        }
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEMSET: {
        const FillShape& f = n.as<FillNode>().shape;
        l += "MEMSET\\nvalue " + hex(f.value) + ", element size " + std::to_string(f.element_size) +
             "\\n" + std::to_string(f.width) + " x " + std::to_string(f.height);
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_MEMSET_NODE_PARAMS)) {
          l += "\\ndst " + hex(f.dst) + " pitch " + std::to_string(f.pitch);
        }
        break;
      }
      case CU_GRAPH_NODE_TYPE_HOST: {
        const CUDA_HOST_NODE_PARAMS& host = n.as<HostNode>().params;
        l += "HOST";
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS)) {
          l += "\\nfn " + hex(reinterpret_cast<void*>(host.fn)) + "\\nuserData " +
               hex(host.userData);
        }
        break;
      }
      case CU_GRAPH_NODE_TYPE_GRAPH: l += "CHILD_GRAPH"; break;
      case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
      case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
        l += n.type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL ? "EXT_SEMAS_SIGNAL" : "EXT_SEMAS_WAIT";
        l += "\\n" + std::to_string(n.as<ExtSemNode>().handles.size()) + " semaphores";
        break;
      case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
        l += "BATCH_MEM_OP\\n" + std::to_string(n.as<MemOpNode>().ops.size()) + " operations";
        break;
      case CU_GRAPH_NODE_TYPE_EMPTY: l += "EMPTY"; break;
      case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        l += n.type == CU_GRAPH_NODE_TYPE_WAIT_EVENT ? "EVENT_WAIT" : "EVENT_RECORD";
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_EVENT_NODE_PARAMS))
          l += "\\nevent " + hex(n.as<EventNode>().event);
        break;
      case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        const GraphMemory* const m = n.memory();
        l += "MEM_ALLOC\\n" + std::to_string(m != nullptr ? m->params.bytesize : 0) + " bytes";
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_MEM_ALLOC_NODE_PARAMS) && m != nullptr) {
          l += "\\ndptr " + hex(m->address());
        }
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEM_FREE:
        l += "MEM_FREE";
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_MEM_FREE_NODE_PARAMS)) {
          l += "\\ndptr " + hex(n.as<FreeNode>().address);
        }
        break;
      case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        const ConditionalNode& c = n.as<ConditionalNode>();
        l += std::string("CONDITIONAL\\n") +
             (c.type == CU_GRAPH_COND_TYPE_IF
                  ? "IF"
                  : (c.type == CU_GRAPH_COND_TYPE_WHILE ? "WHILE" : "SWITCH"));
        if (detail(CU_GRAPH_DEBUG_DOT_FLAGS_CONDITIONAL_NODE_PARAMS)) {
          l += "\\nhandle " + std::to_string(c.handle) + "\\nbodies " +
               std::to_string(c.bodies.size());
        }
        break;
      }
      default: l += "NODE"; break;
    }
    if (handles()) l += "\\nnode " + hex(&n);
    return l;
  }

  // One graph as a cluster; its embedded graphs follow as clusters of their own. Returns the
  // DOT names of its root nodes (what a dashed edge from the embedding node points to).
  std::vector<std::string> level(const Graph& g) {
    const std::size_t id = ++clusters_;
    const std::string prefix = "graph_" + std::to_string(id) + "_node_";
    out_ += "subgraph cluster_" + std::to_string(id) + " {\nlabel=\"graph_" + std::to_string(id) +
            "\" graph[style=\"dashed\"];\n";
    std::unordered_map<const Node*, std::string> names;
    std::vector<std::string> roots;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = *g.nodes[i];
      const std::string name = prefix + std::to_string(i);
      names.emplace(&n, name);
      if (n.deps.empty()) roots.push_back(name);
      const char* shape = n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL ? "diamond" : "rectangle";
      out_ += "\"" + name + "\"[style=\"solid\" shape=\"" + shape + "\" label=\"" + label(n, i) +
              "\"];\n";
    }
    for (const auto& n : g.nodes) {
      for (const Node* d : n->deps) {
        out_ += "\"" + names.at(d) + "\" -> \"" + names.at(n.get()) + "\";\n";
      }
    }
    out_ += "}\n";
    for (const auto& n : g.nodes) {
      n->for_each_embedded([&](const Graph& e) {
        const std::vector<std::string> inner = level(e);
        for (const std::string& root : inner) {
          out_ += "\"" + names.at(n.get()) + "\" -> \"" + root + "\"[style=\"dashed\"];\n";
        }
      });
    }
    return roots;
  }

  State& s_;
  unsigned flags_;
  std::string out_;
  std::size_t clusters_ = 0;
};

}  // namespace
}  // namespace swcu

extern "C" {

CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char* path, unsigned int flags) {
  return swcu::call(swcu::Sym::cuGraphDebugDotPrint, [=](swcu::State& s) -> CUresult {
    const swcu::Graph* const g = swcu::find_graph(s, hGraph);
    if (g == nullptr || path == nullptr || (flags & ~swcu::kDotFlags) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const std::string text = swcu::Printer(s, flags).print(*g);
    std::FILE* const f = std::fopen(path, "w");
    if (f == nullptr) return CUDA_ERROR_OPERATING_SYSTEM;
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    return written && closed ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
  });
}

}  // extern "C"
