// Stream capture (capture.hpp): cuStreamBeginCapture(ToGraph), cuStreamEndCapture,
// cuStreamIsCapturing, cuStreamGetCaptureInfo, cuStreamUpdateCaptureDependencies,
// cuThreadExchangeStreamCaptureMode, and the hooks the enqueueing code calls.
#include "graph/capture.hpp"

#include <algorithm>
#include <unordered_set>

#include "graph/graph_internal.hpp"
#include "graph/memop_nodes.hpp"
#include "module/module.hpp"

namespace swcu {
namespace {

// The captures in progress.
std::vector<std::shared_ptr<Capture>>& active() noexcept {
  static auto* const list = new std::vector<std::shared_ptr<Capture>>;
  return *list;
}

unsigned long long next_capture_id = 1;

CUstreamCaptureMode& thread_mode() noexcept {
  thread_local CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  return mode;
}

bool valid_mode(int mode) noexcept {
  return mode == CU_STREAM_CAPTURE_MODE_GLOBAL || mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ||
         mode == CU_STREAM_CAPTURE_MODE_RELAXED;
}

Capture::Member* member_of(Capture& c, const Queue& q) noexcept {
  for (auto& m : c.members) {
    if (m.queue == &q) return &m;
  }
  return nullptr;
}

// The capture a use of the legacy stream `q` would depend on (a blocking stream of its context
// takes part), or nullptr.
Capture* implicated(const Queue& q) noexcept {
  if (q.kind != Queue::Kind::legacy || q.ctx == nullptr) return nullptr;
  for (const auto& c : active()) {
    for (const auto& m : c->members) {
      if (m.queue->ctx == q.ctx && m.queue->blocking()) return c.get();
    }
  }
  return nullptr;
}

// Ends a capture: its streams leave it, its graph stops being captured into.
void finish(Capture& c) noexcept {
  c.ended = true;
  for (auto& m : c.members) m.queue->capture.reset();
  c.members.clear();
  if (c.graph != nullptr) c.graph->capturing = false;
  std::erase_if(active(), [&c](const std::shared_ptr<Capture>& p) { return p.get() == &c; });
}

// What a stream operation meets: no capture (go on), a capture to record into, or an error.
struct Gate {
  std::optional<CUresult> result;  ///< set: the call returns it
  Capture* capture = nullptr;      ///< set: record into this capture
  Capture::Member* member = nullptr;
};

Gate gate(Queue& q) {
  Gate g;
  if (!q.capture) {
    if (Capture* c = implicated(q)) {
      c->invalidated = true;
      g.result = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    return g;
  }
  Capture& c = *q.capture;
  if (c.invalidated) {
    g.result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return g;
  }
  g.capture = &c;
  g.member = member_of(c, q);
  return g;
}

// A capture into a conditional body records only the node kinds a body may hold
// (CUDA_CONDITIONAL_NODE_PARAMS: kernel, empty, child graph, memset, memcpy and conditional
// nodes): another kind is refused and invalidates the capture, as what a capture cannot
// represent does.
bool refused_in_body(Gate& g, int type) noexcept {
  if (check_placement(*g.capture->graph, type) == CUDA_SUCCESS) return false;
  g.capture->invalidated = true;
  return true;
}

// Adds `node` to the capture after the stream's dependency set, which it then replaces. An
// ':async' fault rule that fired on the call goes with the node: it fails the graph launches
// that run the node (exec_launch.cpp), as it would have failed the operation the call enqueues.
Node* record_node(State& s, Gate& g, std::unique_ptr<Node> node) {
  if (Fault& fault = pending_async_fault(); fault.code != 0) {
    node->fault = fault;
    fault = {};
  }
  Node* const n = add_node(s, *g.capture->graph, g.member->deps, std::move(node));
  g.member->deps.assign(1, n);
  return n;
}

std::unique_ptr<Node> new_node(int type) { return std::make_unique<Node>(type); }

// Every node of `nodes` comes before (or is) a node of `frontier`.
bool joined(const std::vector<Node*>& nodes, const std::vector<Node*>& frontier) {
  std::unordered_set<const Node*> ancestors;
  std::vector<const Node*> stack(frontier.begin(), frontier.end());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!ancestors.insert(n).second) continue;
    for (const Node* d : n->deps) stack.push_back(d);
  }
  return std::all_of(nodes.begin(), nodes.end(),
                     [&ancestors](const Node* n) { return ancestors.count(n) != 0; });
}

CUresult begin(Sym sym, NullStream null, CUstream stream, int mode, CUgraph into,
               const CUgraphNode* deps, const CUgraphEdgeData* data, std::size_t count) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (!valid_mode(mode)) return CUDA_ERROR_INVALID_VALUE;
    if (q->kind == Queue::Kind::legacy) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (q->capture) return CUDA_ERROR_INVALID_VALUE;  // already capturing
    if (Capture* c = implicated(*q)) {
      c->invalidated = true;
      return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    auto c = std::make_shared<Capture>();
    Capture::Member origin;
    origin.queue = q.get();
    if (into != nullptr) {
      Graph* const g = find_graph(s, into);
      // A program's graph or a conditional node's body: "These graphs may be populated using
      // graph node creation APIs or cuStreamBeginCaptureToGraph" (CUDA_CONDITIONAL_NODE_PARAMS,
      // phGraph_out). A child graph node's graph is not captured into.
      if (g == nullptr || g->capturing || (g->parent != nullptr && !g->is_body) ||
          (count > 0 && deps == nullptr)) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      if (data != nullptr) {
        for (std::size_t i = 0; i < count; ++i) {
          const CUgraphEdgeData zero{};
          if (std::memcmp(&data[i], &zero, sizeof zero) != 0) return CUDA_ERROR_INVALID_VALUE;
        }
      }
      if (const CUresult r = check_dependencies(*g, deps, count)) return r;
      for (std::size_t i = 0; i < count; ++i) {
        origin.deps.push_back(reinterpret_cast<Node*>(deps[i]));
      }
      c->graph = g;
      c->owns_graph = false;
    } else {
      c->graph = create_graph(s);
      c->graph->ctx = q->ctx;
    }
    active().reserve(active().size() + 1);
    c->graph->capturing = true;
    c->id = next_capture_id++;
    c->mode = mode;
    c->thread = std::this_thread::get_id();
    c->origin = q.get();
    c->members.push_back(std::move(origin));
    q->capture = c;
    active().push_back(c);
    return CUDA_SUCCESS;
  });
}

