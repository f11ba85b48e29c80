// launch_config validation and the cold paths of launches.
#include "cuwrap/launch.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace cuwrap {
namespace {

std::string text(dims d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

[[noreturn]] void invalid(const std::string& details, std::source_location where) {
  detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuwrap::launch_config", details,
                      where);
}

}  // namespace

launch_config::launch_config(dims grid, dims block, std::size_t dynamic_shared_bytes,
                             std::source_location where)
    : grid_{grid}, block_{block}, shared_{dynamic_shared_bytes} {
  if (grid.volume() == 0) {
    invalid("grid " + text(grid) + " has a zero dimension", where);
  }
  if (block.volume() == 0) {
    invalid("block " + text(block) + " has a zero dimension", where);
  }
  if (block.volume() > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64) {
    invalid("block " + text(block) + " exceeds CUDA's limits (1024 threads; x, y <= 1024; z <= 64)",
            where);
  }
  if (grid.x > 0x7fffffffU || grid.y > 65535 || grid.z > 65535) {
    invalid("grid " + text(grid) + " exceeds CUDA's limits (x < 2^31; y, z <= 65535)", where);
  }
  if (dynamic_shared_bytes > std::numeric_limits<unsigned>::max()) {
    invalid("dynamic shared memory of " + std::to_string(dynamic_shared_bytes) +
                " bytes does not fit the driver's 32-bit argument",
            where);
  }
}

launch_config launch_config::linear(std::size_t elements, unsigned block_size,
                                    std::size_t dynamic_shared_bytes, std::source_location where) {
  if (block_size == 0) {
    invalid("block size 0", where);
  }
  const std::size_t blocks = elements == 0 ? 1 : (elements + block_size - 1) / block_size;
  if (blocks > 0x7fffffffU) {
    invalid(std::to_string(elements) + " elements need " + std::to_string(blocks) + " blocks of " +
                std::to_string(block_size) + ", more than a grid can have",
            where);
  }
  return launch_config{{static_cast<unsigned>(blocks)}, {block_size}, dynamic_shared_bytes, where};
}

CUlaunchAttribute& launch_config::add(CUlaunchAttributeID id) noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    if (attributes_[i].id == id) {
      return attributes_[i];  // setting an attribute twice keeps the last value
    }
  }
  auto& attribute = attributes_[count_++];  // 4 slots, one per kind this class can set
  attribute = CUlaunchAttribute{};
  attribute.id = id;
  return attribute;
}

launch_config& launch_config::with_cluster(dims cluster, std::source_location where) {
  if (cluster.volume() == 0) {
    invalid("cluster " + text(cluster) + " has a zero dimension", where);
  }
  if (grid_.x % cluster.x != 0 || grid_.y % cluster.y != 0 || grid_.z % cluster.z != 0) {
    invalid("cluster " + text(cluster) + " does not divide grid " + text(grid_), where);
  }
  auto& a = add(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  a.value.clusterDim.x = cluster.x;
  a.value.clusterDim.y = cluster.y;
  a.value.clusterDim.z = cluster.z;
  return *this;
}

launch_config& launch_config::with_cooperative() noexcept {
  add(CU_LAUNCH_ATTRIBUTE_COOPERATIVE).value.cooperative = 1;
  return *this;
}

launch_config& launch_config::with_priority(int priority) noexcept {
  add(CU_LAUNCH_ATTRIBUTE_PRIORITY).value.priority = priority;
  return *this;
}

launch_config& launch_config::with_programmatic_serialization() noexcept {
  add(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      .value.programmaticStreamSerializationAllowed = 1;
  return *this;
}

namespace detail {

void throw_launch_limit(const kernel& k, const launch_config& config, std::source_location where,
                        const char* api) {
  std::string details = "kernel " + k.name() + ": ";
  if (config.block().volume() > static_cast<unsigned long long>(k.max_threads_per_block())) {
    details += "block " + text(config.block()) + " has " + std::to_string(config.block().volume()) +
               " threads; the kernel allows " + std::to_string(k.max_threads_per_block());
  } else {
    details += std::to_string(config.dynamic_shared_bytes()) +
               " bytes of dynamic shared memory; the kernel allows " +
               std::to_string(k.max_dynamic_shared_bytes()) +
               " (raise it with set_max_dynamic_shared_memory)";
  }
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), api, details, where);
}

void throw_argument_mismatch(const kernel& k, std::size_t index, std::size_t given,
                             std::size_t expected, std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuLaunchKernel",
              "kernel " + k.name() + ": argument " + std::to_string(index) + " has " +
                  std::to_string(given) + " bytes; the parameter has " + std::to_string(expected),
              where);
}

