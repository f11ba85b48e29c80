// Streams: ordered queues of GPU and host work.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/detail/event_ref.hpp"
#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/launch_config.hpp"
#include "cuwrap/stream_attributes.hpp"
#include "cuwrap/stream_memops.hpp"

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
/// How many streams have had host work enqueued and not been destroyed since: non-zero only
/// then, so destroying a stream pays one relaxed load in the common case.
inline std::atomic<int> host_work_streams{0};
/// What host work knows of the stream it was enqueued on: its handle, and whether the stream
/// was destroyed (then an exception goes to the nothrow handler, as no synchronize() of that
/// stream can come). One per stream, shared by its pending host work (src/stream.cpp).
struct host_stream_record;
/// Rethrows and forgets the first exception stored for `stream`, if any.
void rethrow_host_exception(CUstream stream);
/// Rethrows and forgets the first exception stored for a stream of context `ctx`, if any
/// (context_ref::synchronize(), after cuCtxSynchronize).
void rethrow_context_host_exception(CUcontext ctx);
/// Hands the exceptions stored for `stream` (it is being destroyed, so no synchronize() can
/// collect them any more) to the nothrow handler, and forgets them.
void report_host_exceptions(CUstream stream) noexcept;

/// A heap copy of a host callable and the stream it was enqueued on. Its exceptions are kept
/// for that stream's next synchronize().
struct host_work_base {
  explicit host_work_base(CUstream s) noexcept : stream{s} {}
  virtual ~host_work_base() = default;
  virtual void run() = 0;
  CUstream stream;
  std::shared_ptr<host_stream_record> record;  ///< set by launch_host_work()
};
/// Keeps an exception `work` threw for its stream's next synchronize(), or hands it to the
/// nothrow handler when the stream is already destroyed.
void store_host_exception(const host_work_base& work, std::exception_ptr error) noexcept;
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

/// The handle a moved-from stream holds. Not null: a null CUstream is the legacy default
/// stream, a legitimate stream to view. All bits set is no stream's address (and not
/// CU_STREAM_LEGACY or CU_STREAM_PER_THREAD), and comparing with it is one instruction.
[[nodiscard]] inline CUstream moved_from_stream() noexcept {
  return reinterpret_cast<CUstream>(~std::uintptr_t{0});  // NOLINT: a sentinel, never used
}
}  // namespace detail

