// Events: markers in a stream's work, for ordering streams and timing.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <type_traits>
#include <utility>

// elapsed() returns a std::chrono::duration. libstdc++'s <bits/chrono.h> has durations without
// the calendar, time-zone and formatting parts of C++20's <chrono>, which add about 90 ms to
// every translation unit (docs/performance.md); other libraries get <chrono>.
#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif

#include "cuwrap/context.hpp"
#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap {

class stream_ref;

/// How an event is created. Timing is off unless asked for: CUDA's default (timing on) makes
/// every record and wait slower.
enum class event_flags : unsigned {
  none = 0,           ///< no timing, spin on synchronize
  timing = 1,         ///< record timestamps, for elapsed()
  blocking_sync = 2,  ///< synchronize() blocks the thread instead of spinning
  interprocess = 4,   ///< shareable with other processes (not with timing)
};

/// Combines event flags.
[[nodiscard]] constexpr event_flags operator|(event_flags a, event_flags b) noexcept {
  return static_cast<event_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
/// True if `flags` contains `flag`.
[[nodiscard]] constexpr bool has(event_flags flags, event_flags flag) noexcept {
  return (static_cast<unsigned>(flags) & static_cast<unsigned>(flag)) != 0;
}

/// A non-owning view of an event. Cheap to copy; pass by value.
class event_ref {
 public:
  using native_handle_type = CUevent;

  /// Views `handle` (not owned).
  constexpr event_ref(native_handle_type handle) noexcept : handle_{handle} {}
  event_ref(std::nullptr_t) = delete;
  event_ref(int) = delete;

  /// The driver's handle.
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }

  /// Captures the work submitted to `s` so far (cuEventRecord; one driver call).
  void record(stream_ref s, std::source_location where = std::source_location::current()) const;
  /// Waits until the recorded work is done (cuEventSynchronize; one driver call).
  void synchronize(std::source_location where = std::source_location::current()) const {
    check(detail::driver().cuEventSynchronize(handle_), "cuEventSynchronize", where);
  }
  /// True if the recorded work is done, false if not yet; throws for any other status
  /// (cuEventQuery; one driver call).
  [[nodiscard]] bool is_done(std::source_location where = std::source_location::current()) const {
    return check_ready(detail::driver().cuEventQuery(handle_), "cuEventQuery", where);
  }

  friend constexpr bool operator==(event_ref, event_ref) noexcept = default;

 protected:
  native_handle_type handle_;
};

/// An owning event, destroyed with cuEventDestroy. Move-only; keeps its context alive.
class event : public event_ref {
 public:
  /// Creates an event in `ctx` (cuEventCreate, with `ctx` made current if it is not).
  /// Throws cuwrap::error; `timing | interprocess` is rejected before the driver is called.
  explicit event(const owning_context& ctx, event_flags flags = event_flags::none,
                 std::source_location where = std::source_location::current());
  /// Takes ownership of `handle`, which must belong to `ctx`.
  [[nodiscard]] static event adopt(native_handle_type handle, const owning_context& ctx) noexcept {
    return event{handle, ctx.lifetime()};
  }
  event(event&& other) noexcept
      : event_ref{std::exchange(other.handle_, CUevent{})}, context_{std::move(other.context_)} {}
  event& operator=(event&& other) noexcept {
    if (this == &other) {
      return *this;
    }
    event old{std::move(*this)};  // destroys the previous event
    handle_ = std::exchange(other.handle_, CUevent{});
    context_ = std::move(other.context_);
    return *this;
  }
  ~event() {
    if (handle_ != nullptr) {
      check_nothrow(detail::driver().cuEventDestroy(handle_), "cuEventDestroy");
    }
  }

  /// Gives up ownership: the caller must destroy the returned handle.
  [[nodiscard]] native_handle_type release() noexcept { return std::exchange(handle_, CUevent{}); }

 private:
  event(native_handle_type handle, std::shared_ptr<const detail::context_owner> ctx) noexcept
      : event_ref{handle}, context_{std::move(ctx)} {}

  std::shared_ptr<const detail::context_owner> context_;
};

static_assert(!std::is_copy_constructible_v<event> && std::is_nothrow_move_constructible_v<event>);
static_assert(sizeof(event_ref) == sizeof(CUevent));
static_assert(sizeof(event) == sizeof(CUevent) + sizeof(std::shared_ptr<int>));

/// The time between two recorded events (cuEventElapsedTime). Both must have been created with
/// event_flags::timing and recorded; otherwise the error says so.
[[nodiscard]] std::chrono::duration<float, std::milli> elapsed(
    event_ref start, event_ref stop, std::source_location where = std::source_location::current());

}  // namespace cuwrap

// event_ref::record needs stream_ref; stream.hpp defines it.
#include "cuwrap/stream.hpp"  // IWYU pragma: export
