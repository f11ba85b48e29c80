// launch_config: grid and block dimensions, dynamic shared memory and opt-in launch
// attributes, validated in one place when built.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <source_location>
#include <span>

namespace cuwrap {

/// Three launch dimensions; unspecified ones are 1.
struct dims {
  unsigned x = 1;  ///< the fastest-varying dimension
  unsigned y = 1;
  unsigned z = 1;
  /// x * y * z.
  [[nodiscard]] constexpr unsigned long long volume() const noexcept {
    return static_cast<unsigned long long>(x) * y * z;
  }
  friend constexpr bool operator==(dims, dims) noexcept = default;
};

namespace detail {
/// A value and the call site that produced it: lets variadic functions report where they were
/// called from (the default argument is evaluated at the caller's implicit conversion).
template <class T>
struct located {
  const T& value;
  std::source_location where;
  located(const T& v, std::source_location w = std::source_location::current()) noexcept
      : value{v}, where{w} {}
};
}  // namespace detail

/// How a kernel is launched: grid and block dimensions, dynamic shared memory, and opt-in
/// attributes (cluster dimensions, cooperative, priority, programmatic stream serialization).
/// Every check that does not need the kernel happens here, the same in every build type;
/// errors (cuwrap::error, errc::invalid_value) name the offending value.
class launch_config {
 public:
  /// `grid` blocks of `block` threads with `dynamic_shared_bytes` of dynamic shared memory.
  /// Throws if a dimension is 0 or beyond CUDA's limits (block: 1024 threads, z <= 64; grid:
  /// x < 2^31, y and z <= 65535).
  launch_config(dims grid, dims block, std::size_t dynamic_shared_bytes = 0,
                std::source_location where = std::source_location::current());

  /// One-dimensional: enough blocks of `block_size` threads to cover `elements` (at least
  /// one block). Throws if the grid would not fit CUDA's limit.
  [[nodiscard]] static launch_config linear(
      std::size_t elements, unsigned block_size, std::size_t dynamic_shared_bytes = 0,
      std::source_location where = std::source_location::current());

  /// Launches in thread-block clusters of `cluster` blocks (sm_90+). Each dimension must
  /// divide the grid's.
  launch_config& with_cluster(dims cluster,
                              std::source_location where = std::source_location::current());
  /// A cooperative launch: all blocks are resident at once (grid-wide synchronization).
  launch_config& with_cooperative() noexcept;
  /// The launch's priority, overriding the stream's.
  launch_config& with_priority(int priority) noexcept;
  /// Lets the next kernel in the stream start before this one finishes (programmatic
  /// dependent launch).
  launch_config& with_programmatic_serialization() noexcept;

  /// The grid, in blocks.
  [[nodiscard]] const dims& grid() const noexcept { return grid_; }
  /// The block, in threads.
  [[nodiscard]] const dims& block() const noexcept { return block_; }
  /// Dynamic shared memory per block, in bytes.
  [[nodiscard]] std::size_t dynamic_shared_bytes() const noexcept { return shared_; }
  /// The launch attributes set (empty for a plain launch, which uses cuLaunchKernel).
  [[nodiscard]] std::span<const CUlaunchAttribute> attributes() const noexcept {
    return {attributes_.data(), count_};
  }

 private:
  CUlaunchAttribute& add(CUlaunchAttributeID id) noexcept;

  dims grid_;
  dims block_;
  std::size_t shared_ = 0;
  std::array<CUlaunchAttribute, 4> attributes_{};
  std::size_t count_ = 0;
};

}  // namespace cuwrap