/// A non-owning view of a stream. Cheap to copy; functions take it by value. The same type
/// as cudaStream_t, so it passes to runtime API calls and back: converting a CUstream to a
/// stream_ref is a copy, and any CUstream (NULL included, the legacy default stream) is a
/// stream to view.
///
/// A view made from a moved-from (or released) stream is empty: it holds
/// detail::moved_from_stream(), not NULL, so it can never silently become the legacy default
/// stream. Every operation on it throws cuwrap::usage_error before any driver call (one
/// compare and branch on the hot paths).
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

  /// The driver's handle (detail::moved_from_stream() for a moved-from stream).
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// True for a moved-from or released stream, and for views of one.
  [[nodiscard]] bool empty() const noexcept { return handle_ == detail::moved_from_stream(); }

  /// Waits until all work in the stream is done (cuStreamSynchronize; one driver call). Then
  /// rethrows the first exception a host callback of this stream threw, if any.
  void synchronize(std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "synchronize", where);
    check(detail::driver().cuStreamSynchronize(handle_), "cuStreamSynchronize", where);
    if (detail::pending_host_exceptions.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      detail::rethrow_host_exception(handle_);
    }
  }
  /// True if all work is done, false if not yet; throws for any other status (cuStreamQuery;
  /// one driver call).
  [[nodiscard]] bool is_done(std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "is_done", where);
    return check_ready(detail::driver().cuStreamQuery(handle_), "cuStreamQuery", where);
  }
  /// Makes later work in this stream wait for `e` (cuStreamWaitEvent; one driver call).
  void wait(event_ref e, std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "wait", where);
    detail::expect_argument_not_moved_from(!e.empty(), "stream", "wait", "event", where);
    check(detail::driver().cuStreamWaitEvent(handle_, e.get(), 0), "cuStreamWaitEvent", where);
  }
  /// Records `e` after the work submitted so far (cuEventRecord; one driver call).
  void record(event_ref e, std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "record", where);
    detail::expect_argument_not_moved_from(!e.empty(), "stream", "record", "event", where);
    check(detail::driver().cuEventRecord(e.get(), handle_), "cuEventRecord", where);
  }

  /// Runs `fn` on a driver thread once the work before it is done (cuLaunchHostFunc; one more
  /// call, cuStreamGetCaptureInfo, tells whether the stream is capturing). The stream owns a
  /// moved copy of `fn` until it has run; in a capture, the captured graph owns it for as long
  /// as the graph or an executable graph made from it lives, and each launch runs it. `fn` must
  /// not call CUDA. An exception escaping `fn` is kept and rethrown by the next synchronize()
  /// of this stream (the stream it was enqueued on, also when a captured graph runs it) or of
  /// its context (context_ref::synchronize()); one nobody collects before the stream is
  /// destroyed goes to the nothrow handler (set_nothrow_error_handler()). event::synchronize()
  /// does not rethrow it: an event does not know which stream's host work ran before it.
  template <class F>
  void enqueue(F&& fn, std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "enqueue", where);
    detail::launch_host_work(
        handle_, std::make_unique<detail::host_work<std::decay_t<F>>>(std::forward<F>(fn), handle_),
        where);
  }

  /// Launches a kernel (a typed_kernel or an untyped kernel) with `config` and `args`
  /// (cuLaunchKernel or cuLaunchKernelEx; one driver call).
  ///
  /// Declared here, defined in <cuwrap/launch.hpp> (which documents the checks): a launch
  /// needs kernels, launch configurations and argument checking, which this header does not
  /// pull into every user of streams. It is a template, so the definition only has to be
  /// visible where it is called: include <cuwrap/launch.hpp> (or <cuwrap/cuwrap.hpp>) to launch.
  template <class Kernel, class... Args>
  [[gnu::always_inline]] void launch(const Kernel& k, detail::located<launch_config> config,
                                     Args&&... args) const;

  /// The stream's priority (cuStreamGetPriority).
  [[nodiscard]] int priority(std::source_location where = std::source_location::current()) const;
  /// The stream's flags (cuStreamGetFlags).
  [[nodiscard]] stream_flags flags(
      std::source_location where = std::source_location::current()) const;
  /// The context the stream belongs to (cuStreamGetCtx).
  [[nodiscard]] context_ref context(
      std::source_location where = std::source_location::current()) const;
  /// True while the stream is capturing (cuStreamIsCapturing).
  [[nodiscard]] bool is_capturing(
      std::source_location where = std::source_location::current()) const;
  /// The stream's process-unique id (cuStreamGetId).
  [[nodiscard]] unsigned long long id(
      std::source_location where = std::source_location::current()) const;
  /// The device the stream's work runs on (cuStreamGetDevice, then cuDeviceGet).
  [[nodiscard]] cuwrap::device device(
      std::source_location where = std::source_location::current()) const;

  /// Makes later work in this stream wait until `condition` holds between the first element of
  /// `word` and `value` (cuStreamWaitValue32 or cuStreamWaitValue64; one driver call). Anything
  /// may release it: a kernel, a write in another stream, the host through mapped pinned memory,
  /// another process through IPC memory. `word` is device-accessible memory, not managed
  /// memory; an empty, null or misaligned `word` throws cuwrap::usage_error before the driver.
  /// A wait that is never released hangs the stream, as on the GPU.
  template <memop_word T>
  void wait_value(device_span<T> word, std::remove_const_t<T> value,
                  wait_condition condition = wait_condition::greater_equal,
                  wait_flags flags = wait_flags::none,
                  std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "wait_value", where);
    const CUdeviceptr address = detail::memop_address(word, "stream::wait_value", where);
    const unsigned bits = static_cast<unsigned>(condition) | static_cast<unsigned>(flags);
    if constexpr (sizeof(T) == 4) {
      check(detail::driver().cuStreamWaitValue32(handle_, address, value, bits),
            "cuStreamWaitValue32", where);
    } else {
      check(detail::driver().cuStreamWaitValue64(handle_, address, value, bits),
            "cuStreamWaitValue64", where);
    }
  }
  /// Writes `value` to the first element of `word` when the stream reaches this point
  /// (cuStreamWriteValue32 or cuStreamWriteValue64; one driver call). Checks `word` as
  /// wait_value() does.
  template <memop_word T>
  requires(!std::is_const_v<T>) void write_value(
      device_span<T> word, T value, write_flags flags = write_flags::none,
      std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "write_value", where);
    const CUdeviceptr address = detail::memop_address(word, "stream::write_value", where);
    if constexpr (sizeof(T) == 4) {
      check(detail::driver().cuStreamWriteValue32(handle_, address, value,
                                                  static_cast<unsigned>(flags)),
            "cuStreamWriteValue32", where);
    } else {
      check(detail::driver().cuStreamWriteValue64(handle_, address, value,
                                                  static_cast<unsigned>(flags)),
            "cuStreamWriteValue64", where);
    }
  }
  /// Enqueues the operations of `ops` in order (cuStreamBatchMemOp; one driver call, none for
  /// an empty batch). The driver may write the operations' internal `alias` fields.
  void batch(memop_batch& ops, std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "stream", "batch", where);
    if (ops.empty()) return;
    check(detail::driver().cuStreamBatchMemOp(handle_, static_cast<unsigned>(ops.size()),
                                              ops.data(), 0),
          "cuStreamBatchMemOp", where);
  }
  /// As batch(memop_batch&), for a batch built in the call.
  void batch(memop_batch&& ops,
             std::source_location where = std::source_location::current()) const {
    batch(ops, where);
  }

  /// The stream's L2 access-policy window (cuStreamGetAttribute).
  [[nodiscard]] cuwrap::access_policy_window access_policy_window(
      std::source_location where = std::source_location::current()) const;
  /// Sets the L2 access-policy window for work enqueued from now on (cuStreamSetAttribute).
  void set_access_policy_window(const cuwrap::access_policy_window& window,
                                std::source_location where = std::source_location::current()) const;
  /// How synchronizing calls on the stream wait (cuStreamGetAttribute).
  [[nodiscard]] cuwrap::synchronization_policy synchronization_policy(
      std::source_location where = std::source_location::current()) const;
  /// Sets how synchronizing calls on the stream wait (cuStreamSetAttribute).
  void set_synchronization_policy(
      cuwrap::synchronization_policy policy,
      std::source_location where = std::source_location::current()) const;
  /// Sets the stream's priority for work enqueued from now on (cuStreamSetAttribute; the driver
  /// clamps it to cuCtxGetStreamPriorityRange). priority() reads it.
  void set_priority(int priority,
                    std::source_location where = std::source_location::current()) const;
  /// The memory synchronization domain of the stream's kernels (cuStreamGetAttribute).
  [[nodiscard]] cuwrap::memory_sync_domain memory_sync_domain(
      std::source_location where = std::source_location::current()) const;
  /// Sets the memory synchronization domain of the stream's kernels (cuStreamSetAttribute).
  void set_memory_sync_domain(cuwrap::memory_sync_domain domain,
                              std::source_location where = std::source_location::current()) const;
  /// The ids the stream's logical memory synchronization domains map to (cuStreamGetAttribute).
  [[nodiscard]] cuwrap::memory_sync_domain_map memory_sync_domain_map(
      std::source_location where = std::source_location::current()) const;
  /// Sets the ids the stream's logical memory synchronization domains map to
  /// (cuStreamSetAttribute).
  void set_memory_sync_domain_map(
      cuwrap::memory_sync_domain_map map,
      std::source_location where = std::source_location::current()) const;
  /// Copies every attribute of `source`, a stream of the same context, to this stream
  /// (cuStreamCopyAttributes).
  void copy_attributes_from(stream_ref source,
                            std::source_location where = std::source_location::current()) const;

  friend constexpr bool operator==(stream_ref, stream_ref) noexcept = default;

 protected:
  native_handle_type handle_;
};

