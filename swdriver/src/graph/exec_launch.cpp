// Launching executable graphs (graph.hpp, exec_internal.hpp): cuGraphLaunch, cuGraphUpload, the
// nodes run by a launch, and set_conditional (the control API).
//
// A launch runs the nodes of the executable copy one after another in a topological order
// (launch_order: child graphs inlined, nodes that wait as late as possible). Nodes that wait for
// something outside the launch (event waits, external semaphore waits, memory operations) each
// become a stream operation of their own, which the scheduler holds back until the wait is
// over while other streams go on; the nodes between them run in segments, one stream operation
// each: a callback (so it also runs, with the error as its status, when its context is broken,
// and then stops the launch) that runs its nodes on the thread that drives the scheduler,
// without the state lock, as host functions run, taking the lock for each node that needs the
// driver's state. Each event record node completes an event record of its own when it runs. A
// segment costs one operation on the simulated clock (1 us) plus the bytes its copies and
// memsets move: a graph without waits shares one launch overhead among its nodes.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "core/config.hpp"
#include "exec/interpret.hpp"
#include "exec/launch.hpp"
#include "exec/memops.hpp"
#include "graph/capture.hpp"
#include "graph/device_launch.hpp"
#include "graph/exec_internal.hpp"
#include "graph/ext_semaphore_nodes.hpp"
#include "memory/memory.hpp"

