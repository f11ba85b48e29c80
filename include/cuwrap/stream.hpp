// Streams: ordered queues of GPU and host work.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/launch_config.hpp"

namespace cuwrap {

/// How a capture treats unsafe API calls from other threads (CUstreamCaptureMode).
enum class capture_mode {
  global = CU_STREAM_CAPTURE_MODE_GLOBAL,             ///< refuse them in any thread
  this_thread = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,  ///< refuse them in this thread
  relaxed = CU_STREAM_CAPTURE_MODE_RELAXED,           ///< allow them
};

class capture_guard;

/// How a stream is created (CU_STREAM_*).
enum class stream_flags : unsigned {
  blocking = CU_STREAM_DEFAULT,           ///< synchronizes with the legacy default stream
  non_blocking = CU_STREAM_NON_BLOCKING,  ///< runs independently of the legacy default stream
};

namespace detail {
/// Host callbacks that threw, waiting to be reported by their stream's next synchronize().
/// `pending_host_exceptions` is non-zero only while some are waiting, so synchronize() pays
/// one relaxed load in the common case.
inline std::atomic<int> pending_host_exceptions{0};
void store_host_exception(CUstream stream, std::exception_ptr error) noexcept;
/// Rethrows and forgets the first exception stored for `stream`, if any.
void rethrow_host_exception(CUstream stream);
/// Forgets exceptions stored for `stream` (it is being destroyed).
void forget_host_exceptions(CUstream stream) noexcept;

/// A heap copy of a host callable and the stream it was enqueued on. Its exceptions are kept
/// for that stream's next synchronize().
struct host_work_base {
  explicit host_work_base(CUstream s) noexcept : stream{s} {}
  virtual ~host_work_base() = default;
  virtual void run() = 0;
  CUstream stream;
};
template <class F>
struct host_work final : host_work_base {
  host_work(F f, CUstream s) : host_work_base{s}, fn{std::move(f)} {}
  void run() override { fn(); }
  F fn;
};
/// Enqueues `work` with cuLaunchHostFunc. Outside a capture the callback deletes the work after
/// it ran once; during a capture a user object retained by the capture graph owns it, so every
/// launch of the graph (and of its executable graphs) can run it again.
void launch_host_work(CUstream stream, std::unique_ptr<host_work_base> work,
                      std::source_location where);
}  // namespace detail

/// A non-owning view of a stream. Cheap to copy; functions take it by value. The same type
/// as cudaStream_t, so it passes to runtime API calls and back.
class stream_ref {
 public:
  using native_handle_type = CUstream;

  /// Views `handle` (not owned).
  constexpr stream_ref(native_handle_type handle) noexcept : handle_{handle} {}
  stream_ref(std::nullptr_t) = delete;  // say legacy() or per_thread() instead of 0
  stream_ref(int) = delete;

  /// The legacy default stream (CU_STREAM_LEGACY): synchronizes with all blocking streams.
  [[nodiscard]] static stream_ref legacy() noexcept { return stream_ref{CU_STREAM_LEGACY}; }
  /// The calling thread's default stream (CU_STREAM_PER_THREAD).
  [[nodiscard]] static stream_ref per_thread() noexcept { return stream_ref{CU_STREAM_PER_THREAD}; }

  /// The driver's handle.
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }

  /// Waits until all work in the stream is done (cuStreamSynchronize; one driver call). Then
  /// rethrows the first exception a host callback of this stream threw, if any.
  void synchronize(std::source_location where = std::source_location::current()) const {
    check(detail::driver().cuStreamSynchronize(handle_), "cuStreamSynchronize", where);
    if (detail::pending_host_exceptions.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      detail::rethrow_host_exception(handle_);
    }
  }
  /// True if all work is done, false if not yet; throws for any other status (cuStreamQuery;
  /// one driver call).
  [[nodiscard]] bool is_done(std::source_location where = std::source_location::current()) const {
    return check_ready(detail::driver().cuStreamQuery(handle_), "cuStreamQuery", where);
  }
  /// Makes later work in this stream wait for `e` (cuStreamWaitEvent; one driver call).
  void wait(event_ref e, std::source_location where = std::source_location::current()) const {
    check(detail::driver().cuStreamWaitEvent(handle_, e.get(), 0), "cuStreamWaitEvent", where);
  }
  /// Records `e` after the work submitted so far (cuEventRecord; one driver call).
  void record(event_ref e, std::source_location where = std::source_location::current()) const {
    check(detail::driver().cuEventRecord(e.get(), handle_), "cuEventRecord", where);
  }

