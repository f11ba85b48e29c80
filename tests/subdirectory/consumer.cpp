// Uses cuwrap built through add_subdirectory: a round trip through device memory on the driver
// CUWRAP_DRIVER names.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <numeric>
#include <vector>

int main() {
  try {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    std::vector<int> host(1000);
    std::iota(host.begin(), host.end(), 1);
    cuwrap::device_buffer<int> buffer{ctx, host.size()};
    cuwrap::scoped_current_context current{ctx};  // synchronous copies use the current context
    cuwrap::copy(buffer, std::span<const int>{host});
    std::vector<int> back(host.size());
    cuwrap::copy(std::span<int>{back}, buffer);
    if (back != host) {
      std::fprintf(stderr, "consumer: the round trip changed the data\n");
      return 1;
    }
    std::printf("consumer: %zu ints round-tripped on %s\n", back.size(),
                cuwrap::device::get(0).name().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
