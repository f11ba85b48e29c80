// The driver's configuration, from SWCUDA_* environment variables (docs/software-driver.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/faults.hpp"

namespace swcu {

enum class ExecMode { immediate, deferred };

struct Config {
  static constexpr int kMaxDevices = 16;

  int devices = 1;                                 ///< SWCUDA_DEVICES
  int driver_version = 13000;                      ///< SWCUDA_DRIVER_VERSION
  unsigned long long device_memory = 80ULL << 30;  ///< SWCUDA_DEVICE_MEMORY, bytes per device
  ExecMode exec = ExecMode::immediate;             ///< SWCUDA_EXEC
  std::size_t launch_log = 4096;  ///< SWCUDA_LAUNCH_LOG: launches the log keeps (the newest)
  double kernel_timeout = 0;      ///< SWCUDA_KERNEL_TIMEOUT, seconds a kernel may run; 0: no limit
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

/// Reads the environment: `getenv` is std::getenv in the driver.
[[nodiscard]] Config read_config(const char* (*getenv)(const char*));

/// The configuration, read from the environment the first time it is needed.
[[nodiscard]] const Config& config();

}  // namespace swcu
