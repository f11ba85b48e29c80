#include <swcuda/control.h>

#include "cuwrap/driver.hpp"

namespace cuwrap {

bool is_software_driver() {
  const void* table = nullptr;
  return detail::driver().cuGetExportTable(&table, &SWCU_CONTROL_TABLE_ID) == CUDA_SUCCESS &&
         table != nullptr;
}

}  // namespace cuwrap
