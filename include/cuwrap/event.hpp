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
#include "cuwrap/detail/event_ref.hpp"
#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/flags.hpp"
#include "cuwrap/stream.hpp"  // event_ref::record(stream_ref)

namespace cuwrap {

/// How an event is created. Timing is off unless asked for: CUDA's default (timing on) makes
/// every record and wait slower. Combine with |; test with has().
enum class event_flags : unsigned {
  none = 0,           ///< no timing, spin on synchronize
  timing = 1,         ///< record timestamps, for elapsed()
  blocking_sync = 2,  ///< synchronize() blocks the thread instead of spinning
  interprocess = 4,   ///< shareable with other processes (not with timing)
};
/// event_flags combine with |, & and has() (cuwrap/flags.hpp).
template <>
inline constexpr bool is_flags_enum<event_flags> = true;

namespace detail {
/// How an event owner destroys its handle (cuEventDestroy); see unique_handle.
struct event_traits {
  using ref_type = event_ref;
  using state_type = std::shared_ptr<const context_owner>;
  static constexpr CUevent empty_handle() noexcept { return nullptr; }
  static void destroy(CUevent handle) noexcept {
    check_nothrow(driver().cuEventDestroy(handle), "cuEventDestroy");
  }
};
}  // namespace detail

/// An owning event, destroyed with cuEventDestroy. Move-only; keeps its context alive. A
/// moved-from event is empty: its operations throw cuwrap::usage_error, its destructor does
/// nothing.
class event : public detail::unique_handle<detail::event_traits> {
 public:
  /// Creates an event in `ctx` (cuEventCreate, with `ctx` made current if it is not).
  /// Throws cuwrap::error; `timing | interprocess` is rejected before the driver is called.
  explicit event(const owning_context& ctx, event_flags flags = event_flags::none,
                 std::source_location where = std::source_location::current());
  /// Takes ownership of `handle`, which must belong to `ctx`. Throws cuwrap::usage_error (and
  /// takes nothing) if `ctx` was moved from.
  [[nodiscard]] static event adopt(native_handle_type handle, const owning_context& ctx,
                                   std::source_location where = std::source_location::current()) {
    return event{handle, ctx.lifetime_for("event", "adopt", where)};
  }

 private:
  event(native_handle_type handle, std::shared_ptr<const detail::context_owner> ctx) noexcept
      : unique_handle{handle, std::move(ctx)} {}
};

static_assert(!std::is_copy_constructible_v<event> && std::is_nothrow_move_constructible_v<event>);
static_assert(sizeof(event_ref) == sizeof(CUevent));
static_assert(sizeof(event) == sizeof(CUevent) + sizeof(std::shared_ptr<int>));

/// The time between two recorded events (cuEventElapsedTime). Both must have been created with
/// event_flags::timing and recorded; otherwise the error says so.
[[nodiscard]] std::chrono::duration<float, std::milli> elapsed(
    event_ref start, event_ref stop, std::source_location where = std::source_location::current());

}  // namespace cuwrap
