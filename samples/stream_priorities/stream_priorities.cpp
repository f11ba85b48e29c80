// stream_priorities: the idea of NVIDIA's StreamPriorities sample with cuwrap. Lists the
// context's stream priority range, creates a stream at each end, checks the driver kept the
// priorities, and checks that a priority outside the range is refused with a clear error.
// Kernels that race at both priorities come with the launch API.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  const auto range = ctx.stream_priorities();
  std::printf("stream priorities: %d (highest) to %d (lowest)\n", range.greatest, range.least);

  cuwrap::stream high{ctx, {.priority = range.greatest}};
  cuwrap::stream low{ctx, {.priority = range.least}};
  std::printf("high-priority stream: priority %d, id %llu\n", high.priority(), high.id());
  std::printf("low-priority stream:  priority %d, id %llu\n", low.priority(), low.id());
  bool ok = high.priority() == range.greatest && low.priority() == range.least;

  int ran = 0;
  high.enqueue([&ran] { ++ran; });
  low.enqueue([&ran] { ++ran; });
  high.synchronize();
  low.synchronize();
  ok = ok && ran == 2;

  try {
    cuwrap::stream too_high{ctx, {.priority = range.greatest - 1}};
    std::puts("a priority above the range was accepted");
    ok = false;
  } catch (const cuwrap::error& e) {
    std::printf("out of range, as expected: %s\n", e.what());
  }
  std::puts(ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stream_priorities: %s\n", e.what());
  return 1;
}
