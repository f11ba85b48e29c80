// Errors: one std::error_category per CUDA status enum, cuwrap::error, check().
#pragma once

#include <cuda.h>

#include <cstddef>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace cuwrap {

/// Error conditions that driver, runtime, NVRTC and nvJitLink codes map to, so callers can
/// write `e.code() == cuwrap::errc::out_of_memory` whichever API failed.
enum class errc {
  out_of_memory = 1,        ///< an allocation failed
  invalid_value,            ///< an argument was out of range
  invalid_handle,           ///< a stale, destroyed or wrong-kind handle
  invalid_context,          ///< no context is current, or the context is gone
  invalid_device,           ///< a device ordinal or handle is not valid
  not_ready,                ///< asynchronous work has not finished yet
  not_initialized,          ///< the driver was not initialized
  no_device,                ///< the driver found no CUDA device
  driver_unavailable,       ///< no usable driver: missing, the toolkit stub, or too old
  not_supported,            ///< the driver or device does not support the operation
  not_permitted,            ///< the operation is not allowed in this state
  not_found,                ///< a named symbol, kernel or global does not exist
  invalid_image,            ///< a module image could not be loaded
  launch_failure,           ///< a kernel faulted; the context is unusable (sticky)
  peer_access_unsupported,  ///< two devices cannot access each other's memory
  compilation_failed,       ///< NVRTC or nvJitLink rejected the input
  stream_capture,           ///< an operation is invalid while a stream is capturing
};

/// The category of `CUresult` codes ("cuda_driver").
[[nodiscard]] const std::error_category& driver_category() noexcept;
/// The category of `cudaError_t` codes ("cuda_runtime").
[[nodiscard]] const std::error_category& runtime_category() noexcept;
/// The category of `nvrtcResult` codes ("nvrtc").
[[nodiscard]] const std::error_category& nvrtc_category() noexcept;
/// The category of `nvJitLinkResult` codes ("nvjitlink").
[[nodiscard]] const std::error_category& nvjitlink_category() noexcept;
/// The category of cuwrap::errc conditions ("cuwrap").
[[nodiscard]] const std::error_category& errc_category() noexcept;

/// A driver status as a std::error_code.
[[nodiscard]] inline std::error_code make_error_code(CUresult r) noexcept {
  return {static_cast<int>(r), driver_category()};
}
/// A cuwrap::errc as a std::error_condition.
[[nodiscard]] inline std::error_condition make_error_condition(errc e) noexcept {
  return {static_cast<int>(e), errc_category()};
}

/// The enumerator name of a code in one of cuwrap's categories ("CUDA_ERROR_OUT_OF_MEMORY"),
/// or "" for an unknown code. Works with no driver loaded.
[[nodiscard]] std::string_view error_name(std::error_code code) noexcept;

/// True for errors after which the context is unusable (illegal address, launch failure, ...).
[[nodiscard]] bool is_sticky(std::error_code code) noexcept;

/// Every failure of a CUDA call. what() reads like
/// "cuMemAlloc(1024 bytes): out of memory (CUDA_ERROR_OUT_OF_MEMORY) [device 0] at x.cpp:42".
class [[gnu::visibility("default")]] error : public std::system_error {
 public:
  /// An error of `code` from the C function `api`; `details` (arguments, device) go into
  /// what() after the API name; `where` is the user's call site.
  error(std::error_code code, const char* api, std::string_view details,
        std::source_location where);

  /// The C function that failed ("cuMemAlloc"), or the cuwrap operation for checks made
  /// before any call.
  [[nodiscard]] const char* api() const noexcept { return api_; }
  /// The call site in user code where the failing cuwrap function was called.
  [[nodiscard]] const std::source_location& where() const noexcept { return where_; }
  /// True when the error leaves the context unusable (see is_sticky()).
  [[nodiscard]] bool sticky() const noexcept { return is_sticky(code()); }
  /// The whole message: API, details, the code's description and name, the call site.
  [[nodiscard]] const char* what() const noexcept override { return text_.what(); }

 private:
  std::runtime_error text_;  // reference-counted, so copying an error never throws
  const char* api_;
  std::source_location where_;
};

/// Thrown for allocation failures, so callers can catch them alone.
class [[gnu::visibility("default")]] out_of_memory : public error {
 public:
  using error::error;
};

/// A programming error found before any driver call: an operation on a moved-from (or
/// released) owner, or on a view made from one. what() names the type and the operation, e.g.
/// "cuwrap::stream::synchronize: this stream was moved from (or released) at main.cpp:7".
class [[gnu::visibility("default")]] usage_error : public std::logic_error {
 public:
  /// `message` as is, followed by " at file:line" when `where` is known.
  usage_error(std::string_view message, std::source_location where);
  /// The call site in user code, when the operation takes one (line() == 0 otherwise).
  [[nodiscard]] const std::source_location& where() const noexcept { return where_; }

