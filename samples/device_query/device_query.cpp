// device_query: cuwrap's counterpart of NVIDIA's deviceQueryDrv sample. Prints the driver
// version and, for each device, its name, compute capability, memory, SMs, clocks and the
// key limits. Exits 1 with the loader's message when there is no usable driver.
//
//   device_query                          # the NVIDIA driver (libcuda.so.1)
//   CUWRAP_DRIVER=software device_query   # cuwrap's software driver
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>

namespace {

void row(const char* label, const std::string& value) {
  std::printf("  %-44s %s\n", label, value.c_str());
}

std::string mib(std::size_t bytes) {
  return std::to_string(bytes >> 20) + " MiB (" + std::to_string(bytes) + " bytes)";
}

void show(const cuwrap::device& dev) {
  const auto cc = dev.compute_capability();
  std::printf("\nDevice %d: \"%s\"\n", dev.ordinal(), dev.name().c_str());
  row("CUDA compute capability", std::to_string(cc.major) + "." + std::to_string(cc.minor));
  row("Total global memory", mib(dev.total_memory()));
  row("Multiprocessors", std::to_string(dev.multiprocessor_count()));
  row("GPU max clock rate", std::to_string(dev.clock_rate_khz() / 1000) + " MHz");
  row("Memory clock rate", std::to_string(dev.memory_clock_rate_khz() / 1000) + " MHz");
  row("Memory bus width",
      std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH>()) + " bits");
  row("L2 cache size", mib(dev.attribute<CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE>()));
  row("Total constant memory",
      std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY>()) + " bytes");
  row("Shared memory per block", std::to_string(dev.shared_memory_per_block()) + " bytes (opt-in " +
                                     std::to_string(dev.shared_memory_per_block_optin()) + ")");
  row("Registers per block",
      std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK>()));
  row("Warp size", std::to_string(dev.warp_size()));
  row("Max threads per multiprocessor",
      std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR>()));
  row("Max threads per block", std::to_string(dev.max_threads_per_block()));
  row("Max block dimensions",
      std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X>()) + " x " +
          std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y>()) + " x " +
          std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z>()));
  row("Max grid dimensions",
      std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X>()) + " x " +
          std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y>()) + " x " +
          std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z>()));
  row("Concurrent copy engines",
      std::to_string(dev.attribute<CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT>()));
  const auto yes_no = [](bool b) { return std::string{b ? "yes" : "no"}; };
  row("Unified addressing", yes_no(dev.attribute<CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING>()));
  row("Managed memory", yes_no(dev.attribute<CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY>()));
  row("Cooperative launch", yes_no(dev.attribute<CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH>()));
  row("Memory pools", yes_no(dev.attribute<CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED>()));
  row("PCI bus id", dev.pci_bus_id());
}

}  // namespace

int main() {
  try {
    const int version = cuwrap::driver_version();
    std::printf("CUDA driver: %s\n", cuwrap::driver_path().c_str());
    std::printf("CUDA driver version: %d.%d%s\n", version / 1000, version % 1000 / 10,
                cuwrap::is_software_driver() ? " (cuwrap software driver)" : "");
    const auto devices = cuwrap::device::all();
    std::printf("Detected %zu CUDA capable device(s)\n", devices.size());
    for (const auto& dev : devices) {
      show(dev);
    }
    if (devices.size() > 1) {
      std::puts("\nPeer access:");
      for (const auto& a : devices) {
        for (const auto& b : devices) {
          if (a != b) {
            std::printf("  device %d -> device %d: %s\n", a.ordinal(), b.ordinal(),
                        a.can_access_peer(b) ? "yes" : "no");
          }
        }
      }
    }
    return devices.empty() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "device_query: %s\n", e.what());
    return 1;
  }
}
