#include "cuwrap/driver_logs.hpp"

#include <mutex>
#include <utility>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/supports.hpp"

namespace cuwrap {
namespace {

constexpr std::size_t kDriverLogCapacity = 25600 + 1;  // cuda.h: the driver keeps 25600 bytes

std::mutex attach_mutex;
CUlogIterator next_entry = 0;  // under attach_mutex

// The entries from `*it` on (advancing it), or "" when there are none or the dump fails.
std::string dump(CUlogIterator* it) {
  std::string buffer(kDriverLogCapacity, '\0');
  std::size_t size = buffer.size();
  if (detail::driver().cuLogsDumpToMemory(it, buffer.data(), &size, 0) != CUDA_SUCCESS) {
    return {};
  }
  buffer.resize(size);
  while (!buffer.empty() && buffer.back() == '\n') {
    buffer.pop_back();
  }
  return buffer;
}

// What throw_error() appends while attaching is on.
std::string logs_since_last_error() {
  const std::lock_guard lock(attach_mutex);
  std::string entries = dump(&next_entry);
  if (entries.empty()) {
    return {};
  }
  for (std::size_t at = entries.find('\n'); at != std::string::npos;
       at = entries.find('\n', at + 3)) {
    entries.replace(at, 1, " | ");
  }
  return "driver log: " + entries;
}

void CUDA_CB deliver(void* data, CUlogLevel level, char* message, size_t length) {
  try {
    (*static_cast<log_subscription::callback*>(data))(static_cast<log_level>(level),
                                                      std::string_view{message, length});
  } catch (...) {  // nothing may cross the driver's C ABI
    check_nothrow(CUDA_ERROR_UNKNOWN, "log_subscription callback");
  }
}

}  // namespace

std::string driver_logs(std::source_location where) {
  std::string buffer(kDriverLogCapacity, '\0');
  std::size_t size = buffer.size();
  check(detail::driver().cuLogsDumpToMemory(nullptr, buffer.data(), &size, 0), "cuLogsDumpToMemory",
        where);
  buffer.resize(size);
  return buffer;
}

bool attach_driver_logs_to_errors(bool on, std::source_location where) {
  if (!on) {
    detail::set_error_log_source(nullptr);
    return true;
  }
  if (!supports(feature::driver_logs, where)) {
    return false;
  }
  {
    const std::lock_guard lock(attach_mutex);
    check(detail::driver().cuLogsCurrent(&next_entry, 0), "cuLogsCurrent", where);
  }
  detail::set_error_log_source(&logs_since_last_error);
  return true;
}

log_subscription::log_subscription(callback fn, std::source_location where)
    : fn_{std::make_unique<callback>(std::move(fn))} {
  check(detail::driver().cuLogsRegisterCallback(&deliver, fn_.get(), &handle_),
        "cuLogsRegisterCallback", where);
}

log_subscription::~log_subscription() {
  check_nothrow(detail::driver().cuLogsUnregisterCallback(handle_), "cuLogsUnregisterCallback");
}

}  // namespace cuwrap
