// Executable graphs (graph.hpp): instantiation, launches, uploads, whole-graph and per-node
// updates, enabling and disabling nodes, and set_conditional (the control API).
//
// A launch is one stream operation: a callback (so it also runs, with the error as its status,
// when its context is broken, and can then let go of what it holds) that runs the nodes of the
// executable copy one after another in their topological order, on the thread that drives the
// scheduler, without the state lock, as host functions run; it takes the lock for each node that
// needs the driver's state. Event waits of the graph are dependencies of the operation; each
// event record node completes an event record of its own when it runs. The launch costs one
// operation on the simulated clock (1 us) plus the bytes its copies and memsets move: a graph's
// nodes share one launch overhead.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "graph/capture.hpp"
#include "exec/interpret.hpp"
#include "exec/launch.hpp"
#include "graph/user_object.hpp"

namespace swcu {
namespace {

constexpr unsigned long long kInstantiateFlags =
    CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;

// What an executable graph shares with its in-flight launches.
struct ExecState {
  std::map<CUgraphConditionalHandle, Condition> conditions;
  std::map<CUgraphConditionalHandle, unsigned> values;  ///< the conditions' current values
  bool destroyed = false;
};

struct Exec final : Object {
  Exec() noexcept : Object(SWCU_GRAPH_EXEC) {}
  void release() noexcept override;

