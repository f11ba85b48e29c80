// docs/streams-and-events.md: two streams ordered by an event, host work, timing.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <vector>

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream producer{ctx}, consumer{ctx};
  cuwrap::event ready{ctx}, start{ctx, cuwrap::event_flags::timing},
      stop{ctx, cuwrap::event_flags::timing};
  std::vector<int> order;
  producer.record(start);
  producer.enqueue([&order] { order.push_back(1); });
  producer.record(ready);
  consumer.wait(ready);  // consumer's later work waits for the producer's
  consumer.enqueue([&order] { order.push_back(2); });
  consumer.record(stop);
  consumer.synchronize();
  std::printf("order %d %d, %.3f ms\n", order[0], order[1],
              static_cast<double>(cuwrap::elapsed(start, stop).count()));
  return order == std::vector{1, 2} ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
