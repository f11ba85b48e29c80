// Checking and executing stream memory operations (memops.hpp).
//
// A write is a release store; the flush and barrier operations are sequentially consistent
// fences; a wait's condition is read with an acquire load.
#include "exec/memops.hpp"

#include <atomic>
#include <type_traits>

#include "memory/memory.hpp"

namespace swcu {
namespace {

constexpr unsigned kConditionMask = 0xf;

// Whether (*addr, value) satisfy the CUstreamWaitValue_flags condition `flags` (cuda.h: GEQ is
// the cyclic (intN_t)(*addr - value) >= 0; EQ; AND (*addr & value) != 0; NOR ~(*addr | value)
// != 0).
template <class T>
bool holds(T current, T value, unsigned flags) noexcept {
  switch (flags & kConditionMask) {
    case CU_STREAM_WAIT_VALUE_GEQ:
      return static_cast<std::make_signed_t<T>>(static_cast<T>(current - value)) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return current == value;
    case CU_STREAM_WAIT_VALUE_AND: return (current & value) != 0;
    default: return static_cast<T>(~(current | value)) != 0;  // NOR
  }
}

[[nodiscard]] unsigned width_of(unsigned kind) noexcept {
  switch (kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_32: return 4;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: return 8;
    default: return 0;
  }
}

template <class T>
T load(CUdeviceptr address) noexcept {
  return std::atomic_ref<T>(*reinterpret_cast<T*>(address)).load(std::memory_order_acquire);
}

// Whether a device that runs the operation may still touch its memory: it may have been freed
// (or its access revoked) since the call.
bool reachable(State& s, int device, const MemOp& m, bool write) {
  const unsigned width = width_of(m.kind);
  return find_range(s, m.address, width, Access::execute) != nullptr &&
         device_may_access(s, device, m.address, width, write);
}

}  // namespace

MemOp decode_memop(const CUstreamBatchMemOpParams& p) noexcept {
  MemOp m;
  m.kind = static_cast<unsigned>(raw(p.operation));  // any value a caller passed
  switch (m.kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      m.address = p.waitValue.address;
      m.value = m.kind == CU_STREAM_MEM_OP_WAIT_VALUE_32 ? p.waitValue.value : p.waitValue.value64;
      m.flags = p.waitValue.flags;
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      m.address = p.writeValue.address;
      m.value =
          m.kind == CU_STREAM_MEM_OP_WRITE_VALUE_32 ? p.writeValue.value : p.writeValue.value64;
      m.flags = p.writeValue.flags;
      break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: m.flags = p.flushRemoteWrites.flags; break;
    case CU_STREAM_MEM_OP_BARRIER: m.flags = p.memoryBarrier.flags; break;
    default: break;  // check_memop() refuses it
  }
  return m;
}

bool is_wait(const MemOp& m) noexcept {
  return m.kind == CU_STREAM_MEM_OP_WAIT_VALUE_32 || m.kind == CU_STREAM_MEM_OP_WAIT_VALUE_64;
}

CUresult check_memop(State& s, MemOpAbi abi, const MemOp& m) {
  const unsigned width = width_of(m.kind);
  switch (m.kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      if ((m.flags & ~(kConditionMask | CU_STREAM_WAIT_VALUE_FLUSH)) != 0 ||
          (m.flags & kConditionMask) > CU_STREAM_WAIT_VALUE_NOR) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      if ((m.flags & ~static_cast<unsigned>(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      return m.flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_STREAM_MEM_OP_BARRIER:  // "Only supported in the _v2 API"
      if (abi == MemOpAbi::v1) return CUDA_ERROR_INVALID_VALUE;
      return m.flags == CU_STREAM_MEMORY_BARRIER_TYPE_SYS ||
                     m.flags == CU_STREAM_MEMORY_BARRIER_TYPE_GPU
                 ? CUDA_SUCCESS
                 : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (m.address % width != 0) return CUDA_ERROR_INVALID_VALUE;
  const Allocation* const a = find_range(s, m.address, width, Access::enqueue);
  if (a == nullptr || a->memory == Allocation::Memory::managed) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

bool memop_ready(State& s, int device, const MemOp& m) {
  if (!is_wait(m)) return true;
  if (!reachable(s, device, m, false)) return true;  // run_memop() reports the fault
  return m.kind == CU_STREAM_MEM_OP_WAIT_VALUE_32
             ? holds(load<std::uint32_t>(m.address), static_cast<std::uint32_t>(m.value), m.flags)
             : holds(load<std::uint64_t>(m.address), m.value, m.flags);
}

CUresult run_memop(State& s, int device, const MemOp& m) {
  switch (m.kind) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      if (!reachable(s, device, m, false)) return CUDA_ERROR_ILLEGAL_ADDRESS;
      // CU_STREAM_WAIT_VALUE_FLUSH: writes that reached the memory before are visible after.
      if ((m.flags & CU_STREAM_WAIT_VALUE_FLUSH) != 0) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
      }
      return CUDA_SUCCESS;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      if (!reachable(s, device, m, true)) return CUDA_ERROR_ILLEGAL_ADDRESS;
      // The default write has a memory fence before it; NO_MEMORY_BARRIER only permits
      // reordering, which in-order execution never does.
      if (m.kind == CU_STREAM_MEM_OP_WRITE_VALUE_32) {
        std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(m.address))
            .store(static_cast<std::uint32_t>(m.value), std::memory_order_release);
      } else {
        std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(m.address))
            .store(m.value, std::memory_order_release);
      }
      return CUDA_SUCCESS;
    default:  // FLUSH_REMOTE_WRITES and BARRIER
      std::atomic_thread_fence(std::memory_order_seq_cst);
      return CUDA_SUCCESS;
  }
}

}  // namespace swcu
