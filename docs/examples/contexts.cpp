// docs/devices-and-contexts.md: typed attributes, a created context, limits.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>

int main() try {
  auto dev = cuwrap::device::get(0);
  std::printf("%s: %d SMs, unified addressing %s\n", dev.name().c_str(), dev.multiprocessor_count(),
              dev.attribute<CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING>() ? "yes" : "no");
  cuwrap::context ctx{dev, cuwrap::context_flags::sched_blocking_sync};
  ctx.set_limit(cuwrap::context_limit::stack_size, 4096);
  const auto range = ctx.stream_priorities();
  std::printf("stack %zu bytes, priorities %d..%d\n", ctx.limit(cuwrap::context_limit::stack_size),
              range.greatest, range.least);
  return ctx.limit(cuwrap::context_limit::stack_size) >= 4096 ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
