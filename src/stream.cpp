#include "cuwrap/stream.hpp"

#include <gsl/assert>
#include <mutex>
#include <string>
#include <vector>

namespace cuwrap {
namespace detail {
namespace {

struct stored_exception {
  CUstream stream;
  std::exception_ptr error;
};

std::mutex host_exceptions_mutex;
std::vector<stored_exception> host_exceptions;  // few at a time: a vector beats a map

void run_host_work(host_work_base& work) noexcept {
  try {
    work.run();
  } catch (...) {
    store_host_exception(work.stream, std::current_exception());
  }
}

void CUDA_CB run_host_work_once(void* data) noexcept {
  const std::unique_ptr<host_work_base> work{static_cast<host_work_base*>(data)};
  run_host_work(*work);
}

void CUDA_CB run_captured_host_work(void* data) noexcept {
  run_host_work(*static_cast<host_work_base*>(data));
}

void CUDA_CB destroy_host_work(void* data) noexcept { delete static_cast<host_work_base*>(data); }

}  // namespace

void launch_host_work(CUstream stream, std::unique_ptr<host_work_base> work,
                      std::source_location where) {
  const auto& d = driver();
  CUstreamCaptureStatus status{};
  CUgraph graph{};
  check(d.cuStreamGetCaptureInfo(stream, &status, nullptr, &graph, nullptr, nullptr, nullptr),
        "cuStreamGetCaptureInfo", where);
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    check(d.cuLaunchHostFunc(stream, &run_host_work_once, work.get()), "cuLaunchHostFunc", where);
    (void)work.release();  // the callback owns it now
    return;
  }
  CUuserObject object{};
  check(d.cuUserObjectCreate(&object, work.get(), &destroy_host_work, 1,
                             CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
        "cuUserObjectCreate", where);
  auto* data = work.release();  // the user object owns it now
  if (const CUresult r = d.cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE);
      r != CUDA_SUCCESS) {
    check_nothrow(d.cuUserObjectRelease(object, 1), "cuUserObjectRelease");
    check(r, "cuGraphRetainUserObject", where);
  }
  // Should this fail, the capture graph still owns the work and frees it with the graph.
  check(d.cuLaunchHostFunc(stream, &run_captured_host_work, data), "cuLaunchHostFunc", where);
}

void store_host_exception(CUstream stream, std::exception_ptr error) noexcept {
  try {
    const std::lock_guard lock{host_exceptions_mutex};
    host_exceptions.push_back({stream, std::move(error)});
    pending_host_exceptions.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
    // Out of memory while recording an error: nothing better to do than drop it.
  }
}

void rethrow_host_exception(CUstream stream) {
  std::exception_ptr error;
  {
    const std::lock_guard lock{host_exceptions_mutex};
    for (auto it = host_exceptions.begin(); it != host_exceptions.end(); ++it) {
      if (it->stream == stream) {
        error = std::move(it->error);
        host_exceptions.erase(it);
        pending_host_exceptions.fetch_sub(1, std::memory_order_relaxed);
        break;
      }
    }
  }
  if (error) {
    std::rethrow_exception(error);
  }
}

void forget_host_exceptions(CUstream stream) noexcept {
  const std::lock_guard lock{host_exceptions_mutex};
  std::erase_if(host_exceptions, [stream](const stored_exception& e) {
    if (e.stream != stream) {
      return false;
    }
    pending_host_exceptions.fetch_sub(1, std::memory_order_relaxed);
    return true;
  });
}

}  // namespace detail

int stream_ref::priority() const {
  int priority = 0;
  check(detail::driver().cuStreamGetPriority(handle_, &priority), "cuStreamGetPriority");
  return priority;
}

stream_flags stream_ref::flags() const {
  unsigned flags = 0;
  check(detail::driver().cuStreamGetFlags(handle_, &flags), "cuStreamGetFlags");
  return static_cast<stream_flags>(flags);
}

context_ref stream_ref::context() const {
  CUcontext ctx{};
  check(detail::driver().cuStreamGetCtx(handle_, &ctx), "cuStreamGetCtx");
  return context_ref{ctx};
}

bool stream_ref::is_capturing() const {
  CUstreamCaptureStatus status{};
  check(detail::driver().cuStreamIsCapturing(handle_, &status), "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

unsigned long long stream_ref::id() const {
  unsigned long long id = 0;
  check(detail::driver().cuStreamGetId(handle_, &id), "cuStreamGetId");
  return id;
}

namespace {

CUstream create_stream(const owning_context& ctx, stream_options options,
                       std::source_location where) {
  Expects(!ctx.empty());
  if (options.priority != 0) {
    const auto range = ctx.stream_priorities();
    if (options.priority < range.greatest || options.priority > range.least) {
      detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuStreamCreateWithPriority",
                          "priority " + std::to_string(options.priority) +
                              " is outside the context's range " + std::to_string(range.greatest) +
                              " (highest) to " + std::to_string(range.least) + " (lowest)",
                          where);
    }
  }
  const scoped_current_context current{ctx, where};
  const auto flags = static_cast<unsigned>(options.flags);
  CUstream handle{};
  if (options.priority == 0) {
    check(detail::driver().cuStreamCreate(&handle, flags), "cuStreamCreate", where);
  } else {
    check(detail::driver().cuStreamCreateWithPriority(&handle, flags, options.priority),
          "cuStreamCreateWithPriority", where);
  }
  return handle;
}

}  // namespace

stream::stream(const owning_context& ctx, stream_options options, std::source_location where)
    : stream_ref{create_stream(ctx, options, where)}, context_{ctx.lifetime()} {}

}  // namespace cuwrap
