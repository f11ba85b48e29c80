#include <doctest/doctest.h>

#include "cuwrap/cuwrap.hpp"

TEST_SUITE("gpu device") {
  TEST_CASE("a real device reports sane properties") {
    const auto dev = cuwrap::device::get(0);
    CHECK_FALSE(dev.name().empty());
    CHECK(dev.compute_capability().major >= 5);
    CHECK(dev.multiprocessor_count() > 0);
    CHECK(dev.warp_size() == 32);
    CHECK(dev.total_memory() > (std::size_t{1} << 30));
    CHECK(cuwrap::device::by_pci_bus_id(dev.pci_bus_id()) == dev);
    CHECK(cuwrap::driver_version() >= 12040);
    CHECK_FALSE(cuwrap::is_software_driver());
  }

  TEST_CASE("every table entry resolved on the real driver") {
    // Entries newer than the driver throw when called; on a 13.x driver none should be missing.
    if (cuwrap::driver_version() >= 13000) {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      CHECK_NOTHROW(cuwrap::context{cuwrap::device::get(0)});  // cuCtxCreate_v4
    }
  }

  TEST_CASE("contexts on a real device: stack unchanged, limits round-trip") {
    cuwrap::context ctx{cuwrap::device::get(0)};
    CHECK_FALSE(cuwrap::current_context().has_value());
    ctx.set_limit(cuwrap::context_limit::stack_size, 2048);
    CHECK(ctx.limit(cuwrap::context_limit::stack_size) >= 2048);
    const auto range = ctx.stream_priorities();
    CHECK(range.greatest <= range.least);
    CHECK_FALSE(cuwrap::current_context().has_value());
  }
}
