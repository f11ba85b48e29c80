// The swcu_control table handed out by cuGetExportTable(SWCU_CONTROL_TABLE_ID).
#pragma once

#include "core/cuda_api.hpp"  // before control.h, which includes cuda.h
#include "swcuda/control.h"

namespace swcu {

[[nodiscard]] const swcu_control* control_table() noexcept;

}  // namespace swcu
