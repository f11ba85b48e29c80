// What the loaded driver is: the software driver or not, and the software driver's control table.
#include <swcuda/control.h>

#include "cuwrap/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/software_driver.hpp"

namespace cuwrap {
namespace {

// Loads the driver first (a failure throws at `where`), then asks it for the table.
const swcu_control* query_control_table(std::source_location where) {
  const void* table = nullptr;
  if (detail::load_process_driver(where).cuGetExportTable(&table, &SWCU_CONTROL_TABLE_ID) !=
      CUDA_SUCCESS) {
    return nullptr;
  }
  return static_cast<const swcu_control*>(table);
}

}  // namespace

bool is_software_driver(std::source_location where) {
  return query_control_table(where) != nullptr;
}

namespace software_driver {

bool is_loaded(std::source_location where) { return is_software_driver(where); }

const swcu_control* control_table() noexcept {
  try {
    return query_control_table({});
  } catch (...) {  // no driver at all
    return nullptr;
  }
}

const swcu_control& control(std::source_location where) {
  if (const auto* table = query_control_table(where)) {
    return *table;
  }
  detail::throw_error(make_error_code(CUDA_ERROR_NOT_SUPPORTED), "cuwrap::software_driver::control",
                      "the loaded driver '" + driver_path(where) +
                          "' is not cuwrap's software driver; set CUWRAP_DRIVER=software",
                      where);
}

}  // namespace software_driver
}  // namespace cuwrap