  Context* ctx = nullptr;  ///< reclaims it
  unsigned long long flags = 0;
  std::uint64_t source = 0;  ///< the id of the graph it was instantiated from
  std::shared_ptr<Graph> plan;
  std::shared_ptr<HeldRefs> refs;
  std::shared_ptr<ExecState> exec;
  std::shared_ptr<Completion> last;  ///< the last launch (launches are serialized)
};

std::unordered_map<std::uint64_t, std::size_t>& exec_counts() noexcept {
  static auto* const counts = new std::unordered_map<std::uint64_t, std::size_t>;
  return *counts;
}

// Memory the executable graph left allocated goes with it (or with its last launch).
void free_outstanding(Graph& g) noexcept {
  for (const auto& n : g.nodes) {
    if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && n->memory && n->memory->outstanding) {
      n->memory->outstanding = false;
      n->memory->allocation->stage = Allocation::Stage::pending;
    }
  }
}

void Exec::release() noexcept {
  if (auto it = exec_counts().find(source); it != exec_counts().end() && --it->second == 0) {
    exec_counts().erase(it);
  }
  if (exec) exec->destroyed = true;
  if (plan && (!last || last->done)) free_outstanding(*plan);
  plan.reset();
  refs.reset();
  exec.reset();
  last.reset();
}

// One launch of an executable graph, owned by its stream operation.
struct Launch {
  Launch() = default;
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  std::shared_ptr<Graph> plan;
  std::shared_ptr<HeldRefs> refs;  ///< user objects stay while the launch may run
  std::shared_ptr<ExecState> exec;
  Queue* queue = nullptr;  ///< valid while the operation is
  CUstream stream = nullptr;
  int priority = 0;
  std::vector<std::pair<const Node*, std::shared_ptr<Completion>>> records;
  std::vector<GraphMemory*> auto_free;  ///< AUTO_FREE_ON_LAUNCH: freed when it starts
};

// Whoever waits for an event record of the launch must not wait forever: what did not run is
// done when the launch goes.
Launch::~Launch() {
  for (auto& [node, c] : records) {
    if (!c->done) {
      c->done = true;
      c->queue = nullptr;
    }
  }
  if (exec && exec->destroyed && plan) free_outstanding(*plan);
  state().progress.notify_all();
}

thread_local Launch* t_launch = nullptr;  // the launch the calling thread runs, if any

using StateLock = std::unique_lock<std::mutex>;

// A failure of a node: the stream's asynchronous error (sticky for a device fault, as on a GPU).
void fail(Queue& q, CUresult code) {
  if (!q.error || q.error->reported) q.error = std::make_shared<AsyncError>(AsyncError{code});
  if (is_device_fault(code) && q.ctx != nullptr && q.ctx->sticky_error == CUDA_SUCCESS) {
    q.ctx->sticky_error = code;
  }
}

bool still_there(State& s, std::uintptr_t address, std::size_t span) {
  if (span == 0 || find_allocation(s, address) == nullptr) return true;  // pageable memory
  return find_range(s, address, span, Access::execute) != nullptr;
}

CUresult run_copy(State& s, const CopyShape& c) {
  if (c.width == 0) return CUDA_SUCCESS;
  const std::size_t dst_span = (c.height - 1) * c.dst_pitch + c.width;
  const std::size_t src_span = (c.height - 1) * c.src_pitch + c.width;
  if (!still_there(s, c.dst, dst_span) || !still_there(s, c.src, src_span)) {
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  for (std::size_t row = 0; row < c.height; ++row) {
    std::memmove(reinterpret_cast<void*>(c.dst + row * c.dst_pitch),
                 reinterpret_cast<const void*>(c.src + row * c.src_pitch), c.width);
  }
  return CUDA_SUCCESS;
}

CUresult run_fill(State& s, const FillShape& f) {
  const std::size_t row = f.width * f.element_size;
  if (!still_there(s, f.dst, (f.height - 1) * f.pitch + row) ||
      find_allocation(s, f.dst) == nullptr) {
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  for (std::size_t r = 0; r < f.height; ++r) {
    auto* out = reinterpret_cast<unsigned char*>(f.dst + r * f.pitch);
    if (f.element_size == 1) {
      std::memset(out, static_cast<int>(f.value & 0xff), f.width);
      continue;
    }
    for (std::size_t i = 0; i < f.width; ++i) {
      if (f.element_size == 2) {
        const auto v = static_cast<std::uint16_t>(f.value);
        std::memcpy(out + i * 2, &v, 2);
      } else {
        std::memcpy(out + i * 4, &f.value, 4);
      }
    }
  }
  return CUDA_SUCCESS;
}

bool run_level(Launch& l, Graph& g);

// A kernel node without a registered host function: its PTX, under the lock.
bool run_interpreted(State& s, Queue& q, const KernelArgs& k, const swcu_launch& v) {
  LaunchSpec spec;
  spec.kernel = k.name;
  spec.grid = k.grid;
  spec.block = k.block;
  spec.shared_bytes = k.shared;
  spec.priority = v.priority;
  spec.stream = v.stream;
  spec.offsets = k.offsets;
  spec.sizes = k.sizes;
  spec.params = k.params;
  log_launch(spec);
  const CUresult r = interpret_now(s, *q.ctx, k.func, spec);
  if (r != CUDA_SUCCESS) fail(q, r);
  return r == CUDA_SUCCESS;
}

unsigned condition_value(Launch& l, CUgraphConditionalHandle handle) {
  const StateLock lock(state().mutex);
  const auto it = l.exec->values.find(handle);
  return it == l.exec->values.end() ? 0 : it->second;
}

// Runs one node; false when the launch must stop (its context broke, or the node failed).
bool run_node(Launch& l, Node& n) {
  State& s = state();
  StateLock lock(s.mutex);
  Queue& q = *l.queue;
  if (q.ctx == nullptr || q.ctx->sticky_error != CUDA_SUCCESS) return false;
  if (!n.enabled) return true;  // a disabled node acts as an empty node
  Device& dev = s.devices[static_cast<std::size_t>(q.device)];
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return true;  // waits are the launch's dependencies
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      for (auto& [node, c] : l.records) {
        if (node == &n && !c->done) {
          c->time_ns = dev.clock_ns;
          c->done = true;
          c->queue = nullptr;
          s.progress.notify_all();
        }
      }
      return true;
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      const CUresult r = run_copy(s, n.copy_shape);
      dev.clock_ns += n.copy_shape.width * n.copy_shape.height / kBytesPerNs;
      if (r != CUDA_SUCCESS) fail(q, r);
      return r == CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUresult r = run_fill(s, n.fill_shape);
      dev.clock_ns +=
          n.fill_shape.width * n.fill_shape.element_size * n.fill_shape.height / kBytesPerNs;
      if (r != CUDA_SUCCESS) fail(q, r);
      return r == CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      if (n.memory) n.memory->allocation->stage = Allocation::Stage::live;
      return true;
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      if (n.memory) {
        n.memory->allocation->stage = Allocation::Stage::pending;
        n.memory->outstanding = false;
      }
      return true;
    case CU_GRAPH_NODE_TYPE_HOST: {
      const CUDA_HOST_NODE_PARAMS host = n.host;
      lock.unlock();
      host.fn(host.userData);
      return true;
    }
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const KernelArgs& k = n.kernel;
      swcu_launch v{};
      v.kernel = k.name.c_str();
      std::copy(k.grid.begin(), k.grid.end(), v.grid);
      std::copy(k.block.begin(), k.block.end(), v.block);
      v.cluster[0] = v.cluster[1] = v.cluster[2] = 1;
      v.shared_bytes = k.shared;
      v.priority = l.priority;
      v.stream = l.stream;
      v.param_count = k.offsets.size();
      v.param_offsets = k.offsets.data();
      v.param_sizes = k.sizes.data();
      v.params = k.params.data();
      v.params_size = k.params.size();
      if (!has_host_function(k.name)) return run_interpreted(s, q, k, v);
      lock.unlock();  // the plan cannot change while the launch holds it
      run_kernel_now(v);
      return true;
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: lock.unlock(); return run_level(l, *n.child);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
      lock.unlock();
      switch (n.condition_type) {
        case CU_GRAPH_COND_TYPE_IF: {
          const unsigned v = condition_value(l, n.condition);
          if (v != 0) return run_level(l, *n.bodies[0]);
          return n.bodies.size() < 2 || run_level(l, *n.bodies[1]);
        }
        case CU_GRAPH_COND_TYPE_WHILE:
          while (condition_value(l, n.condition) != 0) {
            if (!run_level(l, *n.bodies[0])) return false;
          }
          return true;
        default: {
          const unsigned v = condition_value(l, n.condition);
          return v >= n.bodies.size() || run_level(l, *n.bodies[v]);
        }
      }
    }
    default: return true;
  }
}

bool run_level(Launch& l, Graph& g) {
  for (Node* n : g.order) {
    if (!run_node(l, *n)) return false;
  }
  return true;
}

// The stream operation of a launch.
void CUDA_CB run_launch(CUstream, CUresult status, void* data) {
  Launch& l = *static_cast<Launch*>(data);
  if (status != CUDA_SUCCESS) return;  // a failed launch (or a broken context) runs nothing
  {
    const StateLock lock(state().mutex);
    for (GraphMemory* m : l.auto_free) {
      m->allocation->stage = Allocation::Stage::pending;
      m->outstanding = false;
    }
    for (const auto& [handle, c] : l.exec->conditions) {
      if ((c.flags & CU_GRAPH_COND_ASSIGN_DEFAULT) != 0) l.exec->values[handle] = c.default_value;
    }
  }
  Launch* const outer = t_launch;
  t_launch = &l;
  run_level(l, *l.plan);
  t_launch = outer;
}

Exec* find_exec(State& s, CUgraphExec handle) noexcept {
  return s.find<Exec>(SWCU_GRAPH_EXEC, handle);
}

// The executable copy, made private to the executable graph before a change (launches already
// enqueued keep what they launched).
Graph& writable(State& s, Exec& e) {
  if (e.plan.use_count() > 1) e.plan = copy_graph(s, *e.plan, false);
  return *e.plan;
}

// Event records and waits of a launch, in execution order (child graphs included).
void collect_events(State& s, Launch& l, Graph& g, Queue& q,
                    std::vector<std::shared_ptr<Completion>>& waits) {
  for (Node* n : g.order) {
    if (!n->enabled) continue;
    if (n->type == CU_GRAPH_NODE_TYPE_GRAPH) {
      collect_events(s, l, *n->child, q, waits);
      continue;
    }
    Event* const e = n->event != nullptr ? s.find<Event>(SWCU_EVENT, n->event) : nullptr;
    if (e == nullptr) continue;
    if (n->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
      auto c = std::make_shared<Completion>();
      c->queue = &q;
      c->device = q.device;
      l.records.emplace_back(n, c);
      e->recorded = c;
      e->captured.reset();
    } else if (n->type == CU_GRAPH_NODE_TYPE_WAIT_EVENT && e->recorded && !e->recorded->done) {
      const bool own = std::any_of(l.records.begin(), l.records.end(),
                                   [&e](const auto& r) { return r.second == e->recorded; });
      if (!own) waits.push_back(e->recorded);  // this launch's own records come in order
    }
  }
}

CUresult launch(Sym sym, NullStream null, CUgraphExec handle, CUstream stream) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    Exec* const e = find_exec(s, handle);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (const auto r = capture_graph(s, *q, *e->plan)) return *r;
    auto l = std::make_shared<Launch>();
    for (const auto& n : e->plan->nodes) {
      if (n->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC || !n->memory || !n->memory->outstanding)
        continue;
      if ((e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) == 0) {
        return CUDA_ERROR_INVALID_VALUE;  // the previous launch's allocation is still there
      }
      l->auto_free.push_back(n->memory.get());
    }
    l->plan = e->plan;
    l->refs = e->refs;
    l->exec = e->exec;
    l->queue = q.get();
    l->stream = stream;
    l->priority = q->priority;
    Op op;
    op.kind = OpKind::callback;
    op.callback = &run_launch;
    op.stream_handle = stream;
    op.user_data = l.get();
    collect_events(s, *l, *l->plan, *q, op.deps);
    if (e->last && !e->last->done) op.deps.push_back(e->last);  // one launch at a time
    // Not run for a callback: it owns the launch, which goes with the operation.
    op.work = [l](State&) { return CUDA_SUCCESS; };
    e->last = push(s, *q, std::move(op));
    for (const auto& n : e->plan->nodes) {
      if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && n->memory && !n->memory->freed_in_owner) {
        n->memory->outstanding = true;
      }
    }
    kick(s, lock);  // may release the lock: nothing is used after this
    return CUDA_SUCCESS;
  });
}

