// Context-wide events, context flags and feature detection on a real driver.
#include <doctest/doctest.h>

#include <atomic>

#include "cuwrap/cuwrap.hpp"

TEST_SUITE("gpu context events") {
  TEST_CASE("a context waits for all the work another context recorded") {
    if (!cuwrap::supports(cuwrap::feature::context_events)) {
      MESSAGE("the driver has no cuCtxRecordEvent (CUDA 12.5)");
      return;
    }
    cuwrap::context producer{cuwrap::device::get(0)};
    cuwrap::context consumer{cuwrap::device::get(0)};
    cuwrap::stream a{producer}, b{producer}, c{consumer};
    cuwrap::event all{producer};
    std::atomic<int> finished{0};
    int seen = -1;
    a.enqueue([&finished] { ++finished; });
    b.enqueue([&finished] { ++finished; });
    producer.record_event(all);
    consumer.wait_event(all);
    c.enqueue([&finished, &seen] { seen = finished.load(); });
    consumer.synchronize();
    CHECK(seen == 2);  // both of the producer's streams were done
  }

  TEST_CASE("context flags are replaced and read back") {
    cuwrap::context ctx{cuwrap::device::get(0), cuwrap::context_flags::sched_spin};
    ctx.set_flags(cuwrap::context_flags::sched_blocking_sync);
    CHECK(ctx.flags() == cuwrap::context_flags::sched_blocking_sync);
  }

  TEST_CASE("every feature cuwrap wraps on a CUDA 13 driver is supported") {
    if (cuwrap::driver_version() < 13000) return;
    for (const auto f :
         {cuwrap::feature::context_events, cuwrap::feature::tensor_maps, cuwrap::feature::profiler,
          cuwrap::feature::driver_logs, cuwrap::feature::checkpoint}) {
      INFO(cuwrap::to_string(f));
      CHECK(cuwrap::supports(f));
    }
  }
}
