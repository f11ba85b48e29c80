#include "cuwrap/event.hpp"

namespace cuwrap {
namespace {

unsigned native_flags(event_flags flags) noexcept {
  unsigned native = has(flags, event_flags::timing) ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
  if (has(flags, event_flags::blocking_sync)) {
    native |= CU_EVENT_BLOCKING_SYNC;
  }
  if (has(flags, event_flags::interprocess)) {
    native |= CU_EVENT_INTERPROCESS;
  }
  return native;
}

CUevent create_event(const owning_context& ctx, event_flags flags, std::source_location where) {
  (void)ctx.lifetime_for("event", "event", where);  // a moved-from context throws here
  if (has(flags, event_flags::timing) && has(flags, event_flags::interprocess)) {
    detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuEventCreate",
                        "event_flags::timing cannot be combined with event_flags::interprocess",
                        where);
  }
  const scoped_current_context current{ctx, where};
  CUevent handle{};
  check(detail::driver().cuEventCreate(&handle, native_flags(flags)), "cuEventCreate", where);
  return handle;
}

}  // namespace

event::event(const owning_context& ctx, event_flags flags, std::source_location where)
    : unique_handle{create_event(ctx, flags, where), ctx.lifetime()} {}

void event_ref::record(stream_ref s, event_record_flags flags, std::source_location where) const {
  detail::expect_not_moved_from(!empty(), "event", "record", where);
  detail::expect_argument_not_moved_from(!s.empty(), "event", "record", "stream", where);
  const CUresult r =
      detail::driver().cuEventRecordWithFlags(handle_, s.get(), static_cast<unsigned>(flags));
  if (r == CUDA_ERROR_INVALID_VALUE && flags == event_record_flags::external) {
    detail::throw_error(make_error_code(r), "cuEventRecordWithFlags",
                        "event_record_flags::external is valid only in a capturing stream", where);
  }
  check(r, "cuEventRecordWithFlags", where);
}

std::chrono::duration<float, std::milli> elapsed(event_ref start, event_ref stop,
                                                 std::source_location where) {
  detail::expect_argument_not_moved_from(!start.empty(), nullptr, "elapsed", "start event", where);
  detail::expect_argument_not_moved_from(!stop.empty(), nullptr, "elapsed", "stop event", where);
  float ms = 0;
  const CUresult r = detail::driver().cuEventElapsedTime(&ms, start.get(), stop.get());
  if (r == CUDA_ERROR_INVALID_HANDLE) {
    detail::throw_error(make_error_code(r), "cuEventElapsedTime",
                        "both events must be created with event_flags::timing and recorded", where);
  }
  if (r == CUDA_ERROR_NOT_READY) {
    detail::throw_error(make_error_code(r), "cuEventElapsedTime",
                        "the recorded work of both events has not completed yet", where);
  }
  check(r, "cuEventElapsedTime", where);
  return std::chrono::duration<float, std::milli>{ms};
}

}  // namespace cuwrap
