// Green contexts on the software driver: resources, splits, green_context, its streams and
// events, what its kernels see, the exact driver calls, and fault sweeps over creation.
#include "cuwrap/green_context.hpp"

#include <doctest/doctest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"
#include "test_kernels.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_calls;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

TEST_SUITE("green_context") {
  TEST_CASE_FIXTURE(sw_fixture, "a device's SM resource has every SM") {
    const auto dev = cuwrap::device::get(0);
    const auto all = cuwrap::sm_resource::of(dev);
    CHECK(all.count() == static_cast<unsigned>(dev.multiprocessor_count()));
    CHECK(all.count() == 132);
    CHECK(all.min_partition_size() == 8);
    CHECK(all.coscheduled_alignment() == 8);  // as an H200's: 132 is not a multiple of it
    CHECK(all.native().type == CU_DEV_RESOURCE_TYPE_SM);
    check_one_call("cuDeviceGetDevResource", [&] { (void)cuwrap::sm_resource::of(dev); });
  }

  TEST_CASE_FIXTURE(sw_fixture, "a split gives equal groups and the remainder") {
    const auto all = cuwrap::sm_resource::of(cuwrap::device::get(0));
    CHECK(all.group_count(32) == 4);
    const cuwrap::sm_split split = all.split(60, 2);  // rounded up to 64
    REQUIRE(split.groups.size() == 2);
    CHECK(split.groups[0].count() == 64);
    CHECK(split.groups[1].count() == 64);
    CHECK(split.remainder.count() == all.count() - 128);
    const auto fine = all.split(3, 1, cuwrap::sm_split_flags::ignore_sm_coscheduling);
    CHECK(fine.groups.at(0).count() == 4);
    check_one_call("cuDevSmResourceSplitByCount", [&] { (void)all.split(8, 1); });
    check_one_call("cuDevSmResourceSplitByCount", [&] { (void)all.group_count(8); });
  }

  TEST_CASE_FIXTURE(sw_fixture, "bad split input is refused before the driver, naming counts") {
    const auto all = cuwrap::sm_resource::of(cuwrap::device::get(0));
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)all.split(200, 1),
                           doctest::Contains("cuwrap::sm_resource::split(at least 200 SMs per "
                                             "group of a resource of 132 SMs)"),
                           cuwrap::error);
      CHECK_THROWS_WITH_AS((void)all.split(8, 0), doctest::Contains("0 groups asked for"),
                           cuwrap::error);
      CHECK_THROWS_WITH_AS((void)all.group_count(133),
                           doctest::Contains("cuwrap::sm_resource::group_count"), cuwrap::error);
    });
    CHECK(calls.empty());
    // What only the driver knows: a group cannot be split again.
    const auto group = all.split(64, 1).groups.at(0);
    CHECK_THROWS_WITH_AS((void)group.split(8, 1),
                         doctest::Contains("cuDevSmResourceSplitByCount(1 groups of at least 8 "
                                           "SMs of 64 SMs)"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a green context runs on its group and retains the primary") {
    const auto dev = cuwrap::device::get(0);
    const auto split = cuwrap::sm_resource::of(dev).split(16, 2);
    {
      cuwrap::green_context green{dev, split.groups[0]};
      CHECK(swcuda().live_handles(SWCU_GREEN_CONTEXT) == 1);
      CHECK(cuwrap::primary_context::is_active(dev));
      CHECK(green.green_handle() != nullptr);
      CHECK(green.sms().count() == 16);
      CHECK(cuwrap::sm_resource::of(cuwrap::context_ref{green}).count() == 16);
      CHECK(green.device() == dev);
      CHECK_FALSE(cuwrap::current_context().has_value());  // not made current
      cuwrap::green_context both{dev, std::span<const cuwrap::sm_resource>{split.groups}};
      CHECK(both.sms().count() == 32);
      CHECK(both.green_id() != green.green_id());
      check_one_call("cuGreenCtxGetId", [&] { (void)green.green_id(); });
      check_one_call("cuGreenCtxGetDevResource", [&] { (void)green.sms(); });
    }
    CHECK(swcuda().live_handles(SWCU_GREEN_CONTEXT) == 0);
    CHECK_FALSE(cuwrap::primary_context::is_active(dev));
  }

  TEST_CASE_FIXTURE(sw_fixture, "creating a green context makes three driver calls") {
    const auto dev = cuwrap::device::get(0);
    const auto all = cuwrap::sm_resource::of(dev);
    check_calls(
        {"cuDevResourceGenerateDesc", "cuGreenCtxCreate", "cuCtxFromGreenCtx", "cuGreenCtxDestroy"},
        [&] {
          cuwrap::green_context green{dev, all};
        });
  }

  TEST_CASE_FIXTURE(sw_fixture, "green context errors name what was wrong") {
    const auto dev = cuwrap::device::get(0);
    const auto all = cuwrap::sm_resource::of(dev);
    const auto a = all.split(16, 1);
    const auto b = all.split(16, 1);
    const std::array<cuwrap::sm_resource, 2> mixed{a.groups[0], b.groups[0]};
    CHECK_THROWS_WITH_AS(
        (cuwrap::green_context{dev, std::span<const cuwrap::sm_resource>{mixed}}),
        doctest::Contains("cuDevResourceGenerateDesc(device 0, 2 resources of 32 SMs)"),
        cuwrap::error);
    CHECK_THROWS_WITH_AS((cuwrap::green_context{dev, std::span<const cuwrap::sm_resource>{}}),
                         doctest::Contains("cuwrap::green_context(no SM resource given)"),
                         cuwrap::error);
    CHECK(swcuda().live_handles(SWCU_GREEN_CONTEXT) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a green context's streams run its kernels on its SMs") {
    const auto dev = cuwrap::device::get(0);
    const auto split = cuwrap::sm_resource::of(dev).split(16, 2);
    cuwrap::green_context left{dev, split.groups[0]};
    cuwrap::green_context right{dev, split.groups[1]};
    const auto mod = cuwrap::module::load_file(left, cuwrap::testing::kernels_file("ptx"));
    const auto scale = mod.kernel<void(float*, float, int)>("scale");
    cuwrap::stream s = left.create_stream();
    CHECK(cuwrap::green_context_of(s) == left.green_handle());
    CHECK(s.context() == cuwrap::context_ref{left});
    cuwrap::stream plain{right};  // cuStreamCreate with the green context's context current
    CHECK(cuwrap::green_context_of(plain) == right.green_handle());
    cuwrap::primary_context primary{dev};
    cuwrap::stream ordinary{primary};
    CHECK_FALSE(cuwrap::green_context_of(ordinary).has_value());
    check_one_call("cuStreamGetGreenCtx", [&] { (void)cuwrap::green_context_of(s); });

    std::vector<float> host(64, 1.0f);
    cuwrap::device_buffer<float> data{left, host.size()};
    cuwrap::copy(s, data, host);
    s.launch(scale, cuwrap::launch_config::linear(64, 32), data.data(), 3.0f, 64);
    // The other green context waits for the first one's work through an event.
    cuwrap::event done{left};
    left.record(done);
    right.wait(done);
    cuwrap::stream t = right.create_stream();
    t.launch(scale, cuwrap::launch_config::linear(64, 32), data.data(), 2.0f, 64);
    t.synchronize();
    cuwrap::copy(t, host, data);
    t.synchronize();
    for (const float v : host) CHECK(v == 6.0f);
    // Occupancy in the green context counts its 16 SMs only.
    {
      cuwrap::scoped_current_context current{left};
      const auto suggestion = cuwrap::occupancy::max_potential_block_size(scale);
      CHECK(suggestion.min_grid_size ==
            16 * cuwrap::occupancy::max_active_blocks_per_multiprocessor(scale,
                                                                         suggestion.block_size));
    }
    check_one_call("cuGreenCtxRecordEvent", [&] { left.record(done); });
    check_one_call("cuGreenCtxWaitEvent", [&] { right.wait(done); });
    check_calls({"cuGreenCtxStreamCreate", "cuStreamDestroy_v2"},
                [&] { cuwrap::stream u = left.create_stream(-1); });
    s.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "a moved-from green context is empty and refuses operations") {
    const auto dev = cuwrap::device::get(0);
    cuwrap::green_context a{dev, cuwrap::sm_resource::of(dev)};
    cuwrap::green_context b{std::move(a)};
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    CHECK(a.green_handle() == nullptr);
    CHECK(swcuda().live_handles(SWCU_GREEN_CONTEXT) == 1);
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_AS((void)a.sms(), cuwrap::usage_error);
      CHECK_THROWS_AS((void)a.green_id(), cuwrap::usage_error);
      CHECK_THROWS_WITH_AS((void)a.create_stream(), doctest::Contains("green_context"),
                           cuwrap::usage_error);
    });
    CHECK(calls.empty());
    CHECK(b.sms().count() == 132);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: green context creation, its streams and events") {
    const int points = cuwrap::testing::fault_sweep([] {
      const auto dev = cuwrap::device::get(0);
      const auto split = cuwrap::sm_resource::of(dev).split(16, 1);
      cuwrap::green_context green{dev, split.groups.at(0)};
      cuwrap::stream s = green.create_stream();
      cuwrap::event e{green};
      green.record(e);
      green.wait(e);
      (void)green.sms();
      (void)green.green_id();
      (void)cuwrap::green_context_of(s);
      s.synchronize();
    });
    CHECK(points >= 10);
  }
}
