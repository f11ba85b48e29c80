// User objects (SWCU_USER_OBJECT): a destructor callback with a reference count. References are
// owned by the program (cuUserObjectCreate, cuUserObjectRetain), by graphs
// (cuGraphRetainUserObject, clones, child graphs) and by executable graphs, which take their
// own references to everything their graph holds when they are instantiated or updated; an
// in-flight launch keeps its executable graph's references until it has run.
//
// When the last reference goes the handle stops being live at once, and the destructor is queued
// to run after the driver call in progress has released the state lock (api.hpp), on the calling
// thread, which counts as inside a host function meanwhile: a destructor that calls the driver
// gets CUDA_ERROR_NOT_PERMITTED.
#pragma once

#include "graph/graph.hpp"

namespace swcu {

struct UserObject final : Object {
  UserObject(void* p, CUhostFn fn, unsigned long long count) noexcept
      : Object(SWCU_USER_OBJECT), ptr(p), destroy(fn), refs(count) {}
  void* ptr;
  CUhostFn destroy;
  unsigned long long refs;  ///< every reference, whoever owns it
};

/// Adds `count` references to `o`.
void retain_user_object(UserObject& o, unsigned long long count) noexcept;
/// Drops `count` references (at most what it has); the last one destroys the handle and queues
/// the destructor.
void release_user_object(State& s, UserObject& o, unsigned long long count) noexcept;
/// Takes one more reference to each object of `refs`, as many as `refs` holds.
void retain_refs(const UserRefs& refs) noexcept;
/// Drops the references of `refs` and empties it.
void release_refs(State& s, UserRefs& refs) noexcept;

/// Shared references that in-flight launches keep after their executable graph changed or went:
/// releases them (under the state lock) when the last holder goes.
struct HeldRefs {
  HeldRefs() = default;
  explicit HeldRefs(UserRefs r) noexcept : refs(std::move(r)) {}
  ~HeldRefs();
  HeldRefs(const HeldRefs&) = delete;
  HeldRefs& operator=(const HeldRefs&) = delete;
  UserRefs refs;
};

}  // namespace swcu
