// docs/getting-started.md: list the devices and make a context current for a scope.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>

int main() try {
  std::printf("driver %d at %s\n", cuwrap::driver_version(), cuwrap::driver_path().c_str());
  for (const auto& dev : cuwrap::device::all()) {
    const auto cc = dev.compute_capability();
    std::printf("%d: %s, sm_%d%d, %zu MiB\n", dev.ordinal(), dev.name().c_str(), cc.major, cc.minor,
                dev.total_memory() >> 20);
  }
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};  // restores the previous context on exit
  std::printf("stack size limit: %zu bytes\n", ctx.limit(cuwrap::context_limit::stack_size));
  return 0;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
