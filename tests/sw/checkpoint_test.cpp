// cuwrap::checkpoint: the process state machine on the software driver.
#include "cuwrap/checkpoint.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <string>

#include "call_checks.hpp"
#include "cuwrap/detail/driver.hpp"
#include "sw_fixture.hpp"

using cuwrap::checkpoint::process_state;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;

TEST_SUITE("checkpoint") {
  TEST_CASE_FIXTURE(sw_fixture, "a process is locked, saved, restored and unlocked") {
    const int pid = static_cast<int>(getpid());
    CUuuid uuid{};  // before locking: a locked process's other driver calls block
    REQUIRE(cuwrap::detail::driver().cuDeviceGetUuid(&uuid, 0) == CUDA_SUCCESS);
    CHECK(cuwrap::checkpoint::state(pid) == process_state::running);
    check_one_call("cuCheckpointProcessLock", [&] { cuwrap::checkpoint::lock(pid); });
    CHECK(cuwrap::checkpoint::state(pid) == process_state::locked);
    check_one_call("cuCheckpointProcessCheckpoint", [&] { cuwrap::checkpoint::save(pid); });
    CHECK(cuwrap::checkpoint::state(pid) == process_state::checkpointed);
    const std::array remap{cuwrap::checkpoint::gpu_remap{uuid, uuid}};  // onto the same GPU
    check_one_call("cuCheckpointProcessRestore", [&] { cuwrap::checkpoint::restore(pid, remap); });
    CHECK(cuwrap::checkpoint::state(pid) == process_state::locked);
    check_one_call("cuCheckpointProcessUnlock", [&] { cuwrap::checkpoint::unlock(pid); });
    CHECK(cuwrap::checkpoint::state(pid) == process_state::running);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a call in the wrong state names the state and the one needed") {
    const int pid = static_cast<int>(getpid());
    CHECK_THROWS_WITH_AS(cuwrap::checkpoint::save(pid),
                         doctest::Contains("cuCheckpointProcessCheckpoint(process "),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::checkpoint::unlock(pid),
                         doctest::Contains("is running; this needs it locked"), cuwrap::error);
    cuwrap::checkpoint::lock(pid, std::chrono::milliseconds{50});
    CHECK_THROWS_WITH_AS(cuwrap::checkpoint::restore(pid),
                         doctest::Contains("is locked; this needs it checkpointed"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)cuwrap::checkpoint::restore_thread_id(pid),
                         doctest::Contains("CUDA_ERROR_NOT_SUPPORTED"), cuwrap::error);
    cuwrap::checkpoint::unlock(pid);
    const std::string other = "process " + std::to_string(pid + 1);
    CHECK_THROWS_WITH_AS((void)cuwrap::checkpoint::state(pid + 1), doctest::Contains(other.c_str()),
                         cuwrap::error);
  }

  TEST_CASE("process states have names") {
    CHECK(cuwrap::checkpoint::to_string(process_state::checkpointed) == "checkpointed");
    CHECK(cuwrap::checkpoint::to_string(process_state::failed) == "failed");
  }
}
