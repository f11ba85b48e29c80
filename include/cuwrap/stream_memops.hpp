// Stream memory operations: the conditions and flags of cuStreamWaitValue32/64 and
// cuStreamWriteValue32/64, and memop_batch, a typed builder of cuStreamBatchMemOp's operations.
// stream_ref::wait_value, write_value and batch (<cuwrap/stream.hpp>) enqueue them.
#pragma once

#include <cuda.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <source_location>
#include <type_traits>
#include <vector>

#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap {

/// What a stream memory wait waits for (CUstreamWaitValue_flags, low bits).
enum class wait_condition : unsigned {
  /// (intN_t)(*addr - value) >= 0: a cyclic greater-or-equal that ignores wraparound.
  greater_equal = CU_STREAM_WAIT_VALUE_GEQ,
  equal = CU_STREAM_WAIT_VALUE_EQ,     ///< *addr == value
  any_bit = CU_STREAM_WAIT_VALUE_AND,  ///< (*addr & value) != 0
  /// ~(*addr | value) != 0 (CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR).
  not_all_bits = CU_STREAM_WAIT_VALUE_NOR,
};

/// Options of a stream memory wait (CUstreamWaitValue_flags, high bits).
enum class wait_flags : unsigned {
  none = 0,
  /// Flush outstanding remote writes after the wait (CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES).
  flush = CU_STREAM_WAIT_VALUE_FLUSH,
};

/// Options of a stream memory write (CUstreamWriteValue_flags).
enum class write_flags : unsigned {
  none = CU_STREAM_WRITE_VALUE_DEFAULT,  ///< a memory fence before the write
  /// Lets the write be reordered with earlier writes.
  no_memory_barrier = CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER,
};

/// The scope of memop_batch::barrier() (CUstreamMemoryBarrier_flags).
enum class memory_barrier_scope : unsigned {
  system = CU_STREAM_MEMORY_BARRIER_TYPE_SYS,  ///< system-wide
  device = CU_STREAM_MEMORY_BARRIER_TYPE_GPU,  ///< the GPU only
};

/// The words a stream memory operation reads or writes: 32 or 64-bit unsigned integers.
template <class T>
concept memop_word = std::same_as<std::remove_const_t<T>, std::uint32_t> ||
    std::same_as<std::remove_const_t<T>, std::uint64_t>;

namespace detail {
/// Throws usage_error naming `operation`: the word span is empty, null or not aligned to the
/// word's size. Out of line: callers pay a compare and a branch.
[[noreturn]] void throw_bad_memop_word(const char* operation, CUdeviceptr address, std::size_t size,
                                       bool empty, std::source_location where);

/// The address of the first element of `word`, after the checks cuwrap can make without a driver
/// call (a non-empty span at a non-null address aligned to the word's size); whether the device
/// can access it the driver checks (CUDA_ERROR_INVALID_VALUE).
template <memop_word T>
[[gnu::always_inline]] inline CUdeviceptr memop_address(device_span<T> word, const char* operation,
                                                        std::source_location where) {
  const CUdeviceptr address = word.address();
  if (word.empty() || address == 0 || address % sizeof(T) != 0) [[unlikely]] {
    throw_bad_memop_word(operation, address, sizeof(T), word.empty(), where);
  }
  return address;
}
}  // namespace detail

/// A list of stream memory operations for stream_ref::batch() (cuStreamBatchMemOp), which
/// enqueues them in order with one driver call. Each add checks its word as
/// stream_ref::wait_value() does; a batch holds at most max_size() operations.
class memop_batch {
 public:
  /// The most operations one cuStreamBatchMemOp takes ("Must be less than 256").
  [[nodiscard]] static constexpr std::size_t max_size() noexcept { return 255; }

  /// Adds a wait for `condition` between the first element of `word` and `value`. A bad word
  /// throws cuwrap::usage_error and adds nothing.
  template <memop_word T>
  memop_batch& wait(device_span<T> word, std::remove_const_t<T> value,
                    wait_condition condition = wait_condition::greater_equal,
                    wait_flags flags = wait_flags::none,
                    std::source_location where = std::source_location::current()) {
    const CUdeviceptr address = detail::memop_address(word, "memop_batch::wait", where);
    CUstreamBatchMemOpParams& op = add("wait", where);
    op.waitValue.operation =
        sizeof(T) == 4 ? CU_STREAM_MEM_OP_WAIT_VALUE_32 : CU_STREAM_MEM_OP_WAIT_VALUE_64;
    op.waitValue.address = address;
    if constexpr (sizeof(T) == 4) {
      op.waitValue.value = value;
    } else {
      op.waitValue.value64 = value;
    }
    op.waitValue.flags = static_cast<unsigned>(condition) | static_cast<unsigned>(flags);
    return *this;
  }
  /// Adds a write of `value` to the first element of `word`.
  template <memop_word T>
  requires(!std::is_const_v<T>)
      memop_batch& write(device_span<T> word, T value, write_flags flags = write_flags::none,
                         std::source_location where = std::source_location::current()) {
    const CUdeviceptr address = detail::memop_address(word, "memop_batch::write", where);
    CUstreamBatchMemOpParams& op = add("write", where);
    op.writeValue.operation =
        sizeof(T) == 4 ? CU_STREAM_MEM_OP_WRITE_VALUE_32 : CU_STREAM_MEM_OP_WRITE_VALUE_64;
    op.writeValue.address = address;
    if constexpr (sizeof(T) == 4) {
      op.writeValue.value = value;
    } else {
      op.writeValue.value64 = value;
    }
    op.writeValue.flags = static_cast<unsigned>(flags);
    return *this;
  }
  /// Adds a flush of outstanding remote writes (CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES).
  memop_batch& flush_remote_writes(std::source_location where = std::source_location::current()) {
    add("flush_remote_writes", where).flushRemoteWrites.operation =
        CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
    return *this;
  }
  /// Adds a memory barrier of `scope` (CU_STREAM_MEM_OP_BARRIER).
  memop_batch& barrier(memory_barrier_scope scope = memory_barrier_scope::system,
                       std::source_location where = std::source_location::current()) {
    CUstreamBatchMemOpParams& op = add("barrier", where);
    op.memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
    op.memoryBarrier.flags = static_cast<unsigned>(scope);
    return *this;
  }

  /// The number of operations.
  [[nodiscard]] std::size_t size() const noexcept { return ops_.size(); }
  /// True without operations.
  [[nodiscard]] bool empty() const noexcept { return ops_.empty(); }
  /// The operations, as cuStreamBatchMemOp takes them (the driver may write their `alias`
  /// fields, which are for its internal use).
  [[nodiscard]] CUstreamBatchMemOpParams* data() noexcept { return ops_.data(); }
  /// Removes every operation (the capacity stays, for reuse without allocating).
  void clear() noexcept { ops_.clear(); }

 private:
  CUstreamBatchMemOpParams& add(const char* operation, std::source_location where);

  std::vector<CUstreamBatchMemOpParams> ops_;
};

}  // namespace cuwrap
