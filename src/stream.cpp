#include "cuwrap/stream.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace cuwrap {
namespace detail {

struct host_stream_record {
  CUstream stream;
  bool destroyed = false;  // guarded by host_exceptions_mutex
};

namespace {

struct stored_exception {
  std::shared_ptr<host_stream_record> record;
  std::exception_ptr error;
};

std::mutex host_exceptions_mutex;
std::vector<stored_exception> host_exceptions;  // few at a time: a vector beats a map
// The record of each live stream that has had host work, by handle. A destroyed stream's record
// leaves this list (its pending work keeps it), so a new stream with the same handle gets a new
// one.
std::vector<std::shared_ptr<host_stream_record>> host_stream_records;

std::shared_ptr<host_stream_record> record_for(CUstream stream) {
  const std::lock_guard lock{host_exceptions_mutex};
  for (const auto& record : host_stream_records) {
    if (record->stream == stream) {
      return record;
    }
  }
  auto record = std::make_shared<host_stream_record>(host_stream_record{stream});
  host_stream_records.push_back(record);
  host_work_streams.fetch_add(1, std::memory_order_relaxed);
  return record;
}

// The nothrow handler's report of an exception nobody can collect: its code (a system_error's
// own, else CUDA_ERROR_UNKNOWN) and a text that says what happened.
void report_uncollected(const std::exception_ptr& error) noexcept {
  std::error_code code = make_error_code(CUDA_ERROR_UNKNOWN);
  std::string what = "an exception that is not a std::exception";
  try {
    std::rethrow_exception(error);
  } catch (const std::system_error& e) {
    code = e.code();
    what = e.what();
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  try {
    const std::string api = "cuwrap::stream::enqueue (a host callback threw \"" + what +
                            "\"; its stream was destroyed before a synchronize() rethrew it)";
    report_nothrow(code, api.c_str());
  } catch (...) {
    report_nothrow(code, "cuwrap::stream::enqueue (a host callback threw; its stream is gone)");
  }
}

void run_host_work(host_work_base& work) noexcept {
  try {
    work.run();
  } catch (...) {
    store_host_exception(work, std::current_exception());
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

// Takes the first stored exception that `matches`, if any.
template <class Match>
std::exception_ptr take_exception(Match&& matches) {
  const std::lock_guard lock{host_exceptions_mutex};
  for (auto it = host_exceptions.begin(); it != host_exceptions.end(); ++it) {
    if (matches(*it)) {
      std::exception_ptr error = std::move(it->error);
      host_exceptions.erase(it);
      pending_host_exceptions.fetch_sub(1, std::memory_order_relaxed);
      return error;
    }
  }
  return nullptr;
}

}  // namespace

void launch_host_work(CUstream stream, std::unique_ptr<host_work_base> work,
                      std::source_location where) {
  const auto& d = driver();
  CUstreamCaptureStatus status{};
  CUgraph graph{};
  check(d.cuStreamGetCaptureInfo(stream, &status, nullptr, &graph, nullptr, nullptr, nullptr),
        "cuStreamGetCaptureInfo", where);
  work->record = record_for(stream);
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

void store_host_exception(const host_work_base& work, std::exception_ptr error) noexcept {
  bool stored = false;
  try {
    const std::lock_guard lock{host_exceptions_mutex};
    if (work.record != nullptr && !work.record->destroyed) {
      host_exceptions.push_back({work.record, error});
      pending_host_exceptions.fetch_add(1, std::memory_order_relaxed);
      stored = true;
    }
  } catch (...) {
    // Out of memory while recording an error: report it instead.
  }
  if (!stored) {
    report_uncollected(error);
  }
}

void rethrow_host_exception(CUstream stream) {
  if (auto error = take_exception([stream](const stored_exception& e) {
        return e.record->stream == stream;  // a stored record's stream is not destroyed
      })) {
    std::rethrow_exception(error);
  }
}

void rethrow_context_host_exception(CUcontext ctx) {
  std::vector<std::shared_ptr<host_stream_record>> records;
  {
    const std::lock_guard lock{host_exceptions_mutex};
    for (const auto& e : host_exceptions) {
      records.push_back(e.record);
    }
  }
  // The driver is asked outside the lock: a callback may be storing an exception meanwhile.
  for (const auto& record : records) {
    CUcontext owner{};
    if (driver().cuStreamGetCtx(record->stream, &owner) != CUDA_SUCCESS || owner != ctx) {
      continue;
    }
    if (auto error =
            take_exception([&record](const stored_exception& e) { return e.record == record; })) {
      std::rethrow_exception(error);
    }
  }
}

void report_host_exceptions(CUstream stream) noexcept {
  std::vector<std::exception_ptr> uncollected;
  {
    const std::lock_guard lock{host_exceptions_mutex};
    const auto record = std::find_if(host_stream_records.begin(), host_stream_records.end(),
                                     [stream](const auto& r) { return r->stream == stream; });
    if (record == host_stream_records.end()) {
      return;
    }
    (*record)->destroyed = true;  // host work still pending reports to the handler itself
    std::erase_if(host_exceptions, [&](stored_exception& e) {
      if (e.record != *record) {
        return false;
      }
      try {
        uncollected.push_back(std::move(e.error));
      } catch (...) {  // out of memory: dropped
      }
      pending_host_exceptions.fetch_sub(1, std::memory_order_relaxed);
      return true;
    });
    host_stream_records.erase(record);
    host_work_streams.fetch_sub(1, std::memory_order_relaxed);
  }
  for (const auto& error : uncollected) {
    report_uncollected(error);
  }
}

}  // namespace detail

int stream_ref::priority(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "priority", where);
  int priority = 0;
  check(detail::driver().cuStreamGetPriority(handle_, &priority), "cuStreamGetPriority", where);
  return priority;
}

stream_flags stream_ref::flags(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "flags", where);
  unsigned flags = 0;
  check(detail::driver().cuStreamGetFlags(handle_, &flags), "cuStreamGetFlags", where);
  return static_cast<stream_flags>(flags);
}

context_ref stream_ref::context(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "context", where);
  CUcontext ctx{};
  check(detail::driver().cuStreamGetCtx(handle_, &ctx), "cuStreamGetCtx", where);
  return context_ref{ctx};
}

bool stream_ref::is_capturing(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "is_capturing", where);
  CUstreamCaptureStatus status{};
  check(detail::driver().cuStreamIsCapturing(handle_, &status), "cuStreamIsCapturing", where);
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

unsigned long long stream_ref::id(std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "stream", "id", where);
  unsigned long long id = 0;
  check(detail::driver().cuStreamGetId(handle_, &id), "cuStreamGetId", where);
  return id;
}

namespace {

CUstream create_stream(const owning_context& ctx, stream_options options,
                       std::source_location where) {
  (void)ctx.lifetime_for("stream", "stream", where);  // a moved-from context throws here
  if (options.priority != 0) {
    const auto range = ctx.stream_priorities(where);
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
    : unique_handle{create_stream(ctx, options, where), ctx.lifetime()} {}

}  // namespace cuwrap