/// Options for creating a stream.
struct stream_options {
  stream_flags flags = stream_flags::non_blocking;  ///< non-blocking unless asked otherwise
  int priority = 0;  ///< 0 is the default; others are checked against the context's range
};

namespace detail {
/// How a stream owner destroys its handle (cuStreamDestroy, after handing host-callback
/// exceptions nobody can collect any more to the nothrow handler); see unique_handle.
struct stream_traits {
  using ref_type = stream_ref;
  using state_type = std::shared_ptr<const context_owner>;
  static CUstream empty_handle() noexcept { return moved_from_stream(); }
  static void destroy(CUstream handle) noexcept {
    if (host_work_streams.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      report_host_exceptions(handle);
    }
    check_nothrow(driver().cuStreamDestroy(handle), "cuStreamDestroy");
  }
};
}  // namespace detail

/// An owning stream, destroyed with cuStreamDestroy (pending work still completes). Move-only;
/// keeps its context alive. A moved-from (or released) stream is empty, never the legacy
/// default stream: its operations throw cuwrap::usage_error, its destructor does nothing.
class stream : public detail::unique_handle<detail::stream_traits> {
 public:
  /// Creates a stream in `ctx` (cuStreamCreate, or cuStreamCreateWithPriority for a non-zero
  /// priority, which is first checked against cuCtxGetStreamPriorityRange). Makes `ctx`
  /// current for the call only if it is not. Throws cuwrap::error, or cuwrap::usage_error if
  /// `ctx` was moved from.
  explicit stream(const owning_context& ctx, stream_options options = {},
                  std::source_location where = std::source_location::current());
  /// Takes ownership of `handle`, which must belong to `ctx`. Throws cuwrap::usage_error (and
  /// takes nothing) if `ctx` was moved from.
  [[nodiscard]] static stream adopt(native_handle_type handle, const owning_context& ctx,
                                    std::source_location where = std::source_location::current()) {
    return stream{handle, ctx.lifetime_for("stream", "adopt", where)};
  }