CUresult end(Sym sym, NullStream null, CUstream stream, CUgraph* out) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (out == nullptr || !q->capture) return CUDA_ERROR_INVALID_VALUE;
    const std::shared_ptr<Capture> c = q->capture;
    if (c->origin != q.get()) return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && c->thread != std::this_thread::get_id()) {
      return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    }
    CUresult result = CUDA_SUCCESS;
    if (c->invalidated) {
      result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    } else {
      const std::vector<Node*>& frontier = c->members.front().deps;
      for (std::size_t i = 1; i < c->members.size(); ++i) {
        if (!joined(c->members[i].deps, frontier)) result = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
      }
    }
    Graph* const g = c->graph;
    finish(*c);
    if (result != CUDA_SUCCESS) {
      if (c->owns_graph) destroy_graph(s, *g);
      *out = nullptr;
      return result;
    }
    *out = g->handle();
    return CUDA_SUCCESS;
  });
}

CUresult is_capturing(Sym sym, NullStream null, CUstream stream, CUstreamCaptureStatus* status) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (implicated(*q) != nullptr) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;  // not invalidated
    if (!q->capture) {
      *status = CU_STREAM_CAPTURE_STATUS_NONE;
    } else {
      *status = q->capture->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                        : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    }
    return CUDA_SUCCESS;
  });
}