void throw_argument_count(const kernel& k, std::size_t given, std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuLaunchKernel",
              "kernel " + k.name() + ": " + std::to_string(given) + " arguments given; it has " +
                  std::to_string(k.params().size()) + " parameters",
              where);
}

std::string context_mismatch(const kernel& k, CUcontext ctx) {
  if (k.context() == nullptr || ctx == nullptr || k.context() == ctx) {
    return {};
  }
  const auto describe = [](CUcontext c) {
    std::string text = std::to_string(reinterpret_cast<std::uintptr_t>(c));
    CUdevice device{};
    const auto& d = driver();
    if (d.cuCtxPushCurrent(c) == CUDA_SUCCESS) {
      if (d.cuCtxGetDevice(&device) == CUDA_SUCCESS) {
        text += " (device " + std::to_string(device) + ")";
      }
      CUcontext popped{};
      (void)d.cuCtxPopCurrent(&popped);
    }
    return text;
  };
  return "; the kernel is from context " + describe(k.context()) +
         ", the stream's (or graph's) context is " + describe(ctx) +
         ": load the module in that context, or use a library (cuwrap::library)";
}

void throw_launch_error(CUresult result, const char* api, const kernel& k, stream_ref s,
                        std::source_location where) {
  std::string details = "kernel " + k.name();
  if (result == CUDA_ERROR_INVALID_HANDLE || result == CUDA_ERROR_INVALID_CONTEXT) {
    CUcontext stream_context{};
    if (driver().cuStreamGetCtx(s.get(), &stream_context) == CUDA_SUCCESS) {
      details += context_mismatch(k, stream_context);
    }
  }
  throw_error(make_error_code(result), api, details, where);
}

}  // namespace detail

namespace occupancy {

int max_active_blocks_per_multiprocessor(const kernel& k, int block_size,
                                         std::size_t dynamic_shared_bytes,
                                         std::source_location where) {
  detail::expect_argument_not_moved_from(k.get() != nullptr, nullptr,
                                         "occupancy::max_active_blocks_per_multiprocessor",
                                         "kernel", where);
  int blocks = 0;
  check(detail::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.get(), block_size,
                                                                     dynamic_shared_bytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor", where);
  return blocks;
}

block_size_suggestion max_potential_block_size(const kernel& k, std::size_t dynamic_shared_bytes,
                                               int block_size_limit, std::source_location where) {
  detail::expect_argument_not_moved_from(k.get() != nullptr, nullptr,
                                         "occupancy::max_potential_block_size", "kernel", where);
  block_size_suggestion s;
  check(detail::driver().cuOccupancyMaxPotentialBlockSize(&s.min_grid_size, &s.block_size, k.get(),
                                                          nullptr, dynamic_shared_bytes,
                                                          block_size_limit),
        "cuOccupancyMaxPotentialBlockSize", where);
  return s;
}

int max_active_clusters(const kernel& k, const launch_config& config, std::source_location where) {
  detail::expect_argument_not_moved_from(k.get() != nullptr, nullptr,
                                         "occupancy::max_active_clusters", "kernel", where);
  CUlaunchConfig native = detail::native_config(config, nullptr);
  int clusters = 0;
  check(detail::driver().cuOccupancyMaxActiveClusters(&clusters, k.get(), &native),
        "cuOccupancyMaxActiveClusters", where);
  return clusters;
}

}  // namespace occupancy
}  // namespace cuwrap
