// Checkpoint and restore (cuCheckpointProcess*, CUDA 12.8): the process state machine of
// cuda.h. RUNNING --Lock--> LOCKED --Checkpoint--> CHECKPOINTED --Restore--> LOCKED --Unlock-->
// RUNNING; a call in any other state is CUDA_ERROR_ILLEGAL_STATE. While the process is not
// RUNNING every other driver call blocks (core/api.hpp). The software driver keeps device memory
// in host memory, so checkpointing copies nothing, and it can act on its own process only.
#include <unistd.h>

#include <algorithm>
#include <iterator>

#include "core/api.hpp"

namespace swcu {
namespace {

// Reserved fields "must be zeroed".
template <class T>
bool zeroed(const T& reserved) noexcept {
  return std::all_of(std::begin(reserved), std::end(reserved), [](auto v) { return v == 0; });
}

// The process `pid` names: only this one is a CUDA process the driver can act on.
CUresult check_pid(int pid) noexcept {
  if (pid <= 0) return CUDA_ERROR_INVALID_VALUE;
  return pid == static_cast<int>(getpid()) ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

// Moves from `from` to `to`, or CUDA_ERROR_ILLEGAL_STATE.
CUresult transition(Sym sym, int pid, int from, int to) {
  return call(sym, [=](State& s) -> CUresult {
    if (const CUresult r = check_pid(pid)) return r;
    if (s.checkpoint_state != from) return CUDA_ERROR_ILLEGAL_STATE;
    s.checkpoint_state = to;
    if (to == CU_PROCESS_STATE_RUNNING) s.checkpoint_resumed.notify_all();
    return CUDA_SUCCESS;
  });
}

}  // namespace
}  // namespace swcu

extern "C" {

using swcu::Sym;

CUresult cuCheckpointProcessGetState(int pid, CUprocessState* state) {
  return swcu::call(Sym::cuCheckpointProcessGetState, [=](swcu::State& s) -> CUresult {
    if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_pid(pid)) return r;
    *state = static_cast<CUprocessState>(s.checkpoint_state);
    return CUDA_SUCCESS;
  });
}

// "Process must be in the RUNNING state in order to lock." In-flight calls of other threads
// hold the state lock, so taking it waits for them: no timeout is ever reached.
CUresult cuCheckpointProcessLock(int pid, CUcheckpointLockArgs* args) {
  if (args != nullptr && (args->reserved0 != 0 || !swcu::zeroed(args->reserved1))) {
    return swcu::call(Sym::cuCheckpointProcessLock,
                      [](swcu::State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  return swcu::transition(Sym::cuCheckpointProcessLock, pid, CU_PROCESS_STATE_RUNNING,
                          CU_PROCESS_STATE_LOCKED);
}

// "Process must be in the LOCKED state to checkpoint."
CUresult cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs* args) {
  if (args != nullptr && !swcu::zeroed(args->reserved)) {
    return swcu::call(Sym::cuCheckpointProcessCheckpoint,
                      [](swcu::State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  return swcu::transition(Sym::cuCheckpointProcessCheckpoint, pid, CU_PROCESS_STATE_LOCKED,
                          CU_PROCESS_STATE_CHECKPOINTED);
}

// "Process must be in the CHECKPOINTED state to restore ... Upon successful return the process
// will be in the LOCKED state." GPU pairs remap devices: every pair must name a device of this
// driver (restoring onto the same devices is the only mapping the software driver can do).
CUresult cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs* args) {
  if (args != nullptr && (!swcu::zeroed(args->reserved) || args->reserved1 != 0 ||
                          (args->gpuPairsCount > 0 && args->gpuPairs == nullptr))) {
    return swcu::call(Sym::cuCheckpointProcessRestore,
                      [](swcu::State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  if (args != nullptr) {
    for (unsigned i = 0; i < args->gpuPairsCount; ++i) {
      if (std::memcmp(&args->gpuPairs[i].oldUuid, &args->gpuPairs[i].newUuid, sizeof(CUuuid)) !=
          0) {
        return swcu::call(Sym::cuCheckpointProcessRestore,
                          [](swcu::State&) { return CUDA_ERROR_NOT_SUPPORTED; });
      }
    }
  }
  return swcu::transition(Sym::cuCheckpointProcessRestore, pid, CU_PROCESS_STATE_CHECKPOINTED,
                          CU_PROCESS_STATE_LOCKED);
}

// "Process must be in the LOCKED state." Blocked calls go on.
CUresult cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs* args) {
  if (args != nullptr && !swcu::zeroed(args->reserved)) {
    return swcu::call(Sym::cuCheckpointProcessUnlock,
                      [](swcu::State&) { return CUDA_ERROR_INVALID_VALUE; });
  }
  return swcu::transition(Sym::cuCheckpointProcessUnlock, pid, CU_PROCESS_STATE_LOCKED,
                          CU_PROCESS_STATE_RUNNING);
}

// The software driver restores on the calling thread; it has no restore thread to name.
CUresult cuCheckpointProcessGetRestoreThreadId(int pid, int* tid) {
  return swcu::call(Sym::cuCheckpointProcessGetRestoreThreadId, [=](swcu::State&) -> CUresult {
    if (tid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = swcu::check_pid(pid)) return r;
    return CUDA_ERROR_NOT_SUPPORTED;
  });
}

}  // extern "C"