struct InfoOut {
  CUstreamCaptureStatus* status = nullptr;
  cuuint64_t* id = nullptr;
  CUgraph* graph = nullptr;
  const CUgraphNode** deps = nullptr;
  const CUgraphEdgeData** data = nullptr;
  std::size_t* count = nullptr;
};

CUresult capture_info(Sym sym, NullStream null, CUstream stream, InfoOut o) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (o.status == nullptr || (o.data != nullptr && o.deps == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (implicated(*q) != nullptr) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (!q->capture) {
      *o.status = CU_STREAM_CAPTURE_STATUS_NONE;
      return CUDA_SUCCESS;
    }
    Capture& c = *q->capture;
    if (c.invalidated) {
      *o.status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
      return CUDA_SUCCESS;
    }
    *o.status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    Capture::Member& m = *member_of(c, *q);
    m.exported.clear();
    for (Node* n : m.deps) m.exported.push_back(n->handle());
    m.exported_data.assign(m.deps.size(), CUgraphEdgeData{});
    if (o.id != nullptr) *o.id = c.id;
    if (o.graph != nullptr) *o.graph = c.graph->handle();
    if (o.deps != nullptr) *o.deps = m.exported.empty() ? nullptr : m.exported.data();
    if (o.data != nullptr) *o.data = m.exported_data.empty() ? nullptr : m.exported_data.data();
    if (o.count != nullptr) *o.count = m.deps.size();
    return CUDA_SUCCESS;
  });
}