CUresult upload(Sym sym, NullStream null, CUgraphExec handle, CUstream stream) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    Exec* const e = find_exec(s, handle);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (q->capture) return CUDA_SUCCESS;  // nothing to record: uploading changes nothing
    if (const CUresult r = capture_sync_check(s, *q)) return r;
    Op op;
    op.kind = OpKind::wait;  // ordered behind the stream's work and the previous launches
    if (e->last && !e->last->done) op.deps.push_back(e->last);
    e->last = push(s, *q, std::move(op));
    kick(s, lock);
    return CUDA_SUCCESS;
  });
}

// Why an executable graph of `g` cannot be made (CUDA_SUCCESS when it can).
CUresult check_instantiable(State& s, Graph& g, unsigned long long flags,
                            CUgraphInstantiateResult& result, CUgraphNode& error_node) {
  result = CUDA_GRAPH_INSTANTIATE_ERROR;
  if ((flags & ~kInstantiateFlags) != 0 ||
      ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0 &&
       (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (g.capturing || in_body(g)) return CUDA_ERROR_INVALID_VALUE;
  const bool single = contains(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC) ||
                      contains(g, CU_GRAPH_NODE_TYPE_MEM_FREE) ||
                      contains(g, CU_GRAPH_NODE_TYPE_CONDITIONAL);
  if (single && exec_count(g.id) != 0) return CUDA_ERROR_INVALID_VALUE;  // one at a time
  std::vector<Node*> order;
  Node* cycle = nullptr;
  if (!topological_order(g, order, cycle)) {
    result = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
    error_node = cycle->handle();
    return CUDA_ERROR_INVALID_VALUE;
  }
  if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) != 0) {
    bool work = false;
    for (const auto& n : g.nodes) {
      switch (n->type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
        case CU_GRAPH_NODE_TYPE_MEMCPY:
        case CU_GRAPH_NODE_TYPE_MEMSET: work = true; break;
        case CU_GRAPH_NODE_TYPE_GRAPH: break;
        default:
          result = CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED;
          error_node = n->handle();
          return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (!work) return CUDA_ERROR_INVALID_VALUE;
  }
  (void)s;
  result = CUDA_GRAPH_INSTANTIATE_SUCCESS;
  return CUDA_SUCCESS;
}

void collect_conditions(const Graph& g, std::map<CUgraphConditionalHandle, Condition>& out) {
  for (const Condition& c : g.conditions) out.emplace(c.handle, c);
  for (const auto& n : g.nodes) {
    if (n->child) collect_conditions(*n->child, out);
    for (const auto& b : n->bodies) collect_conditions(*b, out);
  }
}

Context* current_or_null(State& s) noexcept {
  Context* ctx = nullptr;
  return current_context(s, ctx) == CUDA_SUCCESS ? ctx : nullptr;
}

CUresult instantiate(State& s, Lock& lock, CUgraphExec* out, CUgraph graph,
                     unsigned long long flags, bool with_params, CUstream upload_stream,
                     CUgraphInstantiateResult* result, CUgraphNode* error_node) {
  CUgraphInstantiateResult res = CUDA_GRAPH_INSTANTIATE_ERROR;
  CUgraphNode err = nullptr;
  const auto report = [&](CUresult r) {
    if (result != nullptr) *result = res;
    if (error_node != nullptr) *error_node = err;
    return r;
  };
  Graph* const g = find_graph(s, graph);
  if (out == nullptr || g == nullptr) return report(CUDA_ERROR_INVALID_VALUE);
  if (!with_params && (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) {
    return report(CUDA_ERROR_INVALID_VALUE);
  }
  if (const CUresult r = check_instantiable(s, *g, flags, res, err)) return report(r);
  std::shared_ptr<Queue> q;
  if ((flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0) {
    if (const CUresult r = resolve_stream(s, upload_stream, NullStream::legacy, q)) {
      res = CUDA_GRAPH_INSTANTIATE_ERROR;
      return report(r);
    }
  }
  auto e = std::make_unique<Exec>();
  e->flags = flags & ~static_cast<unsigned long long>(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
  e->source = g->id;
  e->plan = copy_graph(s, *g, false);
  e->refs = std::make_shared<HeldRefs>(all_user_refs(*g));
  retain_refs(e->refs->refs);
  e->exec = std::make_shared<ExecState>();
  collect_conditions(*g, e->exec->conditions);
  for (const auto& [handle, c] : e->exec->conditions) e->exec->values[handle] = c.default_value;
  e->ctx = current_or_null(s);
  if (e->ctx == nullptr) e->ctx = top_graph(*g).ctx;
  ++exec_counts()[g->id];
  Exec* const added = s.registry(SWCU_GRAPH_EXEC).add(std::move(e));
  *out = reinterpret_cast<CUgraphExec>(added);
  if (q) {
    Op op;
    op.kind = OpKind::wait;
    added->last = push(s, *q, std::move(op));
    kick(s, lock);  // may release the lock: nothing is used after this
  }
  return report(CUDA_SUCCESS);
}

// ---- updates ----

struct UpdateError {
  CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  CUgraphNode node = nullptr;
  CUgraphNode from = nullptr;
};

int device_of(State& s, std::uintptr_t address) {
  const Allocation* const a = find_allocation(s, address);
  if (a == nullptr || a->memory == Allocation::Memory::host ||
      a->memory == Allocation::Memory::registered) {
    return -1;  // host memory
  }
  return a->device;
}

bool memcpy_changed(State& s, const Node& old, const Node& now) {
  return raw(old.copy.srcMemoryType) != raw(now.copy.srcMemoryType) ||
         raw(old.copy.dstMemoryType) != raw(now.copy.dstMemoryType) ||
         device_of(s, old.copy_shape.src) != device_of(s, now.copy_shape.src) ||
         device_of(s, old.copy_shape.dst) != device_of(s, now.copy_shape.dst);
}

bool memset_changed(State& s, const Node& old, const Node& now) {
  const FillShape& a = old.fill_shape;
  const FillShape& b = now.fill_shape;
  if (device_of(s, a.dst) != device_of(s, b.dst) || a.height != b.height) return true;
  if (a.height > 1) {  // 2D: only the address and the value may change
    return a.width != b.width || a.pitch != b.pitch || a.element_size != b.element_size;
  }
  return false;
}

// Whether `now` (a program's graph) can update `old` (an executable copy) node by node, paired
// in creation order; the first reason why not.
void compare(State& s, const Graph& old, const Graph& now, UpdateError& error) {
  if (old.nodes.size() != now.nodes.size()) {
    error.result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return;
  }
  std::unordered_map<const Node*, std::size_t> old_index, now_index;
  for (std::size_t i = 0; i < old.nodes.size(); ++i) {
    old_index.emplace(old.nodes[i].get(), i);
    now_index.emplace(now.nodes[i].get(), i);
  }
  for (std::size_t i = 0; i < now.nodes.size() && error.result == CU_GRAPH_EXEC_UPDATE_SUCCESS;
       ++i) {
    const Node& o = *old.nodes[i];
    Node& n = *now.nodes[i];
    const auto fail = [&](CUgraphExecUpdateResult r, Node* from = nullptr) {
      error.result = r;
      error.node = n.handle();
      error.from = from != nullptr ? from->handle() : nullptr;
    };
    if (o.type != n.type) {
      fail(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
      break;
    }
    if (o.deps.size() != n.deps.size()) {
      fail(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
      break;
    }
    for (Node* d : n.deps) {
      const std::size_t want = now_index.at(d);
      const bool found = std::any_of(o.deps.begin(), o.deps.end(),
                                     [&](const Node* od) { return old_index.at(od) == want; });
      if (!found) {
        fail(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, d);
        break;
      }
    }
    if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) break;
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL:
        if (o.kernel.owner != nullptr && n.kernel.owner != nullptr &&
            o.kernel.owner != n.kernel.owner) {
          fail(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE);
        }
        break;
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (memcpy_changed(s, o, n)) fail(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
        break;
      case CU_GRAPH_NODE_TYPE_MEMSET:
        if (memset_changed(s, o, n)) fail(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
        break;
      case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      case CU_GRAPH_NODE_TYPE_MEM_FREE:
        if (o.memory != n.memory) fail(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED);
        break;
      case CU_GRAPH_NODE_TYPE_GRAPH: compare(s, *o.child, *n.child, error); break;
      case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        if (o.condition_type != n.condition_type || o.bodies.size() != n.bodies.size()) {
          fail(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED);
          break;
        }
        for (std::size_t b = 0; b < n.bodies.size(); ++b) {
          if (error.result == CU_GRAPH_EXEC_UPDATE_SUCCESS) {
            compare(s, *o.bodies[b], *n.bodies[b], error);
          }
        }
        break;
      default: break;
    }
    if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS && error.node == nullptr &&
        n.type != CU_GRAPH_NODE_TYPE_GRAPH && n.type != CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      error.node = n.handle();
    }
  }
}

void copy_params(Node& to, const Node& from) {
  to.kernel = from.kernel;
  to.kernel.param_pointers.clear();
  to.copy = from.copy;
  to.copy_shape = from.copy_shape;
  to.fill = from.fill;
  to.fill_shape = from.fill_shape;
  to.ctx = from.ctx;
  to.host = from.host;
  to.event = from.event;
}

// Applies `now`'s parameters to `old` (compare() said it may).
void apply(const Graph& now, Graph& old, ExecState& exec) {
  for (std::size_t i = 0; i < now.nodes.size(); ++i) {
    Node& o = *old.nodes[i];
    const Node& n = *now.nodes[i];
    copy_params(o, n);
    if (std::find(o.origins.begin(), o.origins.end(), n.id) == o.origins.end()) {
      o.origins.push_back(n.id);
    }
    if (n.child) apply(*n.child, *o.child, exec);
    if (n.type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      // The new graph's handle stands for the executable graph's: its flags and default apply.
      std::map<CUgraphConditionalHandle, Condition> fresh;
      collect_conditions(top_graph(const_cast<Graph&>(now)), fresh);
      if (const auto it = fresh.find(n.condition); it != fresh.end()) {
        Condition& c = exec.conditions[o.condition];
        c.default_value = it->second.default_value;
        c.flags = it->second.flags;
      }
      for (std::size_t b = 0; b < n.bodies.size(); ++b) apply(*n.bodies[b], *o.bodies[b], exec);
    }
  }
}

CUresult update(State& s, CUgraphExec handle, CUgraph graph, UpdateError& error) {
  error = {};
  Exec* const e = find_exec(s, handle);
  Graph* const g = find_graph(s, graph);
  if (e == nullptr || g == nullptr || g->capturing) {
    error.result = CU_GRAPH_EXEC_UPDATE_ERROR;
    return CUDA_ERROR_INVALID_VALUE;
  }
  compare(s, *e->plan, *g, error);
  if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  auto refs = std::make_shared<HeldRefs>(all_user_refs(*g));
  retain_refs(refs->refs);
  apply(*g, writable(s, *e), *e->exec);
  e->refs = std::move(refs);  // launches in flight keep the old references
  return CUDA_SUCCESS;
}

// A node of an executable graph, by the node it was made from: the executable copy made
// writable first. CUDA_ERROR_INVALID_VALUE for a node of another type or graph.
template <class Body>
CUresult with_exec_node(Sym sym, CUgraphExec handle, CUgraphNode node, int type, Body body) {
  return call(sym, [=](State& s) -> CUresult {
    Exec* const e = find_exec(s, handle);
    const Node* const source = find_node(s, node);
    if (e == nullptr || source == nullptr || (type >= 0 && source->type != type)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (find_by_origin(*e->plan, source->id) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Node* const n = find_by_origin(writable(s, *e), source->id);
    return body(s, *e, *n);
  });
}

CUresult exec_kernel(Sym sym, CUgraphExec exec, CUgraphNode node,
                     const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  return with_exec_node(
      sym, exec, node, CU_GRAPH_NODE_TYPE_KERNEL, [=](State& s, Exec&, Node& n) -> CUresult {
        if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
        KernelArgs k;
        if (const CUresult r = make_kernel(s, *p, k)) return r;
        if (n.kernel.owner != nullptr && k.owner != nullptr && n.kernel.owner != k.owner) {
          return CUDA_ERROR_INVALID_VALUE;  // the context cannot change
        }
        n.kernel = std::move(k);
        return CUDA_SUCCESS;
      });
}

CUresult exec_set_event(Sym sym, CUgraphExec exec, CUgraphNode node, int type, CUevent event) {
  return with_exec_node(sym, exec, node, type, [=](State& s, Exec&, Node& n) -> CUresult {
    if (s.find<Event>(SWCU_EVENT, event) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    n.event = event;
    return CUDA_SUCCESS;
  });
}

CUresult exec_copy(State& s, Node& n, const CUDA_MEMCPY3D& p) {
  CopyShape shape;
  if (const CUresult r = make_copy(s, p, shape)) return r;
  Node candidate;
  candidate.copy = p;
  candidate.copy_shape = shape;
  if (shape.width == 0 || shape.height != 1 || n.copy_shape.height != 1 ||
      memcpy_changed(s, n, candidate)) {
    return CUDA_ERROR_INVALID_VALUE;  // 1D copies to the same kinds of memory only
  }
  n.copy = p;
  n.copy_shape = shape;
  return CUDA_SUCCESS;
}

CUresult exec_fill(State& s, Node& n, const CUDA_MEMSET_NODE_PARAMS& p) {
  FillShape shape;
  if (const CUresult r = make_fill(s, p, shape)) return r;
  Node candidate;
  candidate.fill = p;
  candidate.fill_shape = shape;
  if (memset_changed(s, n, candidate)) return CUDA_ERROR_INVALID_VALUE;
  n.fill = p;
  n.fill_shape = shape;
  return CUDA_SUCCESS;
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;

}  // namespace

std::size_t exec_count(std::uint64_t graph_id) noexcept {
  const auto it = exec_counts().find(graph_id);
  return it == exec_counts().end() ? 0 : it->second;
}

void reclaim_execs(State& s, Context& ctx) noexcept {
  for (const void* h : s.registry(SWCU_GRAPH_EXEC).handles_if([&ctx](const Object& o) {
         return static_cast<const Exec&>(o).ctx == &ctx;
       })) {
    s.reclaim(SWCU_GRAPH_EXEC, h);
  }
}

int set_conditional(CUgraphConditionalHandle handle, unsigned value, const char*& why) noexcept {
  State& s = state();
  const StateLock lock(s.mutex);
  Launch* const l = t_launch;
  if (l == nullptr) {
    why = "set_conditional: the calling thread runs no node of a graph launch";
    return -1;
  }
  const auto it = l->exec->values.find(handle);
  if (it == l->exec->values.end()) {
    why = "set_conditional: the graph being launched has no such conditional handle";
    return -1;
  }
  it->second = value;
  return 0;
}

}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::kLegacy;
using swcu::kPerThread;
using swcu::Lock;
using swcu::Node;
using swcu::State;
using swcu::Sym;

CUresult cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                            char* logBuffer, size_t bufferSize) {
  return call(Sym::cuGraphInstantiate, [=](State& s, Lock& lock) -> CUresult {
    if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
    return swcu::instantiate(s, lock, phGraphExec, hGraph, 0, false, nullptr, nullptr, phErrorNode);
  });
}

CUresult cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                               char* logBuffer, size_t bufferSize) {
  return call(Sym::cuGraphInstantiate_v2, [=](State& s, Lock& lock) -> CUresult {
    if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
    return swcu::instantiate(s, lock, phGraphExec, hGraph, 0, false, nullptr, nullptr, phErrorNode);
  });
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                     unsigned long long flags) {
  return call(Sym::cuGraphInstantiateWithFlags, [=](State& s, Lock& lock) -> CUresult {
    return swcu::instantiate(s, lock, phGraphExec, hGraph, flags, false, nullptr, nullptr, nullptr);
  });
}

CUresult cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  return call(Sym::cuGraphInstantiateWithParams, [=](State& s, Lock& lock) -> CUresult {
    if (instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUDA_GRAPH_INSTANTIATE_PARAMS& p = *instantiateParams;
    return swcu::instantiate(s, lock, phGraphExec, hGraph, p.flags, true, p.hUploadStream,
                             &p.result_out, &p.hErrNode_out);
  });
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec* phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  return call(Sym::cuGraphInstantiateWithParams_ptsz, [=](State& s, Lock& lock) -> CUresult {
    if (instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUDA_GRAPH_INSTANTIATE_PARAMS& p = *instantiateParams;
    CUstream upload = p.hUploadStream != nullptr ? p.hUploadStream : CU_STREAM_PER_THREAD;
    return swcu::instantiate(s, lock, phGraphExec, hGraph, p.flags, true, upload, &p.result_out,
                             &p.hErrNode_out);
  });
}

CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t* flags) {
  return call(Sym::cuGraphExecGetFlags, [=](State& s) -> CUresult {
    const swcu::Exec* const e = swcu::find_exec(s, hGraphExec);
    if (e == nullptr || flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = e->flags;
    return CUDA_SUCCESS;
  });
}

// An executable graph in flight is not stopped: its launches keep what they need.
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return call(Sym::cuGraphExecDestroy, [=](State& s) -> CUresult {
    if (swcu::find_exec(s, hGraphExec) == nullptr) return CUDA_ERROR_INVALID_VALUE;
    s.destroy(SWCU_GRAPH_EXEC, hGraphExec);
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return swcu::launch(Sym::cuGraphLaunch, kLegacy, hGraphExec, hStream);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return swcu::launch(Sym::cuGraphLaunch_ptsz, kPerThread, hGraphExec, hStream);
}

CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) {
  return swcu::upload(Sym::cuGraphUpload, kLegacy, hGraphExec, hStream);
}

CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return swcu::upload(Sym::cuGraphUpload_ptsz, kPerThread, hGraphExec, hStream);
}

CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                           CUgraphExecUpdateResult* updateResult_out) {
  return call(Sym::cuGraphExecUpdate, [=](State& s) -> CUresult {
    if (hErrorNode_out == nullptr || updateResult_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::UpdateError error;
    const CUresult r = swcu::update(s, hGraphExec, hGraph, error);
    *hErrorNode_out = error.node;
    *updateResult_out = error.result;
    return r;
  });
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                              CUgraphExecUpdateResultInfo* resultInfo) {
  return call(Sym::cuGraphExecUpdate_v2, [=](State& s) -> CUresult {
    if (resultInfo == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::UpdateError error;
    const CUresult r = swcu::update(s, hGraphExec, hGraph, error);
    resultInfo->result = error.result;
    resultInfo->errorNode = error.node;
    resultInfo->errorFromNode = error.from;
    return r;
  });
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  if (nodeParams != nullptr) std::memcpy(&p, nodeParams, sizeof *nodeParams);
  return swcu::exec_kernel(Sym::cuGraphExecKernelNodeSetParams, hGraphExec, hNode,
                           nodeParams != nullptr ? &p : nullptr);
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           const CUDA_KERNEL_NODE_PARAMS* nodeParams) {
  return swcu::exec_kernel(Sym::cuGraphExecKernelNodeSetParams_v2, hGraphExec, hNode, nodeParams);
}

CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  return swcu::with_exec_node(Sym::cuGraphExecMemcpyNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_MEMCPY,
                              [=](State& s, swcu::Exec&, Node& n) -> CUresult {
                                if (copyParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                if (ctx != nullptr && s.context(ctx) == nullptr) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                return swcu::exec_copy(s, n, *copyParams);
                              });
}

CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMSET_NODE_PARAMS* memsetParams,
                                        CUcontext ctx) {
  return swcu::with_exec_node(Sym::cuGraphExecMemsetNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_MEMSET,
                              [=](State& s, swcu::Exec&, Node& n) -> CUresult {
                                if (memsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                if (ctx != nullptr && s.context(ctx) == nullptr) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                return swcu::exec_fill(s, n, *memsetParams);
                              });
}

CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                      const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return swcu::with_exec_node(Sym::cuGraphExecHostNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_HOST,
                              [=](State&, swcu::Exec&, Node& n) -> CUresult {
                                if (nodeParams == nullptr || nodeParams->fn == nullptr) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                n.host = *nodeParams;
                                return CUDA_SUCCESS;
                              });
}

CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                            CUevent event) {
  return swcu::exec_set_event(Sym::cuGraphExecEventRecordNodeSetEvent, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_EVENT_RECORD, event);
}

CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode,
                                          CUevent event) {
  return swcu::exec_set_event(Sym::cuGraphExecEventWaitNodeSetEvent, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_WAIT_EVENT, event);
}

CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                            CUgraph childGraph) {
  return swcu::with_exec_node(Sym::cuGraphExecChildGraphNodeSetParams, hGraphExec, hNode,
                              CU_GRAPH_NODE_TYPE_GRAPH,
                              [=](State& s, swcu::Exec& e, Node& n) -> CUresult {
                                const swcu::Graph* const child = swcu::find_graph(s, childGraph);
                                if (child == nullptr) return CUDA_ERROR_INVALID_VALUE;
                                swcu::UpdateError error;
                                swcu::compare(s, *n.child, *child, error);
                                if (error.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
                                  return CUDA_ERROR_INVALID_VALUE;
                                }
                                swcu::apply(*child, *n.child, *e.exec);
                                return CUDA_SUCCESS;
                              });
}

CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                  CUgraphNodeParams* nodeParams) {
  return swcu::with_exec_node(
      Sym::cuGraphExecNodeSetParams, hGraphExec, hNode, -1,
      [=](State& s, swcu::Exec&, Node& n) -> CUresult {
        if (nodeParams == nullptr || swcu::raw(nodeParams->type) != n.type) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        CUgraphNodeParams& p = *nodeParams;
        switch (n.type) {
          case CU_GRAPH_NODE_TYPE_KERNEL: {
            CUDA_KERNEL_NODE_PARAMS_v2 k{};
            std::memcpy(&k, &p.kernel, sizeof k);
            swcu::KernelArgs args;
            if (const CUresult r = swcu::make_kernel(s, k, args)) return r;
            if (n.kernel.owner != nullptr && args.owner != nullptr &&
                n.kernel.owner != args.owner) {
              return CUDA_ERROR_INVALID_VALUE;
            }
            n.kernel = std::move(args);
            return CUDA_SUCCESS;
          }
          case CU_GRAPH_NODE_TYPE_MEMCPY: return swcu::exec_copy(s, n, p.memcpy.copyParams);
          case CU_GRAPH_NODE_TYPE_MEMSET: {
            const CUDA_MEMSET_NODE_PARAMS m{p.memset.dst,         p.memset.pitch, p.memset.value,
                                            p.memset.elementSize, p.memset.width, p.memset.height};
            return swcu::exec_fill(s, n, m);
          }
          case CU_GRAPH_NODE_TYPE_HOST:
            if (p.host.fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
            n.host = {p.host.fn, p.host.userData};
            return CUDA_SUCCESS;
          case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
          case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
            const CUevent event =
                n.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ? p.eventRecord.event : p.eventWait.event;
            if (s.find<swcu::Event>(SWCU_EVENT, event) == nullptr) return CUDA_ERROR_INVALID_VALUE;
            n.event = event;
            return CUDA_SUCCESS;
          }
          case CU_GRAPH_NODE_TYPE_EMPTY: return CUDA_SUCCESS;
          default: return CUDA_ERROR_NOT_SUPPORTED;
        }
      });
}

CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled) {
  return swcu::with_exec_node(Sym::cuGraphNodeSetEnabled, hGraphExec, hNode, -1,
                              [=](State&, swcu::Exec&, Node& n) -> CUresult {
                                n.enabled = isEnabled != 0;
                                return CUDA_SUCCESS;
                              });
}

CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int* isEnabled) {
  return call(Sym::cuGraphNodeGetEnabled, [=](State& s) -> CUresult {
    swcu::Exec* const e = swcu::find_exec(s, hGraphExec);
    const Node* const source = swcu::find_node(s, hNode);
    if (e == nullptr || source == nullptr || isEnabled == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Node* const n = swcu::find_by_origin(*e->plan, source->id);
    if (n == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *isEnabled = n->enabled ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