  /// Starts capturing this stream's work into a graph (cuStreamBeginCapture); end the
  /// capture with the guard's end(). Defined in <cuwrap/capture.hpp>.
  [[nodiscard]] capture_guard begin_capture(
      capture_mode mode = capture_mode::global,
      std::source_location where = std::source_location::current()) const;
  /// The lifetime token of the stream's context, for objects that must keep it alive. Throws
  /// cuwrap::usage_error, naming `type` and `operation` (what is being made), if the stream
  /// was moved from.
  [[nodiscard]] const std::shared_ptr<const detail::context_owner>& context_lifetime(
      const char* type = "stream", const char* operation = "context_lifetime",
      std::source_location where = {}) const {
    detail::expect_argument_not_moved_from(!empty(), type, operation, "stream", where);
    return state();
  }

 private:
  stream(native_handle_type handle, std::shared_ptr<const detail::context_owner> ctx) noexcept
      : unique_handle{handle, std::move(ctx)} {}
};

static_assert(!std::is_copy_constructible_v<stream> &&
              std::is_nothrow_move_constructible_v<stream>);
static_assert(sizeof(stream_ref) == sizeof(CUstream));
static_assert(sizeof(stream) == sizeof(CUstream) + sizeof(std::shared_ptr<int>));

// Here rather than in detail/event_ref.hpp: it needs the complete stream_ref.
inline void event_ref::record(stream_ref s, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "event", "record", where);
  detail::expect_argument_not_moved_from(!s.empty(), "event", "record", "stream", where);
  check(detail::driver().cuEventRecord(handle_, s.get()), "cuEventRecord", where);
}

}  // namespace cuwrap