CUresult update_dependencies(Sym sym, NullStream null, CUstream stream, CUgraphNode* deps,
                             const CUgraphEdgeData* data, std::size_t count, unsigned flags) {
  return call(sym, [=](State& s) -> CUresult {
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (!q->capture) return CUDA_ERROR_ILLEGAL_STATE;
    Capture& c = *q->capture;
    if (c.invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if ((flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES &&
         flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES) ||
        (count > 0 && deps == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (data != nullptr) {
      for (std::size_t i = 0; i < count; ++i) {
        const CUgraphEdgeData zero{};
        if (std::memcmp(&data[i], &zero, sizeof zero) != 0) return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (const CUresult r = check_dependencies(*c.graph, deps, count)) return r;
    Capture::Member& m = *member_of(c, *q);
    if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) m.deps.clear();
    for (std::size_t i = 0; i < count; ++i) {
      Node* const n = reinterpret_cast<Node*>(deps[i]);
      if (std::find(m.deps.begin(), m.deps.end(), n) == m.deps.end()) m.deps.push_back(n);
    }
    return CUDA_SUCCESS;
  });
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;

}  // namespace

// ---- hooks ----

Captured capture_copy(State& s, Queue& q, bool sync, const CopyShape& shape) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  if (sync) {  // a synchronous call cannot be captured: it would have to wait
    g.capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  auto n = new_node(CU_GRAPH_NODE_TYPE_MEMCPY);
  CopyNode& copy = n->as<CopyNode>();
  copy.shape = shape;
  copy.params.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.params.srcDevice = static_cast<CUdeviceptr>(shape.src);
  copy.params.srcPitch = shape.src_pitch;
  copy.params.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.params.dstDevice = static_cast<CUdeviceptr>(shape.dst);
  copy.params.dstPitch = shape.dst_pitch;
  copy.params.WidthInBytes = shape.width;
  copy.params.Height = shape.height;
  copy.params.Depth = 1;
  copy.ctx = q.ctx != nullptr ? q.ctx->handle() : nullptr;
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_fill(State& s, Queue& q, bool sync, const FillShape& shape) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  if (sync) {
    g.capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  auto n = new_node(CU_GRAPH_NODE_TYPE_MEMSET);
  FillNode& fill = n->as<FillNode>();
  fill.shape = shape;
  fill.params.dst = static_cast<CUdeviceptr>(shape.dst);
  fill.params.pitch = shape.pitch;
  fill.params.value = shape.value;
  fill.params.elementSize = shape.element_size;
  fill.params.width = shape.width;
  fill.params.height = shape.height;
  fill.ctx = q.ctx != nullptr ? q.ctx->handle() : nullptr;
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_host_function(State& s, Queue& q, CUhostFn fn, void* data) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  if (refused_in_body(g, CU_GRAPH_NODE_TYPE_HOST)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  auto n = new_node(CU_GRAPH_NODE_TYPE_HOST);
  n->as<HostNode>().params = {fn, data};
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_kernel(State& s, Queue& q, CUfunction f, const swcu_launch& launch) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  auto n = new_node(CU_GRAPH_NODE_TYPE_KERNEL);
  KernelNode& k = n->as<KernelNode>();
  k.func = f;
  if (const Function* fn = find_function(s, f)) k.owner = fn->module->ctx;
  std::copy(launch.grid, launch.grid + 3, k.grid.begin());
  std::copy(launch.block, launch.block + 3, k.block.begin());
  k.shared = launch.shared_bytes;
  k.name = launch.kernel;
  if (launch.param_count > 0) {
    k.offsets.assign(launch.param_offsets, launch.param_offsets + launch.param_count);
    k.sizes.assign(launch.param_sizes, launch.param_sizes + launch.param_count);
  }
  if (launch.params_size > 0) k.params.assign(launch.params, launch.params + launch.params_size);
  k.from_extra = launch.param_count == 0 && launch.params_size > 0;
  k.cooperative = launch.cooperative != 0;
  std::copy(launch.cluster, launch.cluster + 3, k.cluster.begin());
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_alloc(State& s, Queue& q, std::size_t bytes, int device, CUdeviceptr* out) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  if (refused_in_body(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC)) {
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  auto n = new_node(CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  auto memory = new_graph_memory(s, bytes, device);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  memory->params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  memory->params.poolProps.location = {CU_MEM_LOCATION_TYPE_DEVICE, device};
  memory->params.bytesize = bytes;
  memory->params.dptr = memory->address();
  *out = memory->address();
  n->as<AllocNode>().memory = std::move(memory);
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_free(State& s, Queue& q, CUdeviceptr address) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  if (refused_in_body(g, CU_GRAPH_NODE_TYPE_MEM_FREE)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  auto n = new_node(CU_GRAPH_NODE_TYPE_MEM_FREE);
  if (const CUresult r = make_free(*g.capture->graph, address, n->as<FreeNode>())) return r;
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_graph(State& s, Queue& q, const Graph& plan) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  auto n = new_node(CU_GRAPH_NODE_TYPE_GRAPH);
  std::unique_ptr<Graph> child;
  if (make_child(s, plan, child) != CUDA_SUCCESS ||
      (in_body(*g.capture->graph) && !only_body_types(*child))) {
    g.capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  attach_child(*n, std::move(child));
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_memops(State& s, Queue& q, const std::vector<MemOp>& ops) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  if (refused_in_body(g, CU_GRAPH_NODE_TYPE_BATCH_MEM_OP)) {
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  auto n = new_node(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
  set_captured_memops(*n, q.ctx != nullptr ? q.ctx->handle() : nullptr, ops);
  record_node(s, g, std::move(n));
  return CUDA_SUCCESS;
}

Captured capture_nodes(State& s, Queue& q, bool sync, const MakeNodes& make) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  std::vector<std::unique_ptr<Node>> nodes;
  const CUresult made = sync ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : make(nodes);
  if (made != CUDA_SUCCESS) {
    g.capture->invalidated = true;
    return made;
  }
  for (const auto& n : nodes) {
    if (refused_in_body(g, n->type)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  const std::vector<Node*> before = g.member->deps;
  std::vector<Node*> added;
  for (auto& n : nodes) {
    g.member->deps = before;
    added.push_back(record_node(s, g, std::move(n)));
  }
  g.member->deps = added.empty() ? before : added;
  return CUDA_SUCCESS;
}

Captured capture_refused(State&, Queue& q) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // the capture stays valid
}

Captured capture_other(State&, Queue& q) {
  Gate g = gate(q);
  if (!g.capture) return g.result;
  g.capture->invalidated = true;
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

Captured capture_record(State& s, Queue& q, Event& e, unsigned flags) {
  Gate g = gate(q);
  if (!g.capture) {
    if (!g.result) e.captured.reset();  // an ordinary record follows
    return g.result;
  }
  if (flags == CU_EVENT_RECORD_EXTERNAL) {
    if (refused_in_body(g, CU_GRAPH_NODE_TYPE_EVENT_RECORD)) {
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    auto n = new_node(CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    n->as<EventNode>().event = reinterpret_cast<CUevent>(&e);
    record_node(s, g, std::move(n));
    return CUDA_SUCCESS;
  }
  if (flags != CU_EVENT_RECORD_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  auto record = std::make_shared<CapturedRecord>();
  record->capture = q.capture;
  record->nodes = g.member->deps;
  e.captured = std::move(record);
  return CUDA_SUCCESS;
}

Captured capture_wait(State& s, Queue& q, const Event& e, unsigned flags) {
  if (flags != CU_EVENT_WAIT_DEFAULT && flags != CU_EVENT_WAIT_EXTERNAL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (e.captured) {
    const std::shared_ptr<Capture> c = e.captured->capture.lock();
    if (!c || c->ended) return CUDA_ERROR_CAPTURED_EVENT;  // recorded by a finished capture
    if (c->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (q.capture && q.capture != c) {
      c->invalidated = true;
      q.capture->invalidated = true;
      return CUDA_ERROR_STREAM_CAPTURE_MERGE;
    }
    if (q.kind == Queue::Kind::legacy) {
      c->invalidated = true;
      return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    if (!q.capture) {  // the stream joins the capture (cross-stream capture)
      Capture::Member m;
      m.queue = &q;
      m.deps = e.captured->nodes;
      c->members.push_back(std::move(m));
      q.capture = c;
      return CUDA_SUCCESS;
    }
    Capture::Member& m = *member_of(*c, q);
    for (Node* n : e.captured->nodes) {
      if (std::find(m.deps.begin(), m.deps.end(), n) == m.deps.end()) m.deps.push_back(n);
    }
    return CUDA_SUCCESS;
  }
  Gate g = gate(q);
  if (!g.capture) {
    if (!g.result && flags != CU_EVENT_WAIT_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
    return g.result;
  }
  if (flags == CU_EVENT_WAIT_EXTERNAL) {
    if (refused_in_body(g, CU_GRAPH_NODE_TYPE_WAIT_EVENT)) {
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    auto n = new_node(CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    n->as<EventNode>().event = reinterpret_cast<CUevent>(const_cast<Event*>(&e));
    record_node(s, g, std::move(n));
    return CUDA_SUCCESS;
  }
  if (!e.recorded) return CUDA_SUCCESS;  // never recorded: no dependency
  g.capture->invalidated = true;         // a dependency on work outside the capture
  return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
}

CUresult capture_sync_check(State&, Queue& q) {
  if (q.capture) {
    q.capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (Capture* c = implicated(q)) {
    c->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  }
  return CUDA_SUCCESS;
}

CUresult captured_event_check(State&, const Event& e) {
  if (!e.captured) return CUDA_SUCCESS;
  if (const std::shared_ptr<Capture> c = e.captured->capture.lock(); c && !c->ended) {
    c->invalidated = true;
  }
  return CUDA_ERROR_CAPTURED_EVENT;
}

CUresult captured_event_wait_check(State&, const Event& e) {
  if (!e.captured) return CUDA_SUCCESS;
  if (const std::shared_ptr<Capture> c = e.captured->capture.lock(); c && !c->ended) {
    c->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return CUDA_ERROR_CAPTURED_EVENT;
}

// A forked stream whose work has joined back into the origin stream (every node of its
// dependency set precedes the origin's) leaves the capture when it is destroyed, which goes on:
// the real driver keeps such a capture active and cuStreamEndCapture succeeds with the forked
// work in the graph. The driver API reference does not say what destroying a forked stream
// that has not joined does (cuStreamDestroy, "Stream Capture" in the programming guide); this
// driver invalidates the capture then, since its unjoined work could never join.
void capture_stream_destroyed(State& s, Queue& q) noexcept {
  if (!q.capture) return;
  const std::shared_ptr<Capture> c = q.capture;
  if (c->origin == &q) {
    c->invalidated = true;
    Graph* const g = c->graph;
    finish(*c);
    if (c->owns_graph) destroy_graph(s, *g);
    return;
  }
  const Capture::Member* const m = member_of(*c, q);
  bool is_joined = false;
  try {
    is_joined = m != nullptr && joined(m->deps, c->members.front().deps);
  } catch (...) {  // out of memory while walking the graph: as if not joined
  }
  if (!is_joined) c->invalidated = true;
  std::erase_if(c->members, [&q](const Capture::Member& member) { return member.queue == &q; });
  q.capture.reset();
}

void reclaim_captures(State& s, Context& ctx) noexcept {
  std::vector<std::shared_ptr<Capture>> ending;
  for (const auto& c : active()) {
    // A capture into a graph the context owns (a body of one included) ends with it too.
    bool ends = c->graph != nullptr && top_graph(*c->graph).ctx == &ctx;
    for (const auto& m : c->members) ends = ends || m.queue->ctx == &ctx;
    if (ends) ending.push_back(c);
  }
  for (const auto& c : ending) {
    Graph* const g = c->graph;
    finish(*c);
    if (c->owns_graph && g->ctx != &ctx) destroy_graph(s, *g);  // else reclaimed with it
  }
}

}  // namespace swcu

extern "C" {

using swcu::kLegacy;
using swcu::kPerThread;
using swcu::Sym;

CUresult cuStreamBeginCapture(CUstream hStream) {
  return swcu::begin(Sym::cuStreamBeginCapture, kLegacy, hStream, CU_STREAM_CAPTURE_MODE_GLOBAL,
                     nullptr, nullptr, nullptr, 0);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream) {
  return swcu::begin(Sym::cuStreamBeginCapture_ptsz, kPerThread, hStream,
                     CU_STREAM_CAPTURE_MODE_GLOBAL, nullptr, nullptr, nullptr, 0);
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  return swcu::begin(Sym::cuStreamBeginCapture_v2, kLegacy, hStream, swcu::raw(mode), nullptr,
                     nullptr, nullptr, 0);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return swcu::begin(Sym::cuStreamBeginCapture_v2_ptsz, kPerThread, hStream, swcu::raw(mode),
                     nullptr, nullptr, nullptr, 0);
}

CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                     const CUgraphNode* dependencies,
                                     const CUgraphEdgeData* dependencyData, size_t numDependencies,
                                     CUstreamCaptureMode mode) {
  if (hGraph == nullptr) {
    return swcu::call(Sym::cuStreamBeginCaptureToGraph,
                      [](swcu::State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  return swcu::begin(Sym::cuStreamBeginCaptureToGraph, kLegacy, hStream, swcu::raw(mode), hGraph,
                     dependencies, dependencyData, numDependencies);
}

CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                          const CUgraphNode* dependencies,
                                          const CUgraphEdgeData* dependencyData,
                                          size_t numDependencies, CUstreamCaptureMode mode) {
  if (hGraph == nullptr) {
    return swcu::call(Sym::cuStreamBeginCaptureToGraph_ptsz,
                      [](swcu::State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  return swcu::begin(Sym::cuStreamBeginCaptureToGraph_ptsz, kPerThread, hStream, swcu::raw(mode),
                     hGraph, dependencies, dependencyData, numDependencies);
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return swcu::end(Sym::cuStreamEndCapture, kLegacy, hStream, phGraph);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  return swcu::end(Sym::cuStreamEndCapture_ptsz, kPerThread, hStream, phGraph);
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return swcu::is_capturing(Sym::cuStreamIsCapturing, kLegacy, hStream, captureStatus);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return swcu::is_capturing(Sym::cuStreamIsCapturing_ptsz, kPerThread, hStream, captureStatus);
}

CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                cuuint64_t* id_out) {
  return swcu::capture_info(Sym::cuStreamGetCaptureInfo, kLegacy, hStream,
                            {captureStatus_out, id_out});
}

CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                     cuuint64_t* id_out) {
  return swcu::capture_info(Sym::cuStreamGetCaptureInfo_ptsz, kPerThread, hStream,
                            {captureStatus_out, id_out});
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                   cuuint64_t* id_out, CUgraph* graph_out,
                                   const CUgraphNode** dependencies_out,
                                   size_t* numDependencies_out) {
  return swcu::capture_info(
      Sym::cuStreamGetCaptureInfo_v2, kLegacy, hStream,
      {captureStatus_out, id_out, graph_out, dependencies_out, nullptr, numDependencies_out});
}

CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                        cuuint64_t* id_out, CUgraph* graph_out,
                                        const CUgraphNode** dependencies_out,
                                        size_t* numDependencies_out) {
  return swcu::capture_info(
      Sym::cuStreamGetCaptureInfo_v2_ptsz, kPerThread, hStream,
      {captureStatus_out, id_out, graph_out, dependencies_out, nullptr, numDependencies_out});
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                   cuuint64_t* id_out, CUgraph* graph_out,
                                   const CUgraphNode** dependencies_out,
                                   const CUgraphEdgeData** edgeData_out,
                                   size_t* numDependencies_out) {
  return swcu::capture_info(
      Sym::cuStreamGetCaptureInfo_v3, kLegacy, hStream,
      {captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out});
}

CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                        cuuint64_t* id_out, CUgraph* graph_out,
                                        const CUgraphNode** dependencies_out,
                                        const CUgraphEdgeData** edgeData_out,
                                        size_t* numDependencies_out) {
  return swcu::capture_info(
      Sym::cuStreamGetCaptureInfo_v3_ptsz, kPerThread, hStream,
      {captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out});
}

CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode* dependencies,
                                           size_t numDependencies, unsigned int flags) {
  return swcu::update_dependencies(Sym::cuStreamUpdateCaptureDependencies, kLegacy, hStream,
                                   dependencies, nullptr, numDependencies, flags);
}

CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream hStream, CUgraphNode* dependencies,
                                                size_t numDependencies, unsigned int flags) {
  return swcu::update_dependencies(Sym::cuStreamUpdateCaptureDependencies_ptsz, kPerThread, hStream,
                                   dependencies, nullptr, numDependencies, flags);
}

CUresult cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode* dependencies,
                                              const CUgraphEdgeData* dependencyData,
                                              size_t numDependencies, unsigned int flags) {
  return swcu::update_dependencies(Sym::cuStreamUpdateCaptureDependencies_v2, kLegacy, hStream,
                                   dependencies, dependencyData, numDependencies, flags);
}

CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream hStream, CUgraphNode* dependencies,
                                                   const CUgraphEdgeData* dependencyData,
                                                   size_t numDependencies, unsigned int flags) {
  return swcu::update_dependencies(Sym::cuStreamUpdateCaptureDependencies_v2_ptsz, kPerThread,
                                   hStream, dependencies, dependencyData, numDependencies, flags);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  return swcu::call(Sym::cuThreadExchangeStreamCaptureMode, [=](swcu::State&) -> CUresult {
    if (mode == nullptr || !swcu::valid_mode(swcu::raw(*mode))) return CUDA_ERROR_INVALID_VALUE;
    std::swap(*mode, swcu::thread_mode());
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
