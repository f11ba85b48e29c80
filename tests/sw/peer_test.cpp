#include "cuwrap/peer.hpp"

#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "ipc_parent.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

TEST_SUITE("ipc") {
  TEST_CASE_FIXTURE(
      sw_fixture, "a second process opens exported memory and an event, and writes to the memory") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    cuwrap::device_buffer<int> shared{ctx, 1000};
    std::vector<int> values(1000);
    std::iota(values.begin(), values.end(), 0);
    cuwrap::copy(s, shared, values);
    cuwrap::event ready{ctx, cuwrap::event_flags::interprocess};
    s.record(ready);
    s.synchronize();
    REQUIRE(cuwrap::testing::run_ipc_child(shared, ready) == 0);
    std::vector<int> back(1000);
    cuwrap::copy(back, shared);
    for (std::size_t i = 0; i < back.size(); ++i) REQUIRE(back[i] == values[i] + 1);
  }

  TEST_CASE_FIXTURE(sw_fixture, "an event without the interprocess flag cannot be exported") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::event plain{ctx};
    CHECK_THROWS_AS((void)cuwrap::export_event(plain), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "handles are plain bytes that survive a round trip") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::device_buffer<int> shared{ctx, 16};
    const auto a = cuwrap::export_memory(shared.span());
    const auto b = cuwrap::export_memory(shared.span());
    CHECK(a == b);
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE_FIXTURE(sw_fixture,
                    "with four devices the peer matrix is full and attributes are reported") {
    const auto topology = cuwrap::peer_matrix();
    REQUIRE(topology.devices.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = 0; j < 4; ++j) CHECK(topology.can_access[i][j] == (i != j));
    }
    const auto a = cuwrap::p2p_attributes(topology.devices[0], topology.devices[1]);
    CHECK(a.access_supported);
    CHECK_THROWS_AS((void)cuwrap::p2p_attributes(topology.devices[0], topology.devices[0]),
                    cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "peer access is enabled once and disabled by the guard that enabled it") {
    cuwrap::primary_context a{cuwrap::device::get(0)};
    cuwrap::primary_context b{cuwrap::device::get(1)};
    {
      cuwrap::peer_access first{a, b};
      CHECK(first.enabled_here());
      {
        cuwrap::peer_access second{a, b};
        CHECK_FALSE(second.enabled_here());  // already enabled: not an error, not disabled
      }
      cuwrap::peer_access again{a, b};
      CHECK_FALSE(again.enabled_here());  // still enabled by `first`
    }
    cuwrap::peer_access after{a, b};
    CHECK(after.enabled_here());  // `first` disabled it
    CHECK(swcuda().context_stack_depth() == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "peer copies move data between devices") {
    cuwrap::primary_context a{cuwrap::device::get(0)};
    cuwrap::primary_context b{cuwrap::device::get(1)};
    cuwrap::device_buffer<int> on_a{a, 512}, on_b{b, 512};
    std::vector<int> values(512);
    std::iota(values.begin(), values.end(), 7);
    {
      cuwrap::scoped_current_context current{a};
      cuwrap::copy(on_a, values);
    }
    cuwrap::copy_peer(b, on_b, a, on_a);
    cuwrap::stream s{b};
    std::vector<int> back(512);
    cuwrap::copy_peer(s, a, on_a, b, on_b);
    cuwrap::copy(s, back, on_b);
    s.synchronize();
    CHECK(back == values);
    CHECK_THROWS_WITH_AS(cuwrap::copy_peer(b, on_b.span().first(10), a, on_a),
                         doctest::Contains("destination has 10 elements, source has 512"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "without a link peer access names both devices") {
    cuwrap::primary_context a{cuwrap::device::get(0)};
    cuwrap::primary_context b{cuwrap::device::get(1)};
    CHECK(cuwrap::can_access_peer(cuwrap::device::get(0), cuwrap::device::get(1)));
    CHECK_FALSE(cuwrap::can_access_peer(cuwrap::device::get(1), cuwrap::device::get(0)));
    CHECK_THROWS_WITH_AS(cuwrap::peer_access(b, a),
                         doctest::Contains("from device 1 and device 0: these devices cannot "
                                           "access each other"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: enabling peer access and opening IPC memory") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context a{cuwrap::device::get(0)};
      cuwrap::primary_context b{cuwrap::device::get(1)};
      cuwrap::peer_access access{a, b};
      cuwrap::device_buffer<int> memory{a, 16};
      (void)cuwrap::export_memory(memory.span());
    });
    CHECK(points >= 6);
  }
}
