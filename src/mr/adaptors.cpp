// The out-of-line parts of the adaptors and resource-backed buffers: a logged call as a line,
// and a failed stream-ordered deallocation in a destructor.
#include <ostream>

#include "cuwrap/error.hpp"
#include "cuwrap/mr/logging_resource.hpp"
#include "cuwrap/mr/resource_buffer.hpp"

namespace cuwrap::mr {

std::ostream& operator<<(std::ostream& out, const resource_call& call) {
  if (call.operation == resource_call::kind::deallocate) {
    out << "deallocate " << call.pointer << ' ' << call.bytes << " bytes (alignment "
        << call.alignment << ')';
  } else {
    out << "allocate " << call.bytes << " bytes (alignment " << call.alignment << ')';
  }
  if (call.stream) {
    out << " on stream " << static_cast<const void*>(call.stream->get());
  }
  if (call.operation == resource_call::kind::allocate) {
    if (call.failed) {
      out << " failed";
    } else {
      out << " -> " << call.pointer;
    }
  }
  return out;
}

namespace detail {

void report_deallocation_failure(std::exception_ptr error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const cuwrap::error& e) {
    cuwrap::detail::report_nothrow(e.code(), e.api());
  } catch (...) {
    cuwrap::detail::report_nothrow(CUDA_ERROR_UNKNOWN, "deallocate");
  }
}

}  // namespace detail
}  // namespace cuwrap::mr
