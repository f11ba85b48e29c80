// User objects (user_object.hpp): cuUserObjectCreate, cuUserObjectRetain, cuUserObjectRelease,
// cuGraphRetainUserObject, cuGraphReleaseUserObject, and the destructors that run after a call.
#include "graph/user_object.hpp"

#include <atomic>
#include <climits>
#include <mutex>
#include <utility>
#include <vector>

namespace swcu {
namespace {

// Destructors whose object lost its last reference, waiting for the end of the driver call.
struct Released {
  std::mutex mutex;  // a leaf: never held while taking the state lock or calling out
  std::vector<std::pair<CUhostFn, void*>> destructors;
  std::atomic<bool> any{false};
};

Released& released() noexcept {
  static Released* const r = new Released;  // never destroyed, like the state
  return *r;
}

void queue_destructor(CUhostFn fn, void* ptr) noexcept {
  Released& r = released();
  const std::lock_guard lock(r.mutex);
  try {
    r.destructors.emplace_back(fn, ptr);
  } catch (...) {
    return;  // out of memory: the destructor is lost rather than run under the lock
  }
  r.any.store(true, std::memory_order_release);
}

bool valid_count(unsigned int count) noexcept {
  return count != 0 && count <= static_cast<unsigned int>(INT_MAX);
}

}  // namespace

void run_deferred_destructors() noexcept {
  Released& r = released();
  if (!r.any.load(std::memory_order_acquire)) return;
  for (;;) {
    std::vector<std::pair<CUhostFn, void*>> batch;
    {
      const std::lock_guard lock(r.mutex);
      batch.swap(r.destructors);
      r.any.store(false, std::memory_order_release);
    }
    if (batch.empty()) return;
    bool& inside = in_host_function();
    const bool was_inside = inside;
    inside = true;  // a destructor may not call the driver
    for (const auto& [fn, ptr] : batch) fn(ptr);
    inside = was_inside;
  }
}

void retain_user_object(UserObject& o, unsigned long long count) noexcept { o.refs += count; }

void release_user_object(State& s, UserObject& o, unsigned long long count) noexcept {
  o.refs -= std::min(count, o.refs);
  if (o.refs != 0) return;
  queue_destructor(o.destroy, o.ptr);
  s.destroy(SWCU_USER_OBJECT, &o);
}

void retain_refs(const UserRefs& refs) noexcept {
  for (const auto& [object, count] : refs) retain_user_object(*object, count);
}

void release_refs(State& s, UserRefs& refs) noexcept {
  for (const auto& [object, count] : refs) release_user_object(s, *object, count);
  refs.clear();
}

HeldRefs::~HeldRefs() { release_refs(state(), refs); }

}  // namespace swcu

extern "C" {

using swcu::call;
using swcu::State;
using swcu::Sym;
using swcu::UserObject;

CUresult cuUserObjectCreate(CUuserObject* object_out, void* ptr, CUhostFn destroy,
                            unsigned int initialRefcount, unsigned int flags) {
  return call(Sym::cuUserObjectCreate, [=](State& s) -> CUresult {
    if (object_out == nullptr || destroy == nullptr || !swcu::valid_count(initialRefcount) ||
        flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    UserObject* const o = s.registry(SWCU_USER_OBJECT)
                              .add(std::make_unique<UserObject>(ptr, destroy, initialRefcount));
    *object_out = reinterpret_cast<CUuserObject>(o);
    return CUDA_SUCCESS;
  });
}

CUresult cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return call(Sym::cuUserObjectRetain, [=](State& s) -> CUresult {
    UserObject* const o = s.find<UserObject>(SWCU_USER_OBJECT, object);
    if (o == nullptr || !swcu::valid_count(count)) return CUDA_ERROR_INVALID_VALUE;
    swcu::retain_user_object(*o, count);
    return CUDA_SUCCESS;
  });
}

// Releasing more references than the object has (which the real driver cannot tell from a
// caller's own) is refused.
CUresult cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return call(Sym::cuUserObjectRelease, [=](State& s) -> CUresult {
    UserObject* const o = s.find<UserObject>(SWCU_USER_OBJECT, object);
    if (o == nullptr || !swcu::valid_count(count) || count > o->refs) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::release_user_object(s, *o, count);
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                 unsigned int flags) {
  return call(Sym::cuGraphRetainUserObject, [=](State& s) -> CUresult {
    swcu::Graph* const g = swcu::find_graph(s, graph);
    UserObject* const o = s.find<UserObject>(SWCU_USER_OBJECT, object);
    if (g == nullptr || o == nullptr || !swcu::valid_count(count) ||
        (flags != 0 && flags != CU_GRAPH_USER_OBJECT_MOVE)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (flags == CU_GRAPH_USER_OBJECT_MOVE) {
      if (count > o->refs) return CUDA_ERROR_INVALID_VALUE;  // more than there are to move
    } else {
      swcu::retain_user_object(*o, count);
    }
    g->user_refs[o] += count;
    return CUDA_SUCCESS;
  });
}

CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count) {
  return call(Sym::cuGraphReleaseUserObject, [=](State& s) -> CUresult {
    swcu::Graph* const g = swcu::find_graph(s, graph);
    UserObject* const o = s.find<UserObject>(SWCU_USER_OBJECT, object);
    if (g == nullptr || o == nullptr || !swcu::valid_count(count)) return CUDA_ERROR_INVALID_VALUE;
    const auto it = g->user_refs.find(o);
    if (it == g->user_refs.end() || it->second < count) return CUDA_ERROR_INVALID_VALUE;
    it->second -= count;
    if (it->second == 0) g->user_refs.erase(it);
    swcu::release_user_object(s, *o, count);
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
