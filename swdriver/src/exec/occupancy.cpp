// cuOccupancy*: the model of launch.hpp (threads, blocks and shared memory per SM; 132 SMs).
// Every query needs a current context: without one NVIDIA's driver answers
// CUDA_ERROR_INVALID_CONTEXT (observed on an H200, driver 580.159.04).
#include <algorithm>

#include "exec/launch.hpp"
#include "module/module.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

// What the model needs of a function, copied so that it can be used without the lock.
struct Model {
  std::size_t static_shared = 0;
  int max_threads = kMaxThreadsPerBlock;
  int max_dynamic = 0;
  int required_volume = 0;  // 0: no required cluster size
  bool must_set = false;    // .explicitcluster: a launch must give a cluster size
  bool non_portable = false;

  [[nodiscard]] int blocks(int block_size, std::size_t dynamic) const noexcept {
    return active_blocks_per_sm(static_shared, max_threads, max_dynamic, block_size, dynamic);
  }
};

CUresult model_of(State& s, CUfunction func, Context* ctx, Model& out) {
  Function* f = nullptr;
  if (const CUresult r = resolve_function(s, func, ctx, f)) return r;
  const KernelDesc& k = *f->desc;
  const FuncSettings set = effective_settings(*f);
  out.static_shared = k.static_shared;
  out.max_threads = max_threads(k);
  out.max_dynamic = max_dynamic_shared(k, set);
  // The compile-time size (.reqnctapercluster), else the one set with
  // CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH (a dimension not set counts as 1).
  int volume = 1;
  bool required = k.cluster[0] != 0;
  for (std::size_t i = 0; i < 3; ++i) {
    if (k.cluster[0] != 0) {
      volume *= static_cast<int>(k.cluster[i]);
    } else {
      required = required || set.cluster[i].value_or(0) > 0;
      volume *= std::max(set.cluster[i].value_or(1), 1);
    }
  }
  out.required_volume = required ? volume : 0;
  out.must_set = k.explicit_cluster;
  out.non_portable = set.non_portable.value_or(0) != 0;
  return CUDA_SUCCESS;
}

CUresult max_active_blocks(Sym sym, int* num_blocks, CUfunction func, int block_size,
                           std::size_t dynamic, unsigned int flags) {
  return call(sym, [=](State& s) -> CUresult {
    Context* current = nullptr;
    if (const CUresult r = current_context(s, current)) return r;
    if (num_blocks == nullptr || block_size <= 0 ||
        (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    Model m;
    if (const CUresult r = model_of(s, func, current, m)) return r;
    *num_blocks = m.blocks(block_size, dynamic);
    return CUDA_SUCCESS;
  });
}

// As the CUDA runtime's cudaOccupancyMaxPotentialBlockSize: from the largest block size down,
// in warps, the size that keeps the most threads resident (ties: the larger block).
CUresult max_potential_block_size(Sym sym, int* min_grid, int* block_size, CUfunction func,
                                  CUoccupancyB2DSize to_dynamic, std::size_t dynamic, int limit,
                                  unsigned int flags) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    Context* current = nullptr;
    if (const CUresult r = current_context(s, current)) return r;
    if (min_grid == nullptr || block_size == nullptr || limit < 0 ||
        (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    Model m;
    if (const CUresult r = model_of(s, func, current, m)) return r;
    const unsigned sms = current->sm_count;  // a green context's partition, else the device's
    // The callback is the program's: call it without the lock.
    if (to_dynamic != nullptr) lock.unlock();
    const int max_size = limit == 0 ? m.max_threads : std::min(limit, m.max_threads);
    int best_size = 0;
    int best_blocks = 0;
    int best_threads = 0;
    const int aligned = (max_size + kWarpSize - 1) / kWarpSize * kWarpSize;
    for (int tried = aligned; tried > 0; tried -= kWarpSize) {
      const int size = std::min(max_size, tried);
      const std::size_t bytes = to_dynamic != nullptr ? to_dynamic(size) : dynamic;
      const int blocks = m.blocks(size, bytes);
      if (blocks * size > best_threads) {
        best_size = size;
        best_blocks = blocks;
        best_threads = blocks * size;
      }
      if (best_threads == kThreadsPerSm) break;
    }
    *block_size = best_size;
    *min_grid = best_blocks * static_cast<int>(sms);
    return CUDA_SUCCESS;
  });
}

// The cluster size of a launch configuration: its attribute, else the kernel's required one,
// else (none given, none required) 1. The driver API reference says the size "must be specified
// in config" then, but NVIDIA's driver answers with a count (issue 15, measured on GPUs): a
// launch without a cluster dimension runs every block as a cluster of its own. A kernel compiled
// with .explicitcluster (CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET) cannot launch without a size,
// so it gets CUDA_ERROR_INVALID_CLUSTER_SIZE.
CUresult cluster_volume(const CUlaunchConfig& config, const Model& m, int& volume) {
  if (config.numAttrs > 0 && config.attrs == nullptr) return CUDA_ERROR_INVALID_VALUE;
  volume = 0;
  for (unsigned i = 0; i < config.numAttrs; ++i) {
    if (raw(config.attrs[i].id) != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
    const auto& d = config.attrs[i].value.clusterDim;
    const unsigned long long v = 1ULL * d.x * d.y * d.z;
    if (v == 0 || v > static_cast<unsigned long long>(kMaxClusterSize)) {
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
    volume = static_cast<int>(v);
  }
  if (m.required_volume != 0) {
    if (volume != 0 && volume != m.required_volume) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    volume = m.required_volume;
  }
  if (volume == 0) {
    if (m.must_set) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    volume = 1;
  }
  if (volume > (m.non_portable ? kMaxClusterSize : kPortableClusterSize)) {
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  return CUDA_SUCCESS;
}

// The context of a configuration's stream (the current context for a NULL stream).
CUresult config_context(State& s, const CUlaunchConfig& config, Context*& ctx) {
  std::shared_ptr<Queue> q;
  if (const CUresult r = resolve_stream(s, config.hStream, NullStream::legacy, q)) return r;
  ctx = q->ctx;
  return CUDA_SUCCESS;
}

unsigned block_threads(const CUlaunchConfig& c) noexcept {
  const unsigned long long t = 1ULL * c.blockDimX * c.blockDimY * c.blockDimZ;
  return t > 1u << 20 ? 1u << 20 : static_cast<unsigned>(t);
}

}  // namespace
}  // namespace swcu

using swcu::call;
using swcu::State;
using swcu::Sym;

extern "C" {

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize) {
  return swcu::max_active_blocks(Sym::cuOccupancyMaxActiveBlocksPerMultiprocessor, numBlocks, func,
                                 blockSize, dynamicSMemSize, 0);
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func,
                                                              int blockSize, size_t dynamicSMemSize,
                                                              unsigned int flags) {
  return swcu::max_active_blocks(Sym::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
                                 numBlocks, func, blockSize, dynamicSMemSize, flags);
}

CUresult cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                          size_t dynamicSMemSize, int blockSizeLimit) {
  return swcu::max_potential_block_size(Sym::cuOccupancyMaxPotentialBlockSize, minGridSize,
                                        blockSize, func, blockSizeToDynamicSMemSize,
                                        dynamicSMemSize, blockSizeLimit, 0);
}

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize,
                                                   CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit,
                                                   unsigned int flags) {
  return swcu::max_potential_block_size(Sym::cuOccupancyMaxPotentialBlockSizeWithFlags, minGridSize,
                                        blockSize, func, blockSizeToDynamicSMemSize,
                                        dynamicSMemSize, blockSizeLimit, flags);
}

