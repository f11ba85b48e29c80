// Errors of NVRTC and nvJitLink: error codes, check(), and rtc::rtc_error, which carries the
// compiler's or linker's log.
#pragma once

#include <nvJitLink.h>
#include <nvrtc.h>

#include <memory>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "cuwrap/error.hpp"

namespace cuwrap {

/// An NVRTC status as a std::error_code in nvrtc_category().
[[nodiscard]] inline std::error_code make_error_code(nvrtcResult r) noexcept {
  return {static_cast<int>(r), nvrtc_category()};
}
/// An nvJitLink status as a std::error_code in nvjitlink_category().
[[nodiscard]] inline std::error_code make_error_code(nvJitLinkResult r) noexcept {
  return {static_cast<int>(r), nvjitlink_category()};
}

/// Throws cuwrap::error if `result` is not NVRTC_SUCCESS. `api` names the C function.
inline void check(nvrtcResult result, const char* api,
                  std::source_location where = std::source_location::current()) {
  if (result != NVRTC_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(result), api, {}, where);
  }
}
/// Throws cuwrap::error if `result` is not NVJITLINK_SUCCESS. `api` names the C function.
inline void check(nvJitLinkResult result, const char* api,
                  std::source_location where = std::source_location::current()) {
  if (result != NVJITLINK_SUCCESS) [[unlikely]] {
    detail::throw_error(make_error_code(result), api, {}, where);
  }
}

namespace rtc {

/// A failed compilation (NVRTC) or link (nvJitLink). log() is the compiler's or linker's
/// whole log; what() names the program or the inputs and quotes the log's first lines:
///
///     nvrtcCompileProgram(program saxpy.cu): compilation (NVRTC_ERROR_COMPILATION) at x.cpp:9
///     saxpy.cu(3): error: expected a ";"
class [[gnu::visibility("default")]] rtc_error : public error {
 public:
  /// An error of `code` from `api`; `details` name the program or the link inputs; `log` is
  /// the compiler's or linker's log, of which what() quotes the first lines.
  rtc_error(std::error_code code, const char* api, std::string_view details, std::string log,
            std::source_location where);

  /// The compiler's or linker's whole log (NVRTC's program log; nvJitLink's error log).
  [[nodiscard]] const std::string& log() const noexcept { return *log_; }
  /// The message of cuwrap::error, then the log's first lines.
  [[nodiscard]] const char* what() const noexcept override { return text_.what(); }

 private:
  std::shared_ptr<const std::string> log_;  // shared: copying an exception never throws
  std::runtime_error text_;
};

}  // namespace rtc

namespace detail {
/// Throws rtc::rtc_error. Out of line: the success paths stay a compare and a branch.
[[noreturn]] void throw_rtc_error(std::error_code code, const char* api, std::string_view details,
                                  std::string log, std::source_location where);
}  // namespace detail

/// For destructors: passes a failure to the nothrow handler (see set_nothrow_error_handler()).
inline void check_nothrow(nvrtcResult result, const char* api) noexcept {
  if (result != NVRTC_SUCCESS) [[unlikely]] {
    detail::report_nothrow(make_error_code(result), api);
  }
}
/// For destructors: passes a failure to the nothrow handler (see set_nothrow_error_handler()).
inline void check_nothrow(nvJitLinkResult result, const char* api) noexcept {
  if (result != NVJITLINK_SUCCESS) [[unlikely]] {
    detail::report_nothrow(make_error_code(result), api);
  }
}

}  // namespace cuwrap