namespace swcu {
namespace {

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
  bool node_priority = false;  ///< CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY
  std::vector<std::pair<const Node*, std::shared_ptr<Completion>>> records;
  std::vector<GraphMemory*> auto_free;  ///< AUTO_FREE_ON_LAUNCH: freed when it starts
  bool started = false;                 ///< its first segment ran (begin())
  bool stopped = false;                 ///< a node failed or the context broke: nothing more runs
  std::shared_ptr<DeviceEnv> env;       ///< its execution environment (device_launch.hpp)
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

// A copy node, run by `device` (the launching stream's): pool memory it may not access faults.
CUresult run_copy(State& s, int device, const CopyShape& c) {
  if (c.width == 0) return CUDA_SUCCESS;
  const std::size_t dst_span = (c.height - 1) * c.dst_pitch + c.width;
  const std::size_t src_span = (c.height - 1) * c.src_pitch + c.width;
  if (!still_there(s, c.dst, dst_span) || !still_there(s, c.src, src_span) ||
      !device_may_access(s, device, c.dst, dst_span, true) ||
      !device_may_access(s, device, c.src, src_span, false)) {
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  for (std::size_t row = 0; row < c.height; ++row) {
    std::memmove(reinterpret_cast<void*>(c.dst + row * c.dst_pitch),
                 reinterpret_cast<const void*>(c.src + row * c.src_pitch), c.width);
  }
  return CUDA_SUCCESS;
}

CUresult run_fill(State& s, int device, const FillShape& f) {
  const std::size_t row = f.width * f.element_size;
  if (!still_there(s, f.dst, (f.height - 1) * f.pitch + row) ||
      find_allocation(s, f.dst) == nullptr ||
      !device_may_access(s, device, f.dst, (f.height - 1) * f.pitch + row, true)) {
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
RunDeviceGraph device_runner(Launch& l);

// A kernel node without a registered host function: its PTX, under the lock.
bool run_interpreted(State& s, Launch& l, const KernelNode& k, const swcu_launch& v) {
  Queue& q = *l.queue;
  LaunchSpec spec;
  spec.kernel = k.name;
  spec.grid = k.grid;
  spec.block = k.block;
  spec.shared_bytes = k.shared;
  spec.cooperative = k.cooperative;
  spec.cluster = k.cluster;
  spec.explicit_cluster = k.cluster[0] * k.cluster[1] * k.cluster[2] > 1;
  spec.priority = v.priority;
  spec.stream = v.stream;
  spec.sm_count = q.ctx->sm_count;  // a green context's partition
  spec.offsets = k.offsets;
  spec.sizes = k.sizes;
  spec.params = k.params;
  log_launch(spec);
  // The kernel's cudaGraphSetConditional calls set this launch's values (the state lock is held
  // by this thread while the interpreter's workers run).
  const ConditionSetter set = [&l](CUgraphConditionalHandle handle, unsigned value,
                                   std::string& why) {
    const auto it = l.exec->values.find(handle);
    if (it == l.exec->values.end()) {
      why = "the graph being launched has no such conditional handle";
      return false;
    }
    it->second = value;
    return true;
  };
  const CUresult r = interpret_now(s, *q.ctx, k.func, spec, set, device_graph_calls(*l.env));
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
  if (n.fault.code != 0) {      // captured from a call an ':async' fault rule fired on
    // As the scheduler fails an operation with an ':async' fault: the stream's asynchronous
    // error, breaking the context only for ':sticky' (whatever the code).
    const auto code = static_cast<CUresult>(n.fault.code);
    if (!q.error || q.error->reported) q.error = std::make_shared<AsyncError>(AsyncError{code});
    if (n.fault.sticky && q.ctx->sticky_error == CUDA_SUCCESS) q.ctx->sticky_error = code;
    return false;
  }
  Device& dev = s.devices[static_cast<std::size_t>(q.device)];
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_EMPTY:
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return true;  // its own operation, when it must wait
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      for (auto& [node, c] : l.records) {
        if (node == &n && !c->done) {
          c->time_ns = event_time_ns(dev.clock_ns);
          c->done = true;
          c->queue = nullptr;
          s.progress.notify_all();
        }
      }
      return true;
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      const CopyShape& c = n.as<CopyNode>().shape;
      const auto& general = n.as<CopyNode>().general;  // arrays, several slices (copy_nodes.hpp)
      const CUresult r = general ? run_copy_3d(s, *general, q.device) : run_copy(s, q.device, c);
      dev.clock_ns += (general ? general->bytes() : c.width * c.height) / kBytesPerNs;
      if (r != CUDA_SUCCESS) fail(q, r);
      return r == CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const FillShape& f = n.as<FillNode>().shape;
      const CUresult r = run_fill(s, q.device, f);
      dev.clock_ns += f.width * f.element_size * f.height / kBytesPerNs;
      if (r != CUDA_SUCCESS) fail(q, r);
      return r == CUDA_SUCCESS;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      if (GraphMemory* const m = n.memory()) m->allocation->stage = Allocation::Stage::live;
      return true;
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      if (GraphMemory* const m = n.memory()) {
        m->allocation->stage = Allocation::Stage::pending;
        m->outstanding = false;
      }
      return true;
    case CU_GRAPH_NODE_TYPE_HOST: {
      const CUDA_HOST_NODE_PARAMS host = n.as<HostNode>().params;
      lock.unlock();
      host.fn(host.userData);
      return true;
    }
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const KernelNode& k = n.as<KernelNode>();
      swcu_launch v{};
      v.kernel = k.name.c_str();
      std::copy(k.grid.begin(), k.grid.end(), v.grid);
      std::copy(k.block.begin(), k.block.end(), v.block);
      v.cluster[0] = v.cluster[1] = v.cluster[2] = 1;
      v.shared_bytes = k.shared;
      v.cooperative = k.cooperative ? 1 : 0;
      v.priority = l.node_priority ? k.priority : l.priority;
      v.stream = l.stream;
      v.param_count = k.offsets.size();
      v.param_offsets = k.offsets.data();
      v.param_sizes = k.sizes.data();
      v.params = k.params.data();
      v.params_size = k.params.size();
      if (!has_host_function(k.name)) {
        if (!run_interpreted(s, l, k, v)) return false;
        lock.unlock();
        return run_fired(*l.env, device_runner(l));  // the kernel's fire-and-forget launches
      }
      lock.unlock();  // the plan cannot change while the launch holds it
      run_kernel_now(v);
      return true;
    }
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: run_ext_semaphores(n); return true;
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:  // writes and fences (waits are operations of their own)
      for (const MemOp& m : n.as<MemOpNode>().ops) {
        const CUresult r = run_memop(s, q.device, m);
        if (r != CUDA_SUCCESS) {
          fail(q, r);
          return false;
        }
      }
      return true;
    case CU_GRAPH_NODE_TYPE_GRAPH: lock.unlock(); return run_level(l, *n.as<ChildNode>().graph);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
      lock.unlock();
      const ConditionalNode& c = n.as<ConditionalNode>();
      switch (c.type) {
        case CU_GRAPH_COND_TYPE_IF: {
          const unsigned v = condition_value(l, c.handle);
          if (v != 0) return run_level(l, *c.bodies[0]);
          return c.bodies.size() < 2 || run_level(l, *c.bodies[1]);
        }
        case CU_GRAPH_COND_TYPE_WHILE:
          while (condition_value(l, c.handle) != 0) {
            if (!run_level(l, *c.bodies[0])) return false;
          }
          return true;
        default: {
          const unsigned v = condition_value(l, c.handle);
          return v >= c.bodies.size() || run_level(l, *c.bodies[v]);
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

// Whether `n` holds back what follows it until something outside the launch happens: an event
// wait, an external semaphore wait, a batch of memory operations with a wait (a node that fails
// with a captured fault does not: it runs in a segment, and fails there). A child graph holds
// back when a node in it does.
bool waits(const Node& n) {
  if (!n.enabled || n.fault.code != 0) return false;
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return true;
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
      const auto& ops = n.as<MemOpNode>().ops;
      return std::any_of(ops.begin(), ops.end(), [](const MemOp& m) { return is_wait(m); });
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      const Graph& child = *n.as<ChildNode>().graph;
      return std::any_of(child.order.begin(), child.order.end(),
                         [](const Node* c) { return waits(*c); });
    }
    default: return false;
  }
}

// The nodes of `g` in the order a launch runs them, child graphs inlined: a topological order in
// which a node that waits comes as late as its dependents allow (ties by the level's order), so
// that what the graph itself does to release a wait runs before it.
void launch_order(const Graph& g, std::vector<Node*>& out) {
  std::map<const Node*, std::size_t> position, missing;
  for (std::size_t i = 0; i < g.order.size(); ++i) {
    position[g.order[i]] = i;
    missing[g.order[i]] = g.order[i]->deps.size();
  }
  // Ready nodes by (waits, position): the smallest runs next.
  std::set<std::pair<bool, std::size_t>> ready;
  for (const Node* n : g.order) {
    if (n->deps.empty()) ready.emplace(waits(*n), position[n]);
  }
  while (!ready.empty()) {
    Node* const n = g.order[ready.begin()->second];
    ready.erase(ready.begin());
    if (n->type == CU_GRAPH_NODE_TYPE_GRAPH && n->enabled) {
      launch_order(*n->as<ChildNode>().graph, out);
    } else {
      out.push_back(n);
    }
    for (const Node* d : n->dependents) {
      if (--missing[d] == 0) ready.emplace(waits(*d), position[d]);
    }
  }
}

// The launch has begun: AUTO_FREE_ON_LAUNCH memory goes, conditions take their defaults.
void begin(Launch& l) {
  const StateLock lock(state().mutex);
  if (l.started) return;
  l.started = true;
  for (GraphMemory* m : l.auto_free) {
    m->allocation->stage = Allocation::Stage::pending;
    m->outstanding = false;
  }
  for (const auto& [handle, c] : l.exec->conditions) {
    if ((c.flags & CU_GRAPH_COND_ASSIGN_DEFAULT) != 0) l.exec->values[handle] = c.default_value;
  }
}

// Runs a graph `l`'s kernels launched from the device (device_launch.hpp), in `l`'s stream.
RunDeviceGraph device_runner(Launch& l) {
  return [&l](DeviceLaunch& d, DeviceEnv& env) {
    Launch child;
    child.plan = d.plan;
    child.refs = d.refs;
    child.exec = d.exec;
    child.queue = l.queue;
    child.stream = l.stream;
    child.priority = l.priority;
    child.node_priority = (d.flags & CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY) != 0;
    child.env = std::shared_ptr<DeviceEnv>(std::shared_ptr<DeviceEnv>{}, &env);  // not owned
    return run_level(child, *child.plan);
  };
}

// Nodes a launch runs in one stream operation, one after another.
struct Segment {
  std::shared_ptr<Launch> launch;
  std::vector<Node*> nodes;
  bool closing = false;  ///< the launch's last operation
};

// The stream operation of a segment: a callback, so it also runs (with the error as its
// status) when its context is broken, and then stops the launch.
void CUDA_CB run_segment(CUstream, CUresult status, void* data) {
  const Segment& segment = *static_cast<Segment*>(data);
  Launch& l = *segment.launch;
  if (status != CUDA_SUCCESS || l.stopped) {
    l.stopped = true;
    return;
  }
  begin(l);
  Launch* const outer = t_launch;
  t_launch = &l;
  for (Node* n : segment.nodes) {
    if (!run_node(l, *n)) {
      l.stopped = true;
      break;
    }
  }
  // The launch's end: the graphs its kernels tail-launched (device_launch.hpp).
  if (segment.closing && !l.stopped) (void)run_tails(*l.env, device_runner(l));
  t_launch = outer;
}

// Builds the stream operations of a launch (segments of nodes, and an operation for each node
// that waits) and pushes them to `q`, the first after `previous` (the executable graph's last
// launch: one runs at a time).
class StepBuilder {
 public:
  StepBuilder(State& s, std::shared_ptr<Launch> l, Queue& q, CUstream stream,
              std::shared_ptr<Completion> previous)
      : s_(s), l_(std::move(l)), q_(q), stream_(stream), after_(std::move(previous)) {}

  void add(Node& n) {
    if (!n.enabled) return;  // a disabled node acts as an empty node
    if (n.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) record(n);
    if (!waits(n)) {
      nodes_.push_back(&n);
      return;
    }
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_WAIT_EVENT: wait_event(n); break;
      case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: wait_semaphores(n); break;
      default: memops(n); break;
    }
  }

  // Pushes the closing segment (a launch ends in one) and returns its completion.
  std::shared_ptr<Completion> finish() {
    segment(true, true);
    return last_;
  }

 private:
  // Pushes the segment of the nodes gathered so far (an empty one only when `always`).
  void segment(bool always, bool closing = false) {
    if (nodes_.empty() && !always) return;
    auto seg = std::make_shared<Segment>();
    seg->launch = l_;
    seg->closing = closing;
    seg->nodes = std::move(nodes_);
    nodes_.clear();
    Op op;
    op.kind = OpKind::callback;
    op.callback = &run_segment;
    op.stream_handle = stream_;
    op.user_data = seg.get();
    op.work = [seg](State&) { return CUDA_SUCCESS; };  // not run: it owns the segment
    push_op(std::move(op));
  }

  void push_op(Op op) {
    if (last_ == nullptr && after_ && !after_->done) op.deps.push_back(after_);
    last_ = push(s_, q_, std::move(op));
  }

  // An event record node completes a record of its own when it runs (run_node).
  void record(const Node& n) {
    Event* const e = event_of(n);
    if (e == nullptr) return;
    auto c = std::make_shared<Completion>();
    c->queue = &q_;
    c->device = q_.device;
    l_->records.emplace_back(&n, c);
    e->recorded = c;
    e->captured.reset();
  }

  // An event wait: what follows waits for the event's last record, unless this launch makes it.
  void wait_event(const Node& n) {
    Event* const e = event_of(n);
    if (e == nullptr || !e->recorded || e->recorded->done) return;
    const bool own = std::any_of(l_->records.begin(), l_->records.end(),
                                 [&e](const auto& r) { return r.second == e->recorded; });
    if (own) return;  // this launch's own records come in order
    segment(false);
    Op op;
    op.kind = OpKind::wait;
    op.deps.push_back(e->recorded);
    push_op(std::move(op));
  }

  // An external semaphore wait node: ready once every semaphore's condition holds; a binary
  // wait takes the signal when it runs.
  void wait_semaphores(const Node& n) {
    segment(false);
    Op op = blocking_op();
    op.ready = [l = l_, &n](State&) { return l->stopped || semaphores_ready(n); };
    op.work = [l = l_, &n](State&) {
      if (!l->stopped) run_ext_semaphores(n);
      return CUDA_SUCCESS;
    };
    push_op(std::move(op));
  }

  // A batch of memory operations: one stream operation each, as cuStreamBatchMemOp makes.
  void memops(const Node& n) {
    segment(false);
    const int device = q_.device;
    for (const MemOp& m : n.as<MemOpNode>().ops) {
      Op op = blocking_op();
      if (is_wait(m)) {
        op.ready = [l = l_, m, device](State& s) {
          return l->stopped || memop_ready(s, device, m);
        };
      }
      op.work = [l = l_, m, device](State& s) {
        if (l->stopped) return CUDA_SUCCESS;
        const CUresult r = run_memop(s, device, m);
        if (r != CUDA_SUCCESS) l->stopped = true;
        return r;
      };
      push_op(std::move(op));
    }
  }

  // Device work of the launch that begins it when it runs first; not run (a broken context),
  // it stops the launch.
  Op blocking_op() {
    Op op;
    op.kind = OpKind::work;
    op.not_run = [l = l_](State&) { l->stopped = true; };
    return op;
  }

  Event* event_of(const Node& n) {
    const CUevent handle = n.as<EventNode>().event;
    return handle != nullptr ? s_.find<Event>(SWCU_EVENT, handle) : nullptr;
  }

  State& s_;
  std::shared_ptr<Launch> l_;
  Queue& q_;
  CUstream stream_;
  std::vector<Node*> nodes_;
  std::shared_ptr<Completion> after_;
  std::shared_ptr<Completion> last_;
};

CUresult launch(Sym sym, NullStream null, CUgraphExec handle, CUstream stream) {
  return call_async(sym, [=](State& s, Lock& lock) -> CUresult {
    Exec* const e = find_exec(s, handle);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<Queue> q;
    if (const CUresult r = resolve_stream(s, stream, null, q)) return r;
    if (const auto r = capture_graph(s, *q, *e->plan)) return *r;
    auto l = std::make_shared<Launch>();
    for (const auto& n : e->plan->nodes) {
      GraphMemory* const m = n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ? n->memory() : nullptr;
      if (m == nullptr || !m->outstanding) continue;
      if ((e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) == 0) {
        return CUDA_ERROR_INVALID_VALUE;  // the previous launch's allocation is still there
      }
      l->auto_free.push_back(m);
    }
    l->plan = e->plan;
    l->refs = e->refs;
    l->exec = e->exec;
    l->queue = q.get();
    l->stream = stream;
    l->priority = q->priority;
    l->node_priority = (e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY) != 0;
    l->env = host_environment(*e, handle);
    std::vector<Node*> order;
    launch_order(*l->plan, order);
    StepBuilder steps(s, l, *q, stream, e->last);
    for (Node* n : order) steps.add(*n);
    e->last = steps.finish();
    map_graph_memory(*e->plan, e->last);
    for (const auto& n : e->plan->nodes) {
      GraphMemory* const m = n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ? n->memory() : nullptr;
      if (m != nullptr && !m->freed_in_owner) m->outstanding = true;
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
    map_graph_memory(*e->plan, e->last);  // an upload maps the graph's memory
    kick(s, lock);
    return CUDA_SUCCESS;
  });
}

constexpr NullStream kLegacy = NullStream::legacy;
constexpr NullStream kPerThread = NullStream::per_thread;

}  // namespace

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

using swcu::kLegacy;
using swcu::kPerThread;
using swcu::Sym;

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

}  // extern "C"