// The most dynamic shared memory a block may use for `numBlocks` blocks to fit on an SM (0
// when that many blocks of this size cannot fit at all).
CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func,
                                                 int numBlocks, int blockSize) {
  return call(Sym::cuOccupancyAvailableDynamicSMemPerBlock, [=](State& s) -> CUresult {
    swcu::Context* current = nullptr;
    if (const CUresult r = swcu::current_context(s, current)) return r;
    if (dynamicSmemSize == nullptr || numBlocks <= 0 || blockSize <= 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    swcu::Model m;
    if (const CUresult r = swcu::model_of(s, func, current, m)) return r;
    std::size_t available = 0;
    if (m.blocks(blockSize, 0) >= numBlocks) {
      const std::size_t per_block = swcu::kSharedPerSm / static_cast<std::size_t>(numBlocks);
      const std::size_t fixed = m.static_shared + swcu::kReservedSharedPerBlock;
      available = per_block > fixed ? per_block - fixed : 0;
      // Never more than the kernel may use now: 48 KiB unless raised with
      // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (as NVIDIA's driver answers).
      available = std::min(available, static_cast<std::size_t>(std::max(m.max_dynamic, 0)));
    }
    *dynamicSmemSize = available;
    return CUDA_SUCCESS;
  });
}

// Clusters of the configuration's size that fit on the device at once: blocks per SM times
// SMs, divided by the cluster size.
CUresult cuOccupancyMaxActiveClusters(int* numClusters, CUfunction func,
                                      const CUlaunchConfig* config) {
  return call(Sym::cuOccupancyMaxActiveClusters, [=](State& s) -> CUresult {
    swcu::Context* current = nullptr;
    if (const CUresult r = swcu::current_context(s, current)) return r;
    if (numClusters == nullptr || config == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::config_context(s, *config, ctx)) return r;
    swcu::Model m;
    if (const CUresult r = swcu::model_of(s, func, ctx, m)) return r;
    int volume = 0;
    if (const CUresult r = swcu::cluster_volume(*config, m, volume)) return r;
    const int per_sm =
        m.blocks(static_cast<int>(swcu::block_threads(*config)), config->sharedMemBytes);
    *numClusters = per_sm * static_cast<int>(ctx->sm_count) / volume;  // its partition
    return CUDA_SUCCESS;
  });
}

// The largest cluster size a launch could use: the required one, else 8 (16 when the kernel
// allows non-portable sizes); 0 when not one block of the configuration fits on an SM.
CUresult cuOccupancyMaxPotentialClusterSize(int* clusterSize, CUfunction func,
                                            const CUlaunchConfig* config) {
  return call(Sym::cuOccupancyMaxPotentialClusterSize, [=](State& s) -> CUresult {
    swcu::Context* current = nullptr;
    if (const CUresult r = swcu::current_context(s, current)) return r;
    if (clusterSize == nullptr || config == nullptr) return CUDA_ERROR_INVALID_VALUE;
    swcu::Context* ctx = nullptr;
    if (const CUresult r = swcu::config_context(s, *config, ctx)) return r;
    swcu::Model m;
    if (const CUresult r = swcu::model_of(s, func, ctx, m)) return r;
    const int per_sm =
        m.blocks(static_cast<int>(swcu::block_threads(*config)), config->sharedMemBytes);
    int size = m.required_volume != 0 ? m.required_volume
               : m.non_portable       ? swcu::kMaxClusterSize
                                      : swcu::kPortableClusterSize;
    if (per_sm == 0) size = 0;
    *clusterSize = size;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
