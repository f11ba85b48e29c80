// External memory and semaphores (cuImportExternalMemory, cuImportExternalSemaphore): objects
// another API (Vulkan, a file) exported as POSIX file descriptors.
//
// Memory: an OPAQUE_FD handle is any file the process can mmap shared (a memfd in the tests, a
// Vulkan allocation's fd on a real system). The driver takes the descriptor (cuda.h: "Ownership
// of the file descriptor is transferred to the CUDA driver when the handle is imported
// successfully") and closes it when the object is destroyed. cuExternalMemoryGetMappedBuffer maps
// a range of the file shared: a device allocation (SWCU_DEVICE_ALLOCATION, freed with cuMemFree
// as cuda.h requires) that kernels, copies and cuPointerGetAttribute see like cuMemAlloc memory,
// and whose bytes are the file's (a host mapping of the same file sees every write).
//
// Semaphores: an OPAQUE_FD (binary) or TIMELINE_SEMAPHORE_FD handle is, in this model, a file of
// at least 8 bytes whose first 64-bit word is the semaphore's payload (a binary semaphore: 0
// unsignaled, non-zero signaled; a timeline semaphore: its value). The driver maps that word;
// signals store it in stream order, waits are stream operations that run once it holds (the
// scheduler's ready condition, as stream memory waits: sched.hpp), so a host thread or another
// process that writes the word signals too.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/state.hpp"
#include "sched/capture_hooks.hpp"
#include "sched/sched.hpp"

namespace swcu {

/// An imported memory object (SWCU_EXTERNAL_MEMORY).
struct ExternalMemory final : Object {
  ExternalMemory() noexcept : Object(SWCU_EXTERNAL_MEMORY) {}
  void release() noexcept override;  ///< closes `fd`

  int fd = -1;             ///< owned since the import
  std::uint64_t size = 0;  ///< as imported (at most the file's size)
  Context* ctx = nullptr;  ///< the context current at the import
  unsigned int flags = 0;  ///< CUDA_EXTERNAL_MEMORY_DEDICATED or 0
};

/// The mapped payload of a semaphore, shared with the operations that signal or wait on it: it
/// stays mapped until every one has run, even after cuDestroyExternalSemaphore.
struct SemaphorePayload {
  SemaphorePayload(void* m, std::size_t bytes) noexcept : mapping(m), mapping_size(bytes) {}
  ~SemaphorePayload();
  SemaphorePayload(const SemaphorePayload&) = delete;
  SemaphorePayload& operator=(const SemaphorePayload&) = delete;
  [[nodiscard]] std::atomic_ref<std::uint64_t> word() const noexcept {
    return std::atomic_ref<std::uint64_t>(*static_cast<std::uint64_t*>(mapping));
  }
  void* mapping;
  std::size_t mapping_size;
};

/// An imported semaphore (SWCU_EXTERNAL_SEMAPHORE).
struct ExternalSemaphore final : Object {
  ExternalSemaphore() noexcept : Object(SWCU_EXTERNAL_SEMAPHORE) {}
  void release() noexcept override;  ///< lets go of the payload, closes `fd`

  int type = 0;  ///< CUexternalSemaphoreHandleType: OPAQUE_FD or TIMELINE_SEMAPHORE_FD
  int fd = -1;   ///< owned since the import
  std::shared_ptr<SemaphorePayload> payload;
  Context* ctx = nullptr;  ///< the context current at the import
  [[nodiscard]] bool timeline() const noexcept {
    return type == CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  }
};

/// One signal or wait of a semaphore as an operation will run it.
struct SemaphoreStep {
  std::shared_ptr<SemaphorePayload> payload;
  bool timeline = false;
  std::uint64_t value = 0;  ///< the timeline value to store or to wait for
};

/// Checks `count` semaphores and their signal (or wait) parameters as cuda.h documents and
/// resolves them into steps (call under the lock). CUDA_ERROR_INVALID_HANDLE for a handle that is
/// not a live semaphore, CUDA_ERROR_INVALID_VALUE for flags or parameters a kind does not take.
[[nodiscard]] CUresult semaphore_steps(State& s, const CUexternalSemaphore* sems,
                                       const void* params, bool signal, unsigned count,
                                       std::vector<SemaphoreStep>& out);

/// The stream operation of a signal (stores the payload: a timeline's value, a binary
/// semaphore's 1) or a wait (ready once the payload holds; a binary wait consumes the signal).
[[nodiscard]] Op semaphore_op(const SemaphoreStep& step, bool signal);

/// The capture hook of cuSignalExternalSemaphoresAsync and cuWaitExternalSemaphoresAsync (defined
/// by graph/ext_semaphore_nodes.cpp, like the hooks of sched/capture_hooks.hpp): while `q`
/// captures, the call becomes one external semaphore signal (or wait) node of the `count`
/// semaphores `sems` with `params` (checked already, resolved into `steps`).
[[nodiscard]] Captured capture_semaphores(State& s, Queue& q, const CUexternalSemaphore* sems,
                                          const void* params, unsigned count,
                                          const std::vector<SemaphoreStep>& steps, bool signal);

/// Destroys the external memory objects and semaphores of a destroyed context (reclaim.cpp).
void reclaim_external(State& s, Context& ctx) noexcept;

}  // namespace swcu
