// Driver logs (cuLogs*, CUDA 12.9): the messages the software driver prints on stderr are also
// kept in a bounded buffer that cuLogsDumpToMemory / cuLogsDumpToFile read, and handed to the
// callbacks registered with cuLogsRegisterCallback.
#pragma once

#include <string>

#include "core/cuda_api.hpp"

namespace swcu {

/// Prints "swcuda: <message>" on stderr and keeps `message` as a driver log entry; registered
/// callbacks receive it when the driver call that made it returns (outside the driver's lock,
/// so they may call the driver). Thread-safe; usable under the state lock.
void report(CUlogLevel level, const std::string& message) noexcept;

/// Hands the entries made since the last delivery to the registered callbacks. Called by every
/// export after it released the state lock (api.hpp); costs one atomic load when there is none.
void deliver_logs() noexcept;

}  // namespace swcu
