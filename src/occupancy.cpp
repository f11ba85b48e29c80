// Occupancy queries (cuOccupancy*) and the trampoline that lets a C++ callable answer
// cuOccupancyMaxPotentialBlockSize's block-size-to-shared-memory callback. Each query is one
// driver call; without a current context the driver refuses it, and it is made again in the
// kernel's module's context (in_context.hpp).
#include <exception>

#include "cuwrap/launch.hpp"
#include "in_context.hpp"

namespace cuwrap {
namespace {

void expect_kernel(const kernel& k, const char* operation, std::source_location where) {
  detail::expect_argument_not_moved_from(k.get() != nullptr, nullptr, operation, "kernel", where);
}

// The callable of the max_potential_block_size call in progress on this thread. CUoccupancyB2DSize
// takes only the block size (no user pointer), so the one C callback, trampoline(), finds the
// callable here. Each call saves the previous slot and restores it (calls nest: a callable may
// itself ask for a suggestion); the driver calls the callback on the calling thread, during the
// call (as NVIDIA's does, and the software driver, exec/occupancy.cpp).
struct Slot {
  detail::shared_bytes_fn call = nullptr;
  void* callable = nullptr;
  std::exception_ptr error;  // the first exception the callable threw
};
thread_local Slot* current_slot = nullptr;

std::size_t CUDA_CB trampoline(int block_size) {
  Slot* const slot = current_slot;
  if (slot == nullptr || slot->error) return 0;  // after an exception: stop asking
  try {
    return slot->call(slot->callable, block_size);
  } catch (...) {
    slot->error = std::current_exception();  // never through the driver's C frames
    return 0;
  }
}

}  // namespace

namespace detail {

occupancy::block_size_suggestion potential_block_size(const kernel& k, shared_bytes_fn call,
                                                      void* callable, int block_size_limit,
                                                      occupancy::options flags,
                                                      std::source_location where) {
  expect_kernel(k, "occupancy::max_potential_block_size", where);
  Slot slot{call, callable, nullptr};
  Slot* const previous = std::exchange(current_slot, &slot);
  occupancy::block_size_suggestion s;
  const CUresult r = call_in_context(
      k.context(),
      [&] {
        return driver().cuOccupancyMaxPotentialBlockSizeWithFlags(
            &s.min_grid_size, &s.block_size, k.get(), &trampoline, 0, block_size_limit,
            static_cast<unsigned>(flags));
      },
      where);
  current_slot = previous;
  if (slot.error) std::rethrow_exception(slot.error);
  check(r, "cuOccupancyMaxPotentialBlockSizeWithFlags", where);
  return s;
}

}  // namespace detail

namespace occupancy {

int max_active_blocks_per_multiprocessor(const kernel& k, int block_size,
                                         std::size_t dynamic_shared_bytes,
                                         std::source_location where) {
  expect_kernel(k, "occupancy::max_active_blocks_per_multiprocessor", where);
  int blocks = 0;
  check(detail::call_in_context(
            k.context(),
            [&] {
              return detail::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                  &blocks, k.get(), block_size, dynamic_shared_bytes);
            },
            where),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor", where);
  return blocks;
}

int max_active_blocks_per_multiprocessor(const kernel& k, int block_size,
                                         std::size_t dynamic_shared_bytes, options flags,
                                         std::source_location where) {
  expect_kernel(k, "occupancy::max_active_blocks_per_multiprocessor", where);
  int blocks = 0;
  check(detail::call_in_context(
            k.context(),
            [&] {
              return detail::driver().cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                  &blocks, k.get(), block_size, dynamic_shared_bytes, static_cast<unsigned>(flags));
            },
            where),
        "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", where);
  return blocks;
}

block_size_suggestion max_potential_block_size(const kernel& k, std::size_t dynamic_shared_bytes,
                                               int block_size_limit, options flags,
                                               std::source_location where) {
  expect_kernel(k, "occupancy::max_potential_block_size", where);
  block_size_suggestion s;
  check(detail::call_in_context(
            k.context(),
            [&] {
              return detail::driver().cuOccupancyMaxPotentialBlockSizeWithFlags(
                  &s.min_grid_size, &s.block_size, k.get(), nullptr, dynamic_shared_bytes,
                  block_size_limit, static_cast<unsigned>(flags));
            },
            where),
        "cuOccupancyMaxPotentialBlockSizeWithFlags", where);
  return s;
}

std::size_t available_dynamic_shared_bytes(const kernel& k, int blocks_per_sm, int block_size,
                                           std::source_location where) {
  expect_kernel(k, "occupancy::available_dynamic_shared_bytes", where);
  std::size_t bytes = 0;
  check(detail::call_in_context(
            k.context(),
            [&] {
              return detail::driver().cuOccupancyAvailableDynamicSMemPerBlock(
                  &bytes, k.get(), blocks_per_sm, block_size);
            },
            where),
        "cuOccupancyAvailableDynamicSMemPerBlock", where);
  return bytes;
}

int max_active_clusters(const kernel& k, const launch_config& config, std::source_location where) {
  expect_kernel(k, "occupancy::max_active_clusters", where);
  CUlaunchConfig native = detail::native_config(config, nullptr);
  int clusters = 0;
  check(detail::call_in_context(
            k.context(),
            [&] {
              return detail::driver().cuOccupancyMaxActiveClusters(&clusters, k.get(), &native);
            },
            where),
        "cuOccupancyMaxActiveClusters", where);
  return clusters;
}

int max_potential_cluster_size(const kernel& k, const launch_config& config,
                               std::source_location where) {
  expect_kernel(k, "occupancy::max_potential_cluster_size", where);
  CUlaunchConfig native = detail::native_config(config, nullptr);
  int size = 0;
  check(detail::call_in_context(
            k.context(),
            [&] {
              return detail::driver().cuOccupancyMaxPotentialClusterSize(&size, k.get(), &native);
            },
            where),
        "cuOccupancyMaxPotentialClusterSize", where);
  return size;
}

}  // namespace occupancy
}  // namespace cuwrap
