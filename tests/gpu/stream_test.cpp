#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "cuwrap/cuwrap.hpp"

TEST_SUITE("gpu stream") {
  TEST_CASE("host work on a real stream runs in order, after an event wait") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream a{ctx};
    cuwrap::stream b{ctx};
    cuwrap::event ready{ctx};
    std::vector<int> order;
    a.enqueue([&order] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      order.push_back(1);
    });
    a.record(ready);
    b.wait(ready);
    b.enqueue([&order] { order.push_back(2); });
    b.synchronize();
    CHECK(order == std::vector{1, 2});
  }

  TEST_CASE("record and elapsed time a real sequence") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event start{ctx, cuwrap::event_flags::timing};
    cuwrap::event stop{ctx, cuwrap::event_flags::timing};
    s.record(start);
    s.enqueue([] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
    s.record(stop);
    stop.synchronize();
    const auto ms = cuwrap::elapsed(start, stop).count();
    CHECK(ms >= 25.0f);  // the host work held the stream for 30 ms
    CHECK(ms < 5000.0f);
  }

  TEST_CASE("is_done is false while host work holds the stream") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    std::atomic<bool> release{false};
    s.enqueue([&release] {
      while (!release.load()) std::this_thread::yield();
    });
    CHECK_FALSE(s.is_done());
    release = true;
    s.synchronize();
    CHECK(s.is_done());
  }

  TEST_CASE("an exception from host work on a real stream is rethrown by synchronize") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    s.enqueue([] { throw std::runtime_error{"boom"}; });
    CHECK_THROWS_WITH_AS(s.synchronize(), "boom", std::runtime_error);
  }

  TEST_CASE("elapsed on events without timing is refused by the real driver") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event a{ctx};
    cuwrap::event b{ctx};
    s.record(a);
    s.record(b);
    s.synchronize();
    CHECK_THROWS_AS((void)cuwrap::elapsed(a, b), cuwrap::error);
  }
}
