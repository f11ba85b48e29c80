// stream_waiter: makes one stream wait for the work enqueued so far in another, reusing one
// event instead of creating one per wait.
#pragma once

#include <source_location>

#include "cuwrap/context.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/stream.hpp"

namespace cuwrap {

/// Makes streams wait for each other with one event it owns (timing off), recorded again for
/// each wait: cuStreamWaitEvent waits for the record made before it, so a later record does
/// not move an earlier wait, and no event is created or destroyed per wait. Move-only, like
/// the event; use one per thread (recording and waiting are two calls that another thread's
/// record could come between).
class stream_waiter {
 public:
  /// Creates the event in `ctx` (cuEventCreate with CU_EVENT_DISABLE_TIMING).
  explicit stream_waiter(const owning_context& ctx,
                         std::source_location where = std::source_location::current())
      : event_{ctx, event_flags::none, where} {}

  /// Makes later work in `waiting` wait for the work enqueued in `done_first` so far
  /// (cuEventRecord then cuStreamWaitEvent; two driver calls, no allocation).
  void operator()(stream_ref waiting, stream_ref done_first,
                  std::source_location where = std::source_location::current()) const {
    done_first.record(event_, where);
    waiting.wait(event_, where);
  }

  /// The event it records (for a timing-free event query, or to wait on elsewhere).
  [[nodiscard]] event_ref get() const noexcept { return event_; }

 private:
  event event_;
};

}  // namespace cuwrap