  /// Runs `fn` on a driver thread once the work before it is done (cuLaunchHostFunc; one more
  /// call, cuStreamGetCaptureInfo, tells whether the stream is capturing). The stream owns a
  /// moved copy of `fn` until it has run; in a capture, the captured graph owns it for as long
  /// as the graph or an executable graph made from it lives, and each launch runs it. `fn` must
  /// not call CUDA. An exception escaping `fn` is kept and rethrown by the next synchronize()
  /// of this stream (the stream it was enqueued on, also when a captured graph runs it).
  template <class F>
  void enqueue(F&& fn, std::source_location where = std::source_location::current()) const {
    detail::launch_host_work(
        handle_, std::make_unique<detail::host_work<std::decay_t<F>>>(std::forward<F>(fn), handle_),
        where);
  }

  /// Launches a kernel (a typed_kernel or an untyped kernel) with `config` and `args`
  /// (cuLaunchKernel or cuLaunchKernelEx; one driver call). Defined in <cuwrap/launch.hpp>,
  /// which documents the checks.
  template <class Kernel, class... Args>
  [[gnu::always_inline]] void launch(const Kernel& k, detail::located<launch_config> config,
                                     Args&&... args) const;

  /// The stream's priority (cuStreamGetPriority).
  [[nodiscard]] int priority() const;
  /// The stream's flags (cuStreamGetFlags).
  [[nodiscard]] stream_flags flags() const;
  /// The context the stream belongs to (cuStreamGetCtx).
  [[nodiscard]] context_ref context() const;
  /// True while the stream is capturing (cuStreamIsCapturing).
  [[nodiscard]] bool is_capturing() const;
  /// The stream's process-unique id (cuStreamGetId).
  [[nodiscard]] unsigned long long id() const;

  friend constexpr bool operator==(stream_ref, stream_ref) noexcept = default;

 protected:
  native_handle_type handle_;
};

/// Options for creating a stream.
struct stream_options {
  stream_flags flags = stream_flags::non_blocking;  ///< non-blocking unless asked otherwise
  int priority = 0;  ///< 0 is the default; others are checked against the context's range
};

/// An owning stream, destroyed with cuStreamDestroy (pending work still completes). Move-only;
/// keeps its context alive.
class stream : public stream_ref {
 public:
  /// Creates a stream in `ctx` (cuStreamCreate, or cuStreamCreateWithPriority for a non-zero
  /// priority, which is first checked against cuCtxGetStreamPriorityRange). Makes `ctx`
  /// current for the call only if it is not. Throws cuwrap::error.
  explicit stream(const owning_context& ctx, stream_options options = {},
                  std::source_location where = std::source_location::current());
  /// Takes ownership of `handle`, which must belong to `ctx`.
  [[nodiscard]] static stream adopt(native_handle_type handle, const owning_context& ctx) noexcept {
    return stream{handle, ctx.lifetime()};
  }
  stream(stream&& other) noexcept
      : stream_ref{std::exchange(other.handle_, CUstream{})}, context_{std::move(other.context_)} {}
  stream& operator=(stream&& other) noexcept {
    if (this == &other) {
      return *this;
    }
    stream old{std::move(*this)};  // destroys the previous stream
    handle_ = std::exchange(other.handle_, CUstream{});
    context_ = std::move(other.context_);
    return *this;
  }
  ~stream() {
    if (handle_ != nullptr) {
      if (detail::pending_host_exceptions.load(std::memory_order_relaxed) != 0) [[unlikely]] {
        detail::forget_host_exceptions(handle_);
      }
      check_nothrow(detail::driver().cuStreamDestroy(handle_), "cuStreamDestroy");
    }
  }

  /// Gives up ownership: the caller must destroy the returned handle.
  [[nodiscard]] native_handle_type release() noexcept { return std::exchange(handle_, CUstream{}); }
  /// Starts capturing this stream's work into a graph (cuStreamBeginCapture); end the
  /// capture with the guard's end(). Defined in <cuwrap/capture.hpp>.
  [[nodiscard]] capture_guard begin_capture(
      capture_mode mode = capture_mode::global,
      std::source_location where = std::source_location::current()) const;
  /// The lifetime token of the stream's context, for objects that must keep it alive.
  [[nodiscard]] const std::shared_ptr<const detail::context_owner>& context_lifetime()
      const noexcept {
    return context_;
  }

 private:
  stream(native_handle_type handle, std::shared_ptr<const detail::context_owner> ctx) noexcept
      : stream_ref{handle}, context_{std::move(ctx)} {}

  std::shared_ptr<const detail::context_owner> context_;
};

static_assert(!std::is_copy_constructible_v<stream> &&
              std::is_nothrow_move_constructible_v<stream>);
static_assert(sizeof(stream_ref) == sizeof(CUstream));
static_assert(sizeof(stream) == sizeof(CUstream) + sizeof(std::shared_ptr<int>));

inline void event_ref::record(stream_ref s, std::source_location where) const {
  check(detail::driver().cuEventRecord(handle_, s.get()), "cuEventRecord", where);
}

}  // namespace cuwrap
