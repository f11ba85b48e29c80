// The loaded driver: its version and where it came from.
#pragma once

#include <source_location>
#include <string>

#include "cuwrap/detail/driver.hpp"

namespace cuwrap {

/// The CUDA version the loaded driver supports, as 1000 * major + 10 * minor (13000 for
/// CUDA 13.0). Loads the driver on first use; throws cuwrap::error at `where` if there is none.
[[nodiscard]] inline int driver_version(
    std::source_location where = std::source_location::current()) {
  return detail::driver_info(detail::driver(), where).version;
}
/// The path of the loaded driver library (for example /usr/lib/x86_64-linux-gnu/libcuda.so.1,
/// or the software driver). Loads the driver on first use; throws cuwrap::error at `where` if
/// there is none.
[[nodiscard]] inline const std::string& driver_path(
    std::source_location where = std::source_location::current()) {
  return detail::driver_info(detail::driver(), where).path;
}
/// True when the loaded driver is cuwrap's software driver (it answers the control table's
/// export id). Loads the driver on first use; throws cuwrap::error at `where` if there is none.
[[nodiscard]] bool is_software_driver(std::source_location where = std::source_location::current());

}  // namespace cuwrap
