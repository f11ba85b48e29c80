// Stream memory operations and stream attributes on a real GPU: what the software driver models.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "cuwrap/cuwrap.hpp"

TEST_SUITE("gpu stream memory operations") {
  TEST_CASE("a host thread releases a wait through mapped pinned memory on a GPU") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    // The _V1 attributes (92-94) read 0 on an H200 (driver 580.159.04, 2026-11-27): they ask
    // about the deprecated v1 API. These replaced them and read 1 there.
    REQUIRE(ctx.device().raw_attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) == 1);
    REQUIRE(ctx.device().raw_attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR) == 1);
    const cuwrap::scoped_current_context current{ctx};
    cuwrap::stream gpu{ctx};
    cuwrap::stream other{ctx};
    cuwrap::pinned_buffer<std::uint32_t> mailbox{ctx, 1, cuwrap::pinned_flags::device_mapped};
    mailbox[0] = 0;
    cuwrap::device_buffer<std::uint32_t> results{ctx, 2};
    cuwrap::fill(results.span(), 0u);
    gpu.wait_value(mailbox.device(), 1u, cuwrap::wait_condition::greater_equal);
    gpu.write_value(results.span().subspan(0, 1), 10u);
    other.batch(cuwrap::memop_batch{}.write(results.span().subspan(1, 1), 20u).barrier());
    other.synchronize();
    CHECK_FALSE(gpu.is_done());
    std::atomic_ref<std::uint32_t>(mailbox[0]).store(1);
    gpu.synchronize();
    std::vector<std::uint32_t> out(2);
    cuwrap::copy(out, results);
    CHECK(out == std::vector<std::uint32_t>{10, 20});
  }

  TEST_CASE("typed stream attributes round-trip on a GPU") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    s.set_synchronization_policy(cuwrap::synchronization_policy::blocking_sync);
    CHECK(s.synchronization_policy() == cuwrap::synchronization_policy::blocking_sync);
    const auto range = ctx.stream_priorities();
    s.set_priority(range.greatest);
    CHECK(s.priority() == range.greatest);
    cuwrap::stream copy{ctx};
    copy.copy_attributes_from(s);
    CHECK(copy.synchronization_policy() == cuwrap::synchronization_policy::blocking_sync);
    CHECK(s.device().ordinal() == 0);
  }
}
