// rtc_error: the message with the first lines of the compiler's or linker's log.
#include "cuwrap/rtc/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace cuwrap {
namespace {

constexpr std::size_t quoted_lines = 10;  // enough for the first errors; the rest is in log()

// The first `quoted_lines` lines of `log`, each after a newline, then how many were left out.
std::string log_excerpt(std::string_view log) {
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0')) {
    log.remove_suffix(1);
  }
  std::string text;
  std::size_t lines = 0;
  while (!log.empty() && lines < quoted_lines) {
    const auto end = log.find('\n');
    text.append("\n").append(log.substr(0, end));
    ++lines;
    log = end == std::string_view::npos ? std::string_view{} : log.substr(end + 1);
  }
  if (!log.empty()) {
    std::size_t rest = 1;
    for (const char c : log) {
      rest += c == '\n' ? 1 : 0;
    }
    text.append("\n[").append(std::to_string(rest)).append(" more lines in log()]");
  }
  return text;
}

}  // namespace

rtc::rtc_error::rtc_error(std::error_code code, const char* api, std::string_view details,
                          std::string log, std::source_location where)
    : error{code, api, details, where},
      log_{std::make_shared<const std::string>(std::move(log))},
      text_{std::string{error::what()} + log_excerpt(*log_)} {}

namespace detail {

void throw_rtc_error(std::error_code code, const char* api, std::string_view details,
                     std::string log, std::source_location where) {
  throw rtc::rtc_error{code, api, details, std::move(log), where};
}

}  // namespace detail
}  // namespace cuwrap
