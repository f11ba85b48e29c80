// event_ref, the view of an event, on its own so that stream.hpp can use it without including
// event.hpp (the owner): event.hpp includes stream.hpp, never the other way round. Include
// <cuwrap/event.hpp> or <cuwrap/stream.hpp>, not this header: event_ref::record(stream_ref) is
// defined in stream.hpp, right after stream_ref, because it needs the complete stream_ref and
// must stay inline (one driver call).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <source_location>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap {

class stream_ref;

/// How a record is made (cuEventRecordWithFlags).
enum class event_record_flags : unsigned {
  none = CU_EVENT_RECORD_DEFAULT,  ///< an ordinary record (as cuEventRecord)
  /// In stream capture: an event record node, which records the event each time the graph runs
  /// (other processes and streams outside the graph can wait on it), instead of a dependency
  /// inside the capture. Outside capture the driver refuses it (CUDA_ERROR_INVALID_VALUE).
  external = CU_EVENT_RECORD_EXTERNAL,
};

/// A non-owning view of an event. Cheap to copy; pass by value. A view of a moved-from event
/// is empty (a null handle): its operations throw cuwrap::usage_error before any driver call.
class event_ref {
 public:
  using native_handle_type = CUevent;

  /// Views `handle` (not owned).
  constexpr event_ref(native_handle_type handle) noexcept : handle_{handle} {}
  event_ref(std::nullptr_t) = delete;
  event_ref(int) = delete;

  /// The driver's handle (null for a moved-from event).
  [[nodiscard]] constexpr native_handle_type get() const noexcept { return handle_; }
  /// True for a moved-from or released event, and for views of one.
  [[nodiscard]] constexpr bool empty() const noexcept { return handle_ == nullptr; }

  /// Captures the work submitted to `s` so far (cuEventRecord; one driver call). Defined in
  /// <cuwrap/stream.hpp>.
  void record(stream_ref s, std::source_location where = std::source_location::current()) const;
  /// Records with `flags` (cuEventRecordWithFlags; one driver call), e.g.
  /// event_record_flags::external during stream capture.
  void record(stream_ref s, event_record_flags flags,
              std::source_location where = std::source_location::current()) const;
  /// Waits until the recorded work is done (cuEventSynchronize; one driver call).
  void synchronize(std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "event", "synchronize", where);
    check(detail::driver().cuEventSynchronize(handle_), "cuEventSynchronize", where);
  }
  /// True if the recorded work is done, false if not yet; throws for any other status
  /// (cuEventQuery; one driver call).
  [[nodiscard]] bool is_done(std::source_location where = std::source_location::current()) const {
    detail::expect_not_moved_from(!empty(), "event", "is_done", where);
    return check_ready(detail::driver().cuEventQuery(handle_), "cuEventQuery", where);
  }

  friend constexpr bool operator==(event_ref, event_ref) noexcept = default;

 protected:
  native_handle_type handle_;
};

}  // namespace cuwrap
