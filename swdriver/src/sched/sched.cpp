#include "sched/sched.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/config.hpp"

namespace swcu {
namespace {

// Sets the host-function flag of the calling thread for its lifetime.
class HostFunctionScope {
 public:
  HostFunctionScope() noexcept { in_host_function() = true; }
  ~HostFunctionScope() { in_host_function() = false; }
  HostFunctionScope(const HostFunctionScope&) = delete;
  HostFunctionScope& operator=(const HostFunctionScope&) = delete;
};

// Calls a host function or callback. An exception escaping it (through the C ABI) ends the
// process, as it would on a driver thread.
void invoke(CUhostFn fn, CUstreamCallback callback, CUstream handle, CUresult status,
            void* data) noexcept {
  const HostFunctionScope scope;
  if (callback != nullptr) {
    callback(handle, status, data);
  } else {
    fn(data);
  }
}

// A stream memory wait at the head of its queue whose condition does not hold yet.
bool value_pending(State& s, const Op& head) { return head.ready && !head.ready(s); }

bool runnable(State& s, const Queue& q) {
  if (q.running || q.ops.empty()) return false;
  const Op& head = q.ops.front();
  return std::all_of(head.deps.begin(), head.deps.end(),
                     [](const std::shared_ptr<Completion>& d) { return d->done; }) &&
         !value_pending(s, head);
}

void remove_queue(Context& ctx, const Queue& q) noexcept {
  std::erase_if(ctx.queues, [&q](const std::shared_ptr<Queue>& p) { return p.get() == &q; });
}

// Marks the head of `q` done (with `error` as its asynchronous error) and advances the clock.
void complete(State& s, Queue& q, CUresult error) {
  Op& op = q.ops.front();
  Completion& c = *op.completion;
  Device& dev = s.devices[static_cast<std::size_t>(q.device)];
  if (error != CUDA_SUCCESS && (!q.error || q.error->reported)) {
    q.error = std::make_shared<AsyncError>(AsyncError{error});
  }
  switch (op.kind) {
    case OpKind::record:
      if (q.error && !q.error->reported) c.error = q.error;
      break;
    case OpKind::wait: break;
    case OpKind::host_function:
    case OpKind::callback:
    case OpKind::work: dev.clock_ns += kOperationNs + op.bytes / kBytesPerNs; break;
  }
  c.time_ns = event_time_ns(dev.clock_ns);  // host time unless SWCUDA_EVENT_TIME=simulated
  c.done = true;
  c.queue = nullptr;
  q.ops.pop_front();
  if (q.ops.empty()) {
    s.busy_queues.erase(q.id);
    if (q.destroyed && q.ctx != nullptr) remove_queue(*q.ctx, q);
  }
  s.progress.notify_all();
}

// Executes the head of `q` (its dependencies are done). Host functions and callbacks run with
// the lock released and the calling thread marked as inside a host function.
void run_head(State& s, Lock& lock, Queue& q) {
  const std::shared_ptr<Queue> keep = q.shared_from_this();  // the queue may be dropped meanwhile
  Op& op = q.ops.front();
  Context& ctx = *q.ctx;  // queues of destroyed contexts are emptied, so a head has a context
  const CUresult broken = ctx.sticky_error;
  CUresult error = CUDA_SUCCESS;
  if (op.fault.code != 0) {
    error = static_cast<CUresult>(op.fault.code);
    if (op.fault.sticky && ctx.sticky_error == CUDA_SUCCESS) ctx.sticky_error = error;
  }
  bool host = false;
  switch (op.kind) {
    case OpKind::host_function: host = error == CUDA_SUCCESS && broken == CUDA_SUCCESS; break;
    case OpKind::callback: host = true; break;  // called with the error, as documented
    case OpKind::work:
      if (error == CUDA_SUCCESS && broken == CUDA_SUCCESS && op.work) {
        error = op.work(s);
        if (s.after_device_work != nullptr) s.after_device_work(s);
        // A fault of the device itself (a bad address) breaks the context, as on a GPU.
        if (is_device_fault(error) && ctx.sticky_error == CUDA_SUCCESS) {
          ctx.sticky_error = error;
        }
      } else if (op.not_run) {
        op.not_run(s);
      }
      break;
    case OpKind::record:
      if (op.work) (void)op.work(s);  // an interprocess event publishes its record (ipc.cpp)
      break;
    case OpKind::wait: break;
  }
  if (host) {
    const std::shared_ptr<Completion> c = op.completion;
    const CUhostFn fn = op.host_function;
    const CUstreamCallback callback = op.callback;
    const CUstream handle = op.stream_handle;
    void* const data = op.user_data;
    const CUresult status = error != CUDA_SUCCESS ? error : broken;
    q.running = true;
    lock.unlock();
    invoke(fn, callback, handle, status, data);
    lock.lock();
    q.running = false;
    if (c->done) {  // the context was destroyed meanwhile: the queue was emptied
      s.progress.notify_all();
      return;
    }
  }
  complete(s, q, error);
}

// Runs whatever is runnable, in queue order, until nothing is.
void progress(State& s, Lock& lock) {
  for (bool ran = true; ran;) {
    ran = false;
    for (const auto& [id, q] : s.busy_queues) {
      if (runnable(s, *q)) {
        run_head(s, lock, *q);  // may change busy_queues: start over
        ran = true;
        break;
      }
    }
  }
}

// Runs one runnable operation of any queue (in deferred mode too); false if none is.
bool run_any(State& s, Lock& lock) {
  for (const auto& [id, q] : s.busy_queues) {
    if (runnable(s, *q)) {
      run_head(s, lock, *q);
      return true;
    }
  }
  return false;
}

// How long a thread sleeps between two looks at the memory of a stream memory wait that
// nothing in this process's scheduler can release (the host or another process writes it).
constexpr auto kValuePollInterval = std::chrono::microseconds(200);

// The head of `q` is a stream memory wait that does not hold. Runs other work that may release
// it, else sleeps a poll interval; after SWCUDA_STREAM_WAIT_TIMEOUT seconds since `since`, fails
// the wait (CUDA_ERROR_LAUNCH_TIMEOUT, not sticky: the stream goes on).
void wait_for_value(State& s, Lock& lock, Queue& q, std::chrono::steady_clock::time_point& since) {
  if (run_any(s, lock)) {
    since = std::chrono::steady_clock::now();  // progress: the wait may still be released
    return;
  }
  const double limit = config().stream_wait_timeout;
  if (limit > 0 &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count() >= limit) {
    Op& head = q.ops.front();
    head.ready = nullptr;
    head.fault = Fault{CUDA_ERROR_LAUNCH_TIMEOUT, true, false};
    return;
  }
  s.progress.wait_for(lock, kValuePollInterval);
}

Queue& new_queue(State& s, Context& ctx, Queue::Kind kind, unsigned int flags, int priority) {
  auto q = std::make_shared<Queue>();
  q->kind = kind;
  q->flags = flags;
  q->priority = priority;
  q->id = s.next_stream_id++;
  q->ctx = &ctx;
  q->device = ctx.device;
  ctx.queues.push_back(q);
  return *q;
}

Queue& per_thread_queue(State& s, Context& ctx) {
  const auto me = std::this_thread::get_id();
  const auto it = ctx.per_thread.find(me);
  if (it != ctx.per_thread.end()) return *it->second;
  Queue& q = new_queue(s, ctx, Queue::Kind::per_thread, CU_STREAM_DEFAULT, 0);
  q.thread = me;
  ctx.per_thread.emplace(me, &q);
  return q;
}

// The tails of the queues that the legacy default stream of `ctx` waits for, not yet done.
std::vector<std::shared_ptr<Completion>> blocking_tails(const Context& ctx, const Queue* except) {
  std::vector<std::shared_ptr<Completion>> tails;
  for (const auto& other : ctx.queues) {
    if (other.get() != except && other->kind != Queue::Kind::legacy && other->blocking() &&
        other->tail && !other->tail->done) {
      tails.push_back(other->tail);
    }
  }
  return tails;
}

}  // namespace

Fault& pending_async_fault() noexcept {
  thread_local Fault fault;
  return fault;
}

bool deferred_mode() noexcept { return config().exec == ExecMode::deferred; }

Queue& legacy_queue(State& s, Context& ctx) {
  if (ctx.legacy == nullptr) {
    ctx.legacy = &new_queue(s, ctx, Queue::Kind::legacy, CU_STREAM_DEFAULT, 0);
  }
  return *ctx.legacy;
}

Queue& default_queue(State& s, Context& ctx, NullStream which) {
  return which == NullStream::legacy ? legacy_queue(s, ctx) : per_thread_queue(s, ctx);
}

bool runs_at_once(const Queue& q) noexcept {
  if (deferred_mode() || q.running || !q.ops.empty() || q.ctx == nullptr) return false;
  if (q.kind == Queue::Kind::legacy) return blocking_tails(*q.ctx, &q).empty();
  const Queue* const legacy = q.ctx->legacy;
  return !q.blocking() || legacy == nullptr || !legacy->tail || legacy->tail->done;
}

std::shared_ptr<Queue> create_queue(State& s, Context& ctx, unsigned int flags, int priority) {
  return new_queue(s, ctx, Queue::Kind::created, flags, priority).shared_from_this();
}

CUresult resolve_stream(State& s, CUstream handle, NullStream null, std::shared_ptr<Queue>& out) {
  const bool legacy = handle == nullptr ? null == NullStream::legacy : handle == CU_STREAM_LEGACY;
  const bool per_thread =
      handle == nullptr ? null == NullStream::per_thread : handle == CU_STREAM_PER_THREAD;
  if (legacy || per_thread) {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    Queue& q = legacy ? legacy_queue(s, *ctx) : per_thread_queue(s, *ctx);
    out = q.shared_from_this();
    return CUDA_SUCCESS;
  }
  const Stream* const stream = s.find<Stream>(SWCU_STREAM, handle);
  if (stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const Context* const ctx = stream->queue->ctx;
  if (ctx != nullptr && ctx->sticky_error != CUDA_SUCCESS) return ctx->sticky_error;
  out = stream->queue;
  return CUDA_SUCCESS;
}

std::shared_ptr<Completion> push(State& s, Queue& q, Op op) {
  auto c = std::make_shared<Completion>();
  c->queue = &q;
  c->device = q.device;
  op.completion = c;
  if (Fault& fault = pending_async_fault(); fault.code != 0) {
    op.fault = fault;
    fault = {};  // one operation per call carries it
  }
  Context& ctx = *q.ctx;
  if (q.kind == Queue::Kind::legacy) {
    for (auto& tail : blocking_tails(ctx, &q)) op.deps.push_back(std::move(tail));
  } else if (q.blocking() && ctx.legacy != nullptr && ctx.legacy->tail && !ctx.legacy->tail->done) {
    op.deps.push_back(ctx.legacy->tail);
  }
  // cuCtxWaitEvent and cuGreenCtxWaitEvent: "all future work submitted to" the context waits;
  // a wait in a primary context holds its green contexts' work too (cuda.h).
  for (Context* waiting : {&ctx, ctx.green_primary}) {
    if (waiting == nullptr || waiting->waits.empty()) continue;
    std::erase_if(waiting->waits, [](const std::shared_ptr<Completion>& w) { return w->done; });
    op.deps.insert(op.deps.end(), waiting->waits.begin(), waiting->waits.end());
  }
  s.busy_queues[q.id] = &q;
  q.ops.push_back(std::move(op));
  q.tail = c;
  return c;
}

void kick(State& s, Lock& lock) {
  if (!deferred_mode()) progress(s, lock);
}

std::shared_ptr<Completion> enqueue(State& s, Lock& lock, Queue& q, Op op) {
  auto c = push(s, q, std::move(op));
  kick(s, lock);
  return c;
}

void wait_for(State& s, Lock& lock, const std::shared_ptr<Completion>& target) {
  const std::shared_ptr<Completion> keep = target;
  auto since = std::chrono::steady_clock::now();
  while (!keep->done) {
    Queue& q = *keep->queue;  // live while the completion is not done
    if (q.running) {
      s.progress.wait(lock);
      continue;
    }
    std::shared_ptr<Completion> dep;
    for (const auto& d : q.ops.front().deps) {
      if (!d->done) {
        dep = d;
        break;
      }
    }
    if (dep) {
      wait_for(s, lock, dep);  // dependencies always point to earlier operations: no cycle
    } else if (value_pending(s, q.ops.front())) {
      wait_for_value(s, lock, q, since);
    } else {
      run_head(s, lock, q);
    }
  }
  kick(s, lock);
  flush_printf(s);
}

bool queue_done(const Queue& q) noexcept {
  if (!q.idle()) return false;
  return q.kind != Queue::Kind::legacy || q.ctx == nullptr || blocking_tails(*q.ctx, &q).empty();
}

void flush_printf(State& s) noexcept {
  if (s.printf_output.empty()) return;
  std::fwrite(s.printf_output.data(), 1, s.printf_output.size(), stdout);
  std::fflush(stdout);
  s.printf_output.clear();
}

void drain(State& s, Lock& lock, Queue& q) {
  std::vector<std::shared_ptr<Completion>> waits;
  if (q.tail) waits.push_back(q.tail);
  // Synchronizing the legacy default stream waits for its barrier's work too.
  if (q.kind == Queue::Kind::legacy && q.ctx != nullptr) {
    for (auto& tail : blocking_tails(*q.ctx, &q)) waits.push_back(std::move(tail));
  }
  for (const auto& c : waits) wait_for(s, lock, c);
  flush_printf(s);
}

void drain_context(State& s, Lock& lock, Context& ctx) {
  std::vector<std::shared_ptr<Completion>> waits;
  for (const auto& q : ctx.queues) {
    if (q->tail) waits.push_back(q->tail);
  }
  for (const auto& c : waits) wait_for(s, lock, c);
  flush_printf(s);
}

CUresult take_error(Queue& q) noexcept {
  if (!q.error) return CUDA_SUCCESS;
  const std::shared_ptr<AsyncError> error = std::move(q.error);
  if (error->reported) return CUDA_SUCCESS;
  error->reported = true;
  return error->code;
}

}  // namespace swcu
