#include "cuwrap/launch_config.hpp"

#include <doctest/doctest.h>

#include <cstdint>

#include "cuwrap/error.hpp"

TEST_SUITE("launch_config") {
  TEST_CASE("linear() covers every element with at least one block") {
    const auto c = cuwrap::launch_config::linear(1000, 256);
    CHECK(c.grid() == cuwrap::dims{4});
    CHECK(c.block() == cuwrap::dims{256});
    CHECK(cuwrap::launch_config::linear(0, 128).grid().x == 1);
    CHECK(cuwrap::launch_config::linear(256, 256).grid().x == 1);
    CHECK(c.attributes().empty());
  }

  TEST_CASE("zero and oversized dimensions are refused, naming the value") {
    CHECK_THROWS_WITH_AS(cuwrap::launch_config({0}, {32}),
                         doctest::Contains("grid (0, 1, 1) has a zero dimension"), cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::launch_config({1}, {32, 64}),
                         doctest::Contains("block (32, 64, 1) exceeds CUDA's limits"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::launch_config({1, 70000}, {32}),
                         doctest::Contains("grid (1, 70000, 1) exceeds"), cuwrap::error);
    CHECK_THROWS_WITH_AS((void)cuwrap::launch_config::linear(std::size_t{1} << 45, 32),
                         doctest::Contains("more than a grid can have"), cuwrap::error);
    CHECK_THROWS_AS((void)cuwrap::launch_config::linear(10, 0), cuwrap::error);
  }

  TEST_CASE("a cluster must divide the grid") {
    cuwrap::launch_config c{{6, 4}, {128}};
    CHECK_NOTHROW(c.with_cluster({2, 2}));
    CHECK_THROWS_WITH_AS(c.with_cluster({4}),
                         doctest::Contains("cluster (4, 1, 1) does not divide grid (6, 4, 1)"),
                         cuwrap::error);
    CHECK(c.attributes().size() == 1);
  }

  TEST_CASE("attributes are kept once each, last value wins") {
    cuwrap::launch_config c{{1}, {1}};
    c.with_priority(1).with_priority(-2).with_cooperative().with_programmatic_serialization();
    REQUIRE(c.attributes().size() == 3);
    CHECK(c.attributes()[0].id == CU_LAUNCH_ATTRIBUTE_PRIORITY);
    CHECK(c.attributes()[0].value.priority == -2);
    CHECK(c.attributes()[1].value.cooperative == 1);
  }

  TEST_CASE("every launch attribute of cuda.h is a typed option, each kept once") {
    // CUDA 13's cuda.h: CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW (1) .. PREFERRED_SHARED_MEMORY_
    // CARVEOUT (14) and NVLINK_UTIL_CENTRIC_SCHEDULING (16): fifteen kinds.
    static_assert(cuwrap::launch_config::max_attributes == 15);
    const auto event = reinterpret_cast<CUevent>(std::uintptr_t{0x1230});
    int window_bytes[4] = {};
    cuwrap::launch_config c{{8, 4}, {64}};
    c.with_access_policy_window({window_bytes, sizeof window_bytes, 0.5f,
                                 cuwrap::access_property::persisting,
                                 cuwrap::access_property::streaming})
        .with_cooperative()
        .with_synchronization_policy(cuwrap::synchronization_policy::yield)
        .with_cluster({2, 2})
        .with_cluster_scheduling_policy(cuwrap::cluster_scheduling_policy::spread)
        .with_programmatic_serialization()
        .with_programmatic_event(cuwrap::event_ref{event}, true)
        .with_priority(-1)
        .with_memory_sync_domain_map({2, 3})
        .with_memory_sync_domain(cuwrap::memory_sync_domain::remote)
        .with_preferred_cluster({4, 4})
        .with_launch_completion_event(cuwrap::event_ref{event})
        .with_device_updatable_kernel_node()
        .with_shared_memory_carveout(cuwrap::shared_memory_carveout::max_shared)
        .with_nvlink_util_centric_scheduling();
    REQUIRE(c.attributes().size() == 15);
    for (std::size_t i = 0; i < c.attributes().size(); ++i) {
      for (std::size_t j = i + 1; j < c.attributes().size(); ++j) {
        CHECK(c.attributes()[i].id != c.attributes()[j].id);
      }
    }
    const auto& w = c.find(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW)->value.accessPolicyWindow;
    CHECK(w.base_ptr == window_bytes);
    CHECK(w.num_bytes == sizeof window_bytes);
    CHECK(w.hitRatio == 0.5f);
    CHECK(w.hitProp == CU_ACCESS_PROPERTY_PERSISTING);
    CHECK(w.missProp == CU_ACCESS_PROPERTY_STREAMING);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_COOPERATIVE)->value.cooperative == 1);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY)->value.syncPolicy ==
          CU_SYNC_POLICY_YIELD);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)->value.clusterDim.y == 2);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)
              ->value.clusterSchedulingPolicyPreference == CU_CLUSTER_SCHEDULING_POLICY_SPREAD);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
              ->value.programmaticStreamSerializationAllowed == 1);
    const auto& pe = c.find(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT)->value.programmaticEvent;
    CHECK(pe.event == event);
    CHECK(pe.flags == 0);
    CHECK(pe.triggerAtBlockStart == 1);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_PRIORITY)->value.priority == -1);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP)->value.memSyncDomainMap.default_ == 2);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP)->value.memSyncDomainMap.remote == 3);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN)->value.memSyncDomain ==
          CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION)->value.preferredClusterDim.x ==
          4);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)->value.launchCompletionEvent.event ==
          event);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE)
              ->value.deviceUpdatableKernelNode.deviceUpdatable == 1);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)->value.sharedMemCarveout ==
          100);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING)
              ->value.nvlinkUtilCentricScheduling == 1);

    // Setting one again replaces its value in place; a copy carries every attribute.
    c.with_shared_memory_carveout(25).with_cooperative(false);
    CHECK(c.attributes().size() == 15);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)->value.sharedMemCarveout ==
          25);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_COOPERATIVE)->value.cooperative == 0);
    const cuwrap::launch_config copy = c;
    REQUIRE(copy.attributes().size() == 15);
    CHECK(copy.find(CU_LAUNCH_ATTRIBUTE_PRIORITY)->value.priority == -1);
    cuwrap::launch_config assigned{{1}, {1}};
    assigned = copy;
    CHECK(assigned.grid() == cuwrap::dims{8, 4});
    CHECK(assigned.attributes().size() == 15);
    CHECK(cuwrap::launch_config{{1}, {1}}.find(CU_LAUNCH_ATTRIBUTE_PRIORITY) == nullptr);
  }

  TEST_CASE("attribute values are validated where they are set, naming the value") {
    cuwrap::launch_config c{{8, 4, 2}, {64}};
    CHECK_THROWS_WITH_AS(c.with_access_policy_window({nullptr, 64, 1.5f}),
                         doctest::Contains("hit ratio 1.5 is not in [0, 1]"), cuwrap::error);
    CHECK_THROWS_WITH_AS(c.with_access_policy_window({nullptr, 64, -0.25f}),
                         doctest::Contains("hit ratio -0.25"), cuwrap::error);
    CHECK_THROWS_WITH_AS(
        c.with_access_policy_window({nullptr, 64, 0.5f, cuwrap::access_property::normal,
                                     cuwrap::access_property::persisting}),
        doctest::Contains("miss property 2 must be normal or streaming"), cuwrap::error);
    CHECK_THROWS_WITH_AS(
        c.with_access_policy_window({nullptr, 64, 0.5f, static_cast<cuwrap::access_property>(7)}),
        doctest::Contains("hit property 7"), cuwrap::error);
    CHECK_THROWS_WITH_AS(
        c.with_synchronization_policy(static_cast<cuwrap::synchronization_policy>(9)),
        doctest::Contains("synchronization policy 9"), cuwrap::error);
    CHECK_THROWS_WITH_AS(
        c.with_cluster_scheduling_policy(static_cast<cuwrap::cluster_scheduling_policy>(3)),
        doctest::Contains("cluster scheduling policy 3"), cuwrap::error);
    CHECK_THROWS_WITH_AS(c.with_memory_sync_domain(static_cast<cuwrap::memory_sync_domain>(5)),
                         doctest::Contains("memory sync domain 5"), cuwrap::error);
    CHECK_THROWS_WITH_AS(c.with_shared_memory_carveout(101),
                         doctest::Contains("shared memory carveout 101 is not a percentage"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS(c.with_shared_memory_carveout(static_cast<unsigned>(-1)),
                         doctest::Contains("carveout 4294967295"), cuwrap::error);

    // Events: not empty, and no record flags (cuda.h: CU_EVENT_RECORD_EXTERNAL is refused).
    const auto event = reinterpret_cast<CUevent>(std::uintptr_t{0x1230});
    CHECK_THROWS_WITH_AS(c.with_programmatic_event(cuwrap::event_ref{CUevent{}}),
                         doctest::Contains("with_programmatic_event: the event is empty"),
                         cuwrap::usage_error);
    CHECK_THROWS_WITH_AS(c.with_launch_completion_event(cuwrap::event_ref{event},
                                                        cuwrap::event_record_flags::external),
                         doctest::Contains("with_launch_completion_event: record flags 1"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS(c.with_programmatic_event(cuwrap::event_ref{event}, false,
                                                   cuwrap::event_record_flags::external),
                         doctest::Contains("record flags 1"), cuwrap::error);

    // Preferred clusters: divide the grid; with a cluster, multiples of it in x and y, equal in z
    // (whichever is set first).
    CHECK_THROWS_WITH_AS(c.with_preferred_cluster({3}),
                         doctest::Contains("preferred cluster (3, 1, 1) does not divide grid "
                                           "(8, 4, 2)"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS(c.with_preferred_cluster({0, 1}),
                         doctest::Contains("has a zero dimension"), cuwrap::error);
    c.with_cluster({2, 2});
    CHECK_THROWS_WITH_AS(c.with_preferred_cluster({4, 1}),
                         doctest::Contains("preferred cluster (4, 1, 1) is not a multiple of "
                                           "cluster (2, 2, 1)"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS(c.with_preferred_cluster({2, 2, 2}), doctest::Contains("z equal"),
                         cuwrap::error);
    CHECK_NOTHROW(c.with_preferred_cluster({8, 4}));
    CHECK_THROWS_WITH_AS(c.with_cluster({2, 1, 2}),  // z differs from the preferred 1
                         doctest::Contains("preferred cluster (8, 4, 1) is not a multiple of "
                                           "cluster (2, 1, 2)"),
                         cuwrap::error);
    // Refused values left the configuration as it was.
    CHECK(c.attributes().size() == 2);
    CHECK(c.find(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)->value.clusterDim.x == 2);
  }
}
