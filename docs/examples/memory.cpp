// docs/memory.md: pinned staging, a pool allocation, fills and copies in stream order.
#include <algorithm>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::pinned_buffer<float> host{ctx, 1024};
  std::fill(host.begin(), host.end(), 1.0f);
  auto device = cuwrap::memory_pool::default_pool(cuwrap::device::get(0)).allocate<float>(s, 1024);
  cuwrap::copy(s, device, host);                    // one cuMemcpyAsync
  cuwrap::fill(s, device.span().first(512), 2.0f);  // one cuMemsetD32Async
  cuwrap::copy(s, host, device);
  s.synchronize();
  const auto twos = std::count(host.begin(), host.end(), 2.0f);
  std::printf("%td twos, %td ones\n", twos, std::count(host.begin(), host.end(), 1.0f));
  return twos == 512 ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
