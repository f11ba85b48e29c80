// docs/virtual-memory.md: map physical memory into a reservation, grow an allocation in place.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/mr/virtual_memory_resource.hpp>
#include <vector>

int main() try {
  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};

  // Physical memory, a reservation twice its size, and a mapping of it in the second half.
  const std::size_t g = cuwrap::allocation_granularity(cuwrap::memory_location::on(dev));
  cuwrap::physical_memory memory{dev, g};
  cuwrap::address_reservation range{2 * g};
  cuwrap::memory_mapping mapping = range.map(g, memory);
  mapping.set_access(dev);  // a new mapping has no access
  cuwrap::fill(mapping.span<int>(), 7);

  // One allocation that grows in place: the address stays, the contents too.
  cuwrap::mr::virtual_memory_resource resource{dev, 64 * g};
  void* const p = resource.allocate(1000);
  cuwrap::fill(cuwrap::device_span<int>{static_cast<int*>(p), g / sizeof(int)}, 3);
  resource.grow(p, 5 * g);
  std::vector<int> first(4);
  cuwrap::copy(first, cuwrap::device_span<int>{static_cast<int*>(p), 4});
  std::printf("grown to %zu bytes in %zu chunks at the same address; first int %d\n",
              resource.mapped_bytes(p), resource.chunk_count(p), first[0]);
  resource.deallocate(p, 5 * g);
  return first[0] == 3 && resource.allocation_count() == 0 ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
