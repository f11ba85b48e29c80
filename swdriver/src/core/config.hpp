// The driver's configuration, from SWCUDA_* environment variables (docs/software-driver.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/faults.hpp"

namespace swcu {

enum class ExecMode { immediate, deferred };

/// What stamps an event record when it runs (SWCUDA_EVENT_TIME).
enum class EventTime {
  host,       ///< the host's monotonic clock: elapsed times are real
  simulated,  ///< the device's simulated clock: deterministic elapsed times
};

struct Config {
  static constexpr int kMaxDevices = 16;
  /// The oldest SWCUDA_DRIVER_VERSION: the driver implements the CUDA 12.0 and later driver API
  /// (cuGetProcAddress_v2, libraries, the `_v2`/`_v3` ABIs of cuda.h 12+), so an older version
  /// would advertise a driver whose functions it does not have.
  static constexpr int kMinDriverVersion = 12000;
  /// The smallest SWCUDA_DEVICE_MEMORY, 16 MiB: a context's default limits promise an 8 MiB
  /// device heap and a 1 MiB printf FIFO, and a program needs room beyond them.
  static constexpr unsigned long long kMinDeviceMemory = 16ULL << 20;

  int devices = 1;                                 ///< SWCUDA_DEVICES
  int driver_version = 13000;                      ///< SWCUDA_DRIVER_VERSION
  unsigned long long device_memory = 80ULL << 30;  ///< SWCUDA_DEVICE_MEMORY, bytes per device
  ExecMode exec = ExecMode::immediate;             ///< SWCUDA_EXEC
  EventTime event_time = EventTime::host;          ///< SWCUDA_EVENT_TIME
  std::size_t launch_log = 4096;  ///< SWCUDA_LAUNCH_LOG: launches the log keeps (the newest)
  double kernel_timeout = 0;      ///< SWCUDA_KERNEL_TIMEOUT, seconds a kernel may run; 0: no limit
  /// SWCUDA_STREAM_WAIT_TIMEOUT, seconds a synchronizing call waits for a stream memory wait
  /// that does not hold (cuStreamWaitValue*); 0: no limit, as on a GPU.
  double stream_wait_timeout = 0;
  /// SWCUDA_WORKERS: host threads that run a launch's CTAs (default: the hardware threads).
  unsigned workers = 1;
  /// The largest SWCUDA_WORKERS.
  static constexpr unsigned kMaxWorkers = 1024;
  std::vector<FaultRule> faults;  ///< SWCUDA_FAULTS, installed by cuInit
  /// SWCUDA_P2P: p2p[from * kMaxDevices + to] says whether `from` can access `to`.
  std::vector<bool> p2p = std::vector<bool>(kMaxDevices * kMaxDevices, true);
  /// The first invalid variable, as one line for stderr; empty when all are valid. Variables
  /// that are invalid keep their defaults.
  std::string error;

  [[nodiscard]] bool can_access_peer(int from, int to) const {
    return from != to && p2p[static_cast<std::size_t>(from * kMaxDevices + to)];
  }
};

/// `text` without leading and trailing blanks (spaces, tabs, line ends).
[[nodiscard]] std::string_view trim_blanks(std::string_view text) noexcept;

/// A setting from the environment as every SWCUDA_* variable reads: blanks around the value are
/// ignored, and a value that is empty (or only blanks) means the variable is unset (nullopt).
[[nodiscard]] std::optional<std::string> setting(const char* name);

/// Reads the environment: `getenv` is std::getenv in the driver.
[[nodiscard]] Config read_config(const char* (*getenv)(const char*));

/// The configuration, read from the environment the first time it is needed.
[[nodiscard]] const Config& config();

/// The time an event record that runs now takes, in nanoseconds: the host's monotonic clock, or
/// `device_clock_ns` (the device's simulated clock) under SWCUDA_EVENT_TIME=simulated.
[[nodiscard]] unsigned long long event_time_ns(unsigned long long device_clock_ns);

}  // namespace swcu
