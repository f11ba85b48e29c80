// cuInit, cuDriverGetVersion and cuGetExportTable.
#include <cstdio>
#include <cstring>

#include "control/control.hpp"
#include "core/api.hpp"
#include "core/config.hpp"
#include "exec/launch.hpp"

namespace swcu {
namespace {

// A configuration error is printed once, however often cuInit is called.
void report(const std::string& message) {
  static std::once_flag once;
  std::call_once(once, [&message] { std::fprintf(stderr, "swcuda: %s\n", message.c_str()); });
}

}  // namespace
}  // namespace swcu

extern "C" {

CUresult cuInit(unsigned int Flags) {
  using namespace swcu;
  return call_uninitialized(Sym::cuInit, [Flags](State& s, Lock& lock) -> CUresult {
    const Config& c = config();
    if (!c.error.empty()) {
      report(c.error);
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (!s.env_faults_installed) {
      // SWCUDA_FAULTS rules count calls from the first cuInit on (this call not included).
      add_fault_rules(c.faults);
      s.env_faults_installed = true;
    }
    if (c.devices == 0) return CUDA_ERROR_NO_DEVICE;
    if (!s.initialized.load(std::memory_order_relaxed)) {
      // SWCUDA_KERNELS plug-ins, without the lock (they call the control API); once.
      lock.unlock();
      const CUresult plugins = load_kernel_plugins();
      lock.lock();
      if (plugins != CUDA_SUCCESS) return plugins;
    }
    if (!s.initialized.load(std::memory_order_relaxed)) {
      s.devices.assign(static_cast<std::size_t>(c.devices), Device{});
      s.initialized.store(true, std::memory_order_release);
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuDriverGetVersion(int* driverVersion) {
  return swcu::call_uninitialized(swcu::Sym::cuDriverGetVersion, [=](swcu::State&) -> CUresult {
    if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = swcu::config().driver_version;
    return CUDA_SUCCESS;
  });
}

CUresult cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  return swcu::call_uninitialized(swcu::Sym::cuGetExportTable, [=](swcu::State&) -> CUresult {
    if (ppExportTable == nullptr || pExportTableId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (std::memcmp(pExportTableId->bytes, SWCU_CONTROL_TABLE_ID.bytes,
                    sizeof SWCU_CONTROL_TABLE_ID.bytes) != 0) {
      return CUDA_ERROR_INVALID_VALUE;  // e.g. the CUDA runtime's private tables
    }
    *ppExportTable = swcu::control_table();
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
