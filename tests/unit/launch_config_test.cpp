#include "cuwrap/launch_config.hpp"

#include <doctest/doctest.h>

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
}
