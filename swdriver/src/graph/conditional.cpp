// Conditional handles and conditional nodes (graph_internal.hpp): cuGraphConditionalHandleCreate,
// the parameters of a conditional node (its condition, its bodies), and the conditions an
// executable graph takes over. Values are set while a launch runs (exec_launch.cpp).
#include "graph/graph_internal.hpp"

namespace swcu {
namespace {

CUgraphConditionalHandle next_condition = 1;  // under the state lock

// The condition `handle` made for `g` or a graph `g` is embedded in; nullptr otherwise.
const Condition* find_condition(const Graph& g, CUgraphConditionalHandle handle) noexcept {
  for (const Graph* level = &g; level != nullptr;
       level = level->parent != nullptr ? level->parent->graph : nullptr) {
    for (const Condition& c : level->conditions) {
      if (c.handle == handle) return &c;
    }
  }
  return nullptr;
}

}  // namespace

CUresult make_conditional(State& s, Graph& g, Node& n, CUDA_CONDITIONAL_NODE_PARAMS& p) {
  const Condition* const c = find_condition(g, p.handle);
  if (c == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = nullptr;
  if (const CUresult r = context_arg(s, p.ctx, ctx)) return r;
  if (ctx != c->ctx) return CUDA_ERROR_INVALID_VALUE;  // the handle's context
  const int type = raw(p.type);
  const bool size_ok = (type == CU_GRAPH_COND_TYPE_IF && (p.size == 1 || p.size == 2)) ||
                       (type == CU_GRAPH_COND_TYPE_WHILE && p.size == 1) ||
                       (type == CU_GRAPH_COND_TYPE_SWITCH && p.size >= 1);
  if (!size_ok) return CUDA_ERROR_INVALID_VALUE;
  ConditionalNode& cond = n.as<ConditionalNode>();
  cond.handle = p.handle;
  cond.type = type;
  cond.ctx = ctx;
  for (unsigned i = 0; i < p.size; ++i) {
    auto body = std::make_unique<Graph>();
    body->id = next_graph_id();
    body->parent = &n;
    body->is_body = true;
    cond.body_handles.push_back(body->handle());
    cond.bodies.push_back(std::move(body));
  }
  p.phGraph_out = cond.body_handles.data();
  adopt(g, ctx);
  return CUDA_SUCCESS;
}

void collect_conditions(const Graph& g, std::map<CUgraphConditionalHandle, Condition>& out) {
  for (const Condition& c : g.conditions) out.emplace(c.handle, c);
  for (const auto& n : g.nodes) {
    n->for_each_embedded([&out](const Graph& e) { collect_conditions(e, out); });
  }
}

}  // namespace swcu

extern "C" {

CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle* pHandle_out, CUgraph hGraph,
                                        CUcontext ctx, unsigned int defaultLaunchValue,
                                        unsigned int flags) {
  return swcu::call(swcu::Sym::cuGraphConditionalHandleCreate, [=](swcu::State& s) -> CUresult {
    swcu::Graph* const g = swcu::find_graph(s, hGraph);
    if (g == nullptr || pHandle_out == nullptr ||
        (flags != 0 && flags != CU_GRAPH_COND_ASSIGN_DEFAULT)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Context* c = nullptr;
    if (swcu::context_arg(s, ctx, c) != CUDA_SUCCESS || c == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Condition cond;
    cond.handle = swcu::next_condition++;
    cond.default_value = defaultLaunchValue;
    cond.flags = flags;
    cond.ctx = c;
    g->conditions.push_back(cond);
    swcu::adopt(*g, c);
    *pHandle_out = cond.handle;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
