// Driver logs (cuLogs*, CUDA 12.9): the messages the driver keeps about failed calls, read
// back, received as they are made, or attached to cuwrap::error messages on request.
#pragma once

#include <cuda.h>

#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>

namespace cuwrap {

/// A log entry's level (CUlogLevel).
enum class log_level { error = CU_LOG_LEVEL_ERROR, warning = CU_LOG_LEVEL_WARNING };

/// The log entries the driver still keeps (it keeps a bounded buffer), one per line
/// (cuLogsDumpToMemory from the start). Throws cuwrap::error if the driver has no logs
/// (supports(feature::driver_logs) is false).
[[nodiscard]] std::string driver_logs(std::source_location where = std::source_location::current());

/// Opt-in: while on, each cuwrap::error thrown for a driver call carries the log entries the
/// driver made since the previous error (or since it was turned on), after its details:
/// "...; driver log: <entry> | <entry>". Off by default; costs nothing while off. Turning it on
/// with a driver without logs does nothing and returns false; otherwise returns true.
bool attach_driver_logs_to_errors(bool on,
                                  std::source_location where = std::source_location::current());

/// Receives each driver log entry as it is made, for this object's life
/// (cuLogsRegisterCallback / cuLogsUnregisterCallback). The driver calls `fn` from the thread
/// whose driver call made the entry; an exception it throws is handed to the nothrow
/// handler (set_nothrow_error_handler) as CUDA_ERROR_UNKNOWN.
class log_subscription {
 public:
  using callback = std::function<void(log_level, std::string_view)>;
  /// Registers `fn`. Throws cuwrap::error if the driver refuses or has no logs.
  explicit log_subscription(callback fn,
                            std::source_location where = std::source_location::current());
  ~log_subscription();
  log_subscription(const log_subscription&) = delete;
  log_subscription& operator=(const log_subscription&) = delete;

 private:
  std::unique_ptr<callback> fn_;  // stable address: the driver's user data
  CUlogsCallbackHandle handle_ = nullptr;
};

}  // namespace cuwrap
