// docs/memory-resources.md: one allocator interface for a framework. A pool resource counted by a
// statistics adaptor, erased into an any_resource, backs buffers; std::pmr::vector lives in
// pinned memory; keep_alive() lets a buffer go while its work is still queued.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/memory_resource.hpp>
#include <memory_resource>

namespace mr = cuwrap::mr;

// Framework code sees only the erased type: any resource with device-accessible memory.
float sum_of_squares(const mr::any_stream_ordered_resource<mr::device_accessible>& resource,
                     cuwrap::stream_ref s, const std::pmr::vector<float>& values) {
  mr::ordered_resource_buffer<float> device{resource, s, values.size()};
  cuwrap::copy(s, device, values);
  std::pmr::vector<float> back(values.size(), values.get_allocator());
  cuwrap::copy(s, back, device);
  s.synchronize();
  float sum = 0;
  for (const float v : back) {
    sum += v * v;
  }
  return sum;
}

int main() try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::memory_pool pool{cuwrap::device::get(0)};

  mr::statistics_resource counted{mr::pool_resource{pool, s}};  // counts what goes through
  mr::pmr_resource pinned{mr::pinned_resource{ctx}};            // std::pmr over pinned memory

  std::pmr::vector<float> values{&pinned};
  for (int i = 1; i <= 100; ++i) {
    values.push_back(static_cast<float>(i));
  }
  const float sum = sum_of_squares(counted, s, values);

  // A buffer whose work is still queued can go: the stream keeps it until it gets there.
  mr::resource_buffer<float> scratch{mr::device_resource{ctx}, 1 << 20};
  cuwrap::fill(s, scratch, 0.0f);
  cuwrap::keep_alive(s, std::move(scratch));
  s.synchronize();
  cuwrap::release_kept_alive();

  const auto stats = counted.statistics();
  std::printf("sum of squares %.0f; %zu allocations, peak %zu bytes, %zu in use\n", sum,
              stats.allocations, stats.peak_bytes, stats.bytes_in_use);
  return sum == 338350.0f && stats.bytes_in_use == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