 private:
  std::source_location where_;
};

namespace detail {
/// Throws cuwrap::error (or out_of_memory) for a failed call. Out of line: the success path
/// of check() stays a compare and a branch.
[[noreturn]] void throw_error(std::error_code code, const char* api, std::string_view details,
                              std::source_location where);
/// throw_error() without the driver logs that attach_driver_logs_to_errors() adds.
[[noreturn]] void throw_error_without_logs(std::error_code code, const char* api,
                                           std::string_view details, std::source_location where);
/// Sets what throw_error() appends to an error's details (driver_logs.cpp, while
/// attach_driver_logs_to_errors(true) is on); nullptr: nothing. Thread-safe.
void set_error_log_source(std::string (*source)()) noexcept;
/// Throws usage_error "cuwrap::<type>::<operation>: this <type> was moved from (or released)".
/// Out of line: callers pay a compare and a branch.
[[noreturn, gnu::cold]] void throw_moved_from(const char* type, const char* operation,
                                              std::source_location where = {});
/// Throws usage_error "cuwrap::<type>::<operation>: the <argument> was moved from (or
/// released)", for an argument that is an empty view or owner (`type` null, for a free
/// function: "cuwrap::<operation>: ...").
[[noreturn, gnu::cold]] void throw_moved_from_argument(const char* type, const char* operation,
                                                       const char* argument,
                                                       std::source_location where = {});
/// Throws usage_error "cuwrap::device_span::<operation>: elements [offset, offset + count)
/// are outside the span's <size> elements" at `where`.
[[noreturn, gnu::cold]] void throw_out_of_span(const char* operation, std::size_t offset,
                                               std::size_t count, std::size_t size,
                                               std::source_location where);
/// The check every operation of an owner or view makes before its driver call: throws
/// usage_error naming `type` and `operation` unless `usable`.
[[gnu::always_inline]] inline void expect_not_moved_from(bool usable, const char* type,
                                                         const char* operation,
                                                         std::source_location where = {}) {
  if (!usable) [[unlikely]] {
    throw_moved_from(type, operation, where);
  }
}
/// As expect_not_moved_from, for an argument of the operation.
[[gnu::always_inline]] inline void expect_argument_not_moved_from(bool usable, const char* type,
                                                                  const char* operation,
                                                                  const char* argument,
                                                                  std::source_location where = {}) {
  if (!usable) [[unlikely]] {
    throw_moved_from_argument(type, operation, argument, where);
  }
}
/// Reports a failure in a destructor to the installed handler; never throws.
void report_nothrow(std::error_code code, const char* api) noexcept;
inline void report_nothrow(CUresult result, const char* api) noexcept {
  report_nothrow(make_error_code(result), api);
}
}  // namespace detail

/// Throws cuwrap::error if `result` is not CUDA_SUCCESS. `api` names the C function.
inline void check(CUresult result, const char* api,
                  std::source_location where = std::source_location::current()) {
  if (result != CUDA_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(result), api, {}, where);
  }
}

/// For queries: returns false for CUDA_ERROR_NOT_READY, true for CUDA_SUCCESS, throws
/// cuwrap::error for anything else.
[[nodiscard]] inline bool check_ready(
    CUresult result, const char* api,
    std::source_location where = std::source_location::current()) {
  if (result == CUDA_SUCCESS) [[likely]] {
    return true;
  }
  if (result != CUDA_ERROR_NOT_READY) {
    detail::throw_error(make_error_code(result), api, {}, where);
  }
  return false;
}

/// For destructors: ignores success and CUDA_ERROR_DEINITIALIZED (the driver shutting down
/// at process exit) and passes any other failure to the nothrow handler.
inline void check_nothrow(CUresult result, const char* api) noexcept {
  if (result != CUDA_SUCCESS && result != CUDA_ERROR_DEINITIALIZED) [[unlikely]] {
    detail::report_nothrow(result, api);
  }
}

/// Receives failures that a destructor cannot throw: the code and the C function's name.
using nothrow_error_handler = void (*)(std::error_code code, const char* api) noexcept;

/// Installs `handler` (nullptr restores the default, which prints one line on stderr) and
/// returns the previous one. Thread-safe.
nothrow_error_handler set_nothrow_error_handler(nothrow_error_handler handler) noexcept;

}  // namespace cuwrap

template <>
struct std::is_error_condition_enum<cuwrap::errc> : std::true_type {};
