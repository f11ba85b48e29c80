// keep_alive(): owners handed to a stream, released on cuwrap's release thread once the stream
// has passed them (host functions may not call the driver, and owners' destructors do).
#include "cuwrap/keep_alive.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace cuwrap {
namespace detail {
namespace {

// The queue of owners due for release, and the thread that drains it. Never destroyed: host
// functions and graph destructions may hand over owners until the process ends, and the
// detached thread uses the state until then.
struct release_queue {
  std::mutex mutex;
  std::condition_variable work;     // the thread waits for owners
  std::condition_variable drained;  // release_kept_alive() waits for the thread
  std::deque<std::unique_ptr<kept_alive_base>> due;
  std::size_t releasing = 0;  // owners the thread took and has not destroyed yet
  bool started = false;

  // Called from a host function or a user object's destructor: no driver calls, only the lock.
  void push(kept_alive_base* owner) noexcept {
    std::unique_ptr<kept_alive_base> held{owner};
    {
      const std::lock_guard lock{mutex};
      try {
        due.push_back(std::move(held));
      } catch (...) {
        // Out of memory: leak the owner rather than destroy it on a driver thread.
        (void)held.release();
        return;
      }
    }
    work.notify_one();
  }

  void start() {
    const std::lock_guard lock{mutex};
    if (!started) {
      std::thread{[this] { run(); }}.detach();
      started = true;
    }
  }

  [[noreturn]] void run() {
    std::vector<std::unique_ptr<kept_alive_base>> batch;
    for (;;) {
      {
        std::unique_lock lock{mutex};
        work.wait(lock, [&] { return !due.empty(); });
        while (!due.empty()) {
          batch.push_back(std::move(due.front()));
          due.pop_front();
        }
        releasing += batch.size();
      }
      const std::size_t n = batch.size();
      batch.clear();  // the owners' destructors run here, where driver calls are allowed
      {
        const std::lock_guard lock{mutex};
        releasing -= n;
      }
      drained.notify_all();
    }
  }
};

release_queue& queue() {
  static auto* q = new release_queue;  // NOLINT: never destroyed (see release_queue)
  return *q;
}

extern "C" void release_after_stream(void* owner) {
  queue().push(static_cast<kept_alive_base*>(owner));
}

}  // namespace

void keep_alive(stream_ref s, std::unique_ptr<kept_alive_base> owner, std::source_location where) {
  expect_argument_not_moved_from(!s.empty(), "keep_alive", "keep_alive", "stream", where);
  const auto& d = driver();
  CUstreamCaptureStatus status{};
  CUgraph graph{};
  check(d.cuStreamGetCaptureInfo(s.get(), &status, nullptr, &graph, nullptr, nullptr, nullptr),
        "cuStreamGetCaptureInfo", where);
  queue().start();
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    check(d.cuLaunchHostFunc(s.get(), &release_after_stream, owner.get()), "cuLaunchHostFunc",
          where);
    (void)owner.release();  // the host function hands it to the release thread
    return;
  }
  CUuserObject object{};
  check(d.cuUserObjectCreate(&object, owner.get(), &release_after_stream, 1,
                             CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
        "cuUserObjectCreate", where);
  (void)owner.release();  // the user object owns it now
  if (const CUresult r = d.cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE);
      r != CUDA_SUCCESS) {
    check_nothrow(d.cuUserObjectRelease(object, 1), "cuUserObjectRelease");
    check(r, "cuGraphRetainUserObject", where);
  }
}

}  // namespace detail

void release_kept_alive() {
  auto& q = detail::queue();
  std::deque<std::unique_ptr<detail::kept_alive_base>> mine;
  {
    const std::lock_guard lock{q.mutex};
    mine.swap(q.due);
  }
  mine.clear();  // destroyed here, on the calling thread
  std::unique_lock lock{q.mutex};
  q.drained.wait(lock, [&] { return q.releasing == 0; });
}

}  // namespace cuwrap
