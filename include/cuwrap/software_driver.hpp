// cuwrap's software driver, seen from a program: whether it is the loaded driver, and its
// control table (call counters, live handles, fault rules, kernel emulation) for tests.
#pragma once

#include <source_location>

// The control table's type, defined in <swcuda/control.h> (target cuwrap::swcuda): include
// that header to use its members.
struct swcu_control;

namespace cuwrap::software_driver {

/// True when the loaded driver is cuwrap's software driver (CUWRAP_DRIVER=software, or a path to
/// it). Loads the driver on first use; throws cuwrap::error at `where` if there is none.
[[nodiscard]] bool is_loaded(std::source_location where = std::source_location::current());

/// The software driver's control table (cuGetExportTable with SWCU_CONTROL_TABLE_ID), or null
/// when the loaded driver is another one. Include <swcuda/control.h> to use its members: count
/// calls (call_count), check live handles (live_handles_total), inject faults
/// (add_fault_rule), register host functions for kernels (register_kernel).
[[nodiscard]] const swcu_control* control_table() noexcept;

/// The control table; throws cuwrap::error (CUDA_ERROR_NOT_SUPPORTED) naming the loaded
/// driver's path when it is not the software driver.
[[nodiscard]] const swcu_control& control(
    std::source_location where = std::source_location::current());

}  // namespace cuwrap::software_driver
