#include "cuwrap/supports.hpp"

#include <array>
#include <string_view>
#include <vector>

#include "cuwrap/detail/driver.hpp"

namespace cuwrap {
namespace {

struct requirement {
  feature which;
  std::string_view name;
  int version;
  std::vector<std::string_view> entries;  ///< cuda.h names of the table's entries
};

// One row per feature, in enum order.
const std::array<requirement, 12> requirements{{
    {feature::memory_pools, "memory_pools", 11020, {"cuMemPoolCreate", "cuMemAllocFromPoolAsync"}},
    {feature::virtual_memory,
     "virtual_memory",
     10020,
     {"cuMemCreate", "cuMemAddressReserve", "cuMemMap", "cuMemSetAccess"}},
    {feature::libraries, "libraries", 12000, {"cuLibraryLoadData", "cuLibraryGetKernel"}},
    {feature::tensor_maps, "tensor_maps", 12000, {"cuTensorMapEncodeTiled"}},
    {feature::multicast, "multicast", 12010, {"cuMulticastCreate", "cuMulticastBindMem"}},
    {feature::conditional_graph_nodes,
     "conditional_graph_nodes",
     12030,
     {"cuGraphConditionalHandleCreate"}},
    {feature::green_contexts,
     "green_contexts",
     12040,
     {"cuDeviceGetDevResource", "cuDevSmResourceSplitByCount", "cuGreenCtxCreate"}},
    {feature::stream_memory_operations,
     "stream_memory_operations",
     12000,
     {"cuStreamWaitValue32", "cuStreamWriteValue32", "cuStreamBatchMemOp"}},
    {feature::context_events, "context_events", 12050, {"cuCtxRecordEvent", "cuCtxWaitEvent"}},
    {feature::checkpoint,
     "checkpoint",
     12080,
     {"cuCheckpointProcessGetState", "cuCheckpointProcessLock", "cuCheckpointProcessCheckpoint",
      "cuCheckpointProcessRestore", "cuCheckpointProcessUnlock"}},
    {feature::driver_logs,
     "driver_logs",
     12090,
     {"cuLogsRegisterCallback", "cuLogsUnregisterCallback", "cuLogsCurrent"}},
    {feature::profiler, "profiler", 4000, {"cuProfilerStart", "cuProfilerStop"}},
}};

const requirement* find(feature f) noexcept {
  const auto index = static_cast<std::size_t>(f);
  return index < requirements.size() ? &requirements[index] : nullptr;
}

}  // namespace

bool supports(feature f, std::source_location where) {
  const requirement* r = find(f);
  const detail::driver_table& table = detail::load_process_driver(where);
  if (r == nullptr || detail::driver_info(table, where).version < r->version) {
    return false;
  }
  for (const std::string_view entry : r->entries) {
    if (!detail::entry_loaded(table, entry)) {
      return false;
    }
  }
  return true;
}

int minimum_driver_version(feature f) noexcept {
  const requirement* r = find(f);
  return r != nullptr ? r->version : 0;
}

std::string_view to_string(feature f) noexcept {
  const requirement* r = find(f);
  return r != nullptr ? r->name : std::string_view{"unknown feature"};
}

}  // namespace cuwrap
