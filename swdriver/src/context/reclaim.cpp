// Destroying a context (context.cpp, primary_context.cpp) reclaims what every subsystem holds
// for it. This is the one place that reaches into all of them, in the order that keeps the
// address map consistent.
#include "context/reclaim.hpp"

#include <algorithm>

#include "exec/texture.hpp"
#include "graph/graph.hpp"
#include "memory/array.hpp"
#include "memory/external.hpp"
#include "memory/memory.hpp"
#include "module/module.hpp"
#include "sched/sched.hpp"

namespace swcu {

void reclaim_context(State& s, Context& ctx) noexcept {
  flush_printf(s);
  reclaim_modules(s, ctx);  // first: their globals leave the address map before memory goes
  reclaim_graphs(s, ctx);   // captures, executable graphs and graphs (graph.hpp)
  for (const void* h : s.registry(SWCU_STREAM).handles_if([&ctx](const Object& o) {
         return static_cast<const Stream&>(o).queue->ctx == &ctx;
       })) {
    s.reclaim(SWCU_STREAM, h);
  }
  for (const void* h : s.registry(SWCU_EVENT).handles_if([&ctx](const Object& o) {
         return static_cast<const Event&>(o).ctx == &ctx;
       })) {
    s.reclaim(SWCU_EVENT, h);
  }
  reclaim_textures(s, ctx);  // before the arrays and memory they read
  reclaim_arrays(s, ctx);
  reclaim_external(s, ctx);  // before memory: its mapped buffers are the context's allocations
  reclaim_memory(s, ctx);
  for (const auto& q : ctx.queues) {
    for (Op& op : q->ops) {  // dropped: whoever waits for it sees it done
      op.completion->done = true;
      op.completion->queue = nullptr;
      if (op.not_run) op.not_run(s);
    }
    q->ops.clear();
    s.busy_queues.erase(q->id);
    q->ctx = nullptr;
    q->destroyed = true;
  }
  ctx.queues.clear();
  ctx.legacy = nullptr;
  ctx.record_queue = nullptr;
  ctx.waits.clear();
  ctx.per_thread.clear();
  ctx.sticky_error = CUDA_SUCCESS;
  std::erase_if(s.peer_access, [&ctx](const auto& pair) {  // in either direction (peer.cpp)
    return pair.first == ctx.id || pair.second == ctx.id;
  });
  s.progress.notify_all();
}

}  // namespace swcu
