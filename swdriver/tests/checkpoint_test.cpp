// Checkpoint and restore: the CUprocessState machine of cuda.h, and calls blocking while the
// process is locked.
#include <unistd.h>

#include <atomic>
#include <thread>

#include "swdriver_test.hpp"

namespace {

CUprocessState state_of(int pid) {
  CUprocessState state = CU_PROCESS_STATE_FAILED;
  REQUIRE(swcu::test::api().cuCheckpointProcessGetState(pid, &state) == CUDA_SUCCESS);
  return state;
}

}  // namespace

TEST_SUITE("checkpoint") {
  // "Process must be in the RUNNING state in order to lock ... LOCKED state to checkpoint ...
  // CHECKPOINTED state to restore ... Upon successful return [of restore] the process will be
  // in the LOCKED state ... [unlock:] Process must be in the LOCKED state."
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the process goes through cuda.h's states in order") {
    const int pid = static_cast<int>(getpid());
    CUcheckpointGpuPair pair{};  // before locking: a locked process's other calls block
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetUuid_v2(&pair.oldUuid, 0));
    pair.newUuid = pair.oldUuid;
    CHECK(state_of(pid) == CU_PROCESS_STATE_RUNNING);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessCheckpoint(pid, nullptr),
                           CUDA_ERROR_ILLEGAL_STATE);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessRestore(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessUnlock(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessLock(pid, nullptr));
    CHECK(state_of(pid) == CU_PROCESS_STATE_LOCKED);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessLock(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessRestore(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessCheckpoint(pid, nullptr));
    CHECK(state_of(pid) == CU_PROCESS_STATE_CHECKPOINTED);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessUnlock(pid, nullptr), CUDA_ERROR_ILLEGAL_STATE);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessCheckpoint(pid, nullptr),
                           CUDA_ERROR_ILLEGAL_STATE);
    CUcheckpointRestoreArgs same{};
    same.gpuPairs = &pair;
    same.gpuPairsCount = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessRestore(pid, &same));
    CHECK(state_of(pid) == CU_PROCESS_STATE_LOCKED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessUnlock(pid, nullptr));
    CHECK(state_of(pid) == CU_PROCESS_STATE_RUNNING);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "checkpoint arguments are checked") {
    const int pid = static_cast<int>(getpid());
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessGetState(pid, nullptr), CUDA_ERROR_INVALID_VALUE);
    CUprocessState state{};
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessGetState(0, &state), CUDA_ERROR_INVALID_VALUE);
    // Another process: the software driver sees only its own.
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessGetState(pid + 1, &state),
                           CUDA_ERROR_NOT_SUPPORTED);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessLock(pid + 1, nullptr), CUDA_ERROR_NOT_SUPPORTED);
    CUcheckpointLockArgs lock{};
    lock.reserved0 = 1;  // "Reserved for future use, must be zero"
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessLock(pid, &lock), CUDA_ERROR_INVALID_VALUE);
    lock = {};
    lock.timeoutMs = 100;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessLock(pid, &lock));
    CUcheckpointCheckpointArgs checkpoint{};
    checkpoint.reserved[3] = 1;
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessCheckpoint(pid, &checkpoint),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessCheckpoint(pid, nullptr));
    CUcheckpointRestoreArgs restore{};
    restore.gpuPairsCount = 1;  // no array
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessRestore(pid, &restore), CUDA_ERROR_INVALID_VALUE);
    CUcheckpointGpuPair pair{};
    pair.newUuid.bytes[0] = 1;  // onto another GPU: not something this driver can do
    restore.gpuPairs = &pair;
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessRestore(pid, &restore), CUDA_ERROR_NOT_SUPPORTED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessRestore(pid, nullptr));
    int tid = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessGetRestoreThreadId(pid, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessGetRestoreThreadId(pid, &tid),
                           CUDA_ERROR_NOT_SUPPORTED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessUnlock(pid, nullptr));
  }

  // CU_PROCESS_STATE_LOCKED: "CUDA API locks are taken so further CUDA API calls will block".
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "other calls block until the process is unlocked") {
    const int pid = static_cast<int>(getpid());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessLock(pid, nullptr));
    const unsigned long long before = ctl.call_count("cuDeviceGetCount");
    std::atomic<bool> returned{false};
    std::thread caller([&returned] {
      int count = 0;
      CHECK(swcu::test::api().cuDeviceGetCount(&count) == CUDA_SUCCESS);
      returned = true;
    });
    // The call has started (it is counted before it takes the driver's lock) ...
    while (ctl.call_count("cuDeviceGetCount") == before) std::this_thread::yield();
    // ... and cannot return while the process is locked: the state below is read under the
    // same lock the caller waits on.
    CHECK(state_of(pid) == CU_PROCESS_STATE_LOCKED);
    CHECK_FALSE(returned.load());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCheckpointProcessUnlock(pid, nullptr));
    caller.join();
    CHECK(returned.load());
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a fault rule fails cuCheckpointProcessLock") {
    CHECK(ctl.add_fault_rule("cuCheckpointProcessLock:1:CUDA_ERROR_NOT_READY") == 0);
    const int pid = static_cast<int>(getpid());
    SWCU_TEST_CHECK_RESULT(cu.cuCheckpointProcessLock(pid, nullptr), CUDA_ERROR_NOT_READY);
    CHECK(state_of(pid) == CU_PROCESS_STATE_RUNNING);
  }
}
