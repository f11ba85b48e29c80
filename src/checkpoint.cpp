#include "cuwrap/checkpoint.hpp"

#include <string>
#include <vector>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap::checkpoint {
namespace {

// Throws for a failed call; an illegal state names the state the process is in and the one
// the operation needs.
void check_transition(CUresult r, const char* api, int pid, const char* needs,
                      std::source_location where) {
  if (r == CUDA_SUCCESS) {
    return;
  }
  std::string details = "process " + std::to_string(pid);
  if (r == CUDA_ERROR_ILLEGAL_STATE) {
    CUprocessState now{};
    if (detail::driver().cuCheckpointProcessGetState(pid, &now) == CUDA_SUCCESS) {
      details += " is " + std::string{to_string(static_cast<process_state>(now))};
    }
    details += "; this needs it " + std::string{needs};
  }
  detail::throw_error(make_error_code(r), api, details, where);
}

}  // namespace

std::string_view to_string(process_state state) noexcept {
  switch (state) {
    case process_state::running: return "running";
    case process_state::locked: return "locked";
    case process_state::checkpointed: return "checkpointed";
    case process_state::failed: return "failed";
  }
  return "in an unknown state";
}

process_state state(int pid, std::source_location where) {
  CUprocessState s{};
  const CUresult r = detail::driver().cuCheckpointProcessGetState(pid, &s);
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuCheckpointProcessGetState",
                        "process " + std::to_string(pid), where);
  }
  return static_cast<process_state>(s);
}

void lock(int pid, std::chrono::milliseconds timeout, std::source_location where) {
  CUcheckpointLockArgs args{};
  args.timeoutMs = static_cast<unsigned>(timeout.count());
  check_transition(detail::driver().cuCheckpointProcessLock(pid, &args), "cuCheckpointProcessLock",
                   pid, "running", where);
}

void save(int pid, std::source_location where) {
  check_transition(detail::driver().cuCheckpointProcessCheckpoint(pid, nullptr),
                   "cuCheckpointProcessCheckpoint", pid, "locked", where);
}

void restore(int pid, std::span<const gpu_remap> remap, std::source_location where) {
  std::vector<CUcheckpointGpuPair> pairs;
  pairs.reserve(remap.size());
  for (const gpu_remap& m : remap) {
    pairs.push_back({m.from, m.to});
  }
  CUcheckpointRestoreArgs args{};
  args.gpuPairs = pairs.empty() ? nullptr : pairs.data();
  args.gpuPairsCount = static_cast<unsigned>(pairs.size());
  check_transition(detail::driver().cuCheckpointProcessRestore(pid, &args),
                   "cuCheckpointProcessRestore", pid, "checkpointed", where);
}

void unlock(int pid, std::source_location where) {
  check_transition(detail::driver().cuCheckpointProcessUnlock(pid, nullptr),
                   "cuCheckpointProcessUnlock", pid, "locked", where);
}

int restore_thread_id(int pid, std::source_location where) {
  int tid = 0;
  const CUresult r = detail::driver().cuCheckpointProcessGetRestoreThreadId(pid, &tid);
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuCheckpointProcessGetRestoreThreadId",
                        "process " + std::to_string(pid), where);
  }
  return tid;
}

}  // namespace cuwrap::checkpoint
