// Helpers for the stream and event tests: host functions that log their order, and a gate that
// keeps a host function running (on another thread) until the test opens it.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "swdriver_test.hpp"

namespace swcu::test {

/// A created context, current on the calling thread (cuCtxCreate_v4 on device 0).
[[nodiscard]] inline CUcontext create_context(CUdevice dev = 0) {
  CUcontext ctx = nullptr;
  REQUIRE(api().cuCtxCreate_v4(&ctx, nullptr, 0, dev) == CUDA_SUCCESS);
  return ctx;
}

[[nodiscard]] inline CUstream create_stream(unsigned flags = CU_STREAM_NON_BLOCKING) {
  CUstream s = nullptr;
  REQUIRE(api().cuStreamCreate(&s, flags) == CUDA_SUCCESS);
  return s;
}

[[nodiscard]] inline CUevent create_event(unsigned flags = CU_EVENT_DEFAULT) {
  CUevent e = nullptr;
  REQUIRE(api().cuEventCreate(&e, flags) == CUDA_SUCCESS);
  return e;
}

/// Host functions that append their number to a shared list, in the order they run.
class Log {
 public:
  /// Enqueues a host function that appends `value` (cuLaunchHostFunc, or `launch` if given).
  CUresult enqueue(CUstream stream, int value,
                   PFN_cuLaunchHostFunc_v10000 launch = api().cuLaunchHostFunc) {
    marks_.push_back({this, value});
    return launch(stream, &Log::run, &marks_.back());
  }
  [[nodiscard]] std::vector<int> order() {
    const std::lock_guard lock(mutex_);
    return order_;
  }

 private:
  struct Mark {
    Log* log;
    int value;
  };
  static void CUDA_CB run(void* data) {
    const Mark& m = *static_cast<Mark*>(data);
    const std::lock_guard lock(m.log->mutex_);
    m.log->order_.push_back(m.value);
  }

  std::mutex mutex_;
  std::vector<int> order_;
  std::deque<Mark> marks_;  // stable addresses
};

/// A host function that blocks until open() is called. In immediate mode, enqueueing it runs it
/// on the enqueueing thread, so start() does that on a thread of its own.
class Gate {
 public:
  ~Gate() {
    open();
    if (thread_.joinable()) thread_.join();
  }

  /// Enqueues the blocking host function into `stream` from a new thread (which makes `ctx`
  /// current) and returns once the function has started.
  void start(CUcontext ctx, CUstream stream) {
    thread_ = std::thread([this, ctx, stream] {
      api().cuCtxSetCurrent(ctx);
      enqueue_result_ = api().cuLaunchHostFunc(stream, &Gate::run, this);
      api().cuCtxSetCurrent(nullptr);
    });
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return entered_; });
  }
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  /// Opens the gate and waits for the thread that enqueued it (it runs what became runnable).
  void finish() {
    open();
    if (thread_.joinable()) thread_.join();
    CHECK(enqueue_result_ == CUDA_SUCCESS);
  }

 private:
  static void CUDA_CB run(void* data) {
    Gate& g = *static_cast<Gate*>(data);
    std::unique_lock lock(g.mutex_);
    g.entered_ = true;
    g.cv_.notify_all();
    g.cv_.wait(lock, [&g] { return g.open_; });
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool open_ = false;
  CUresult enqueue_result_ = CUDA_ERROR_UNKNOWN;
  std::thread thread_;
};

}  // namespace swcu::test
