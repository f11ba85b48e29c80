// Green contexts on a real GPU: the device's SMs, a split, green contexts of two groups running a
// kernel each, and events between them.
#include <doctest/doctest.h>

#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "test_kernels.hpp"

TEST_SUITE("gpu green_context") {
  // Observed on an H200 (132 SMs), driver 580.159.04, 2026-11-27: minSmPartitionSize 8 and
  // smCoscheduledAlignment 8, so smCount is not always "a multiple of" smCoscheduledAlignment
  // as cuda.h says. For compute capability 9.0 cuda.h gives "The minimum count is 8 SMs and must
  // be a multiple of 8".
  TEST_CASE("a device's SM resource has its multiprocessors") {
    const auto dev = cuwrap::device::get(0);
    const auto all = cuwrap::sm_resource::of(dev);
    CHECK(all.count() == static_cast<unsigned>(dev.multiprocessor_count()));
    CHECK(all.min_partition_size() > 0);
    CHECK(all.coscheduled_alignment() > 0);
    if (dev.compute_capability().major == 9) {
      CHECK(all.min_partition_size() == 8);
      CHECK(all.coscheduled_alignment() == 8);
    }
  }

  TEST_CASE("two green contexts run their kernels and order through an event") {
    const auto dev = cuwrap::device::get(0);
    const auto all = cuwrap::sm_resource::of(dev);
    const auto split = all.split(all.min_partition_size(), 2);
    REQUIRE(split.groups.size() == 2);
    CHECK(split.groups[0].count() >= all.min_partition_size());
    cuwrap::green_context a{dev, split.groups[0]};
    cuwrap::green_context b{dev, split.groups[1]};
    CHECK(a.sms().count() == split.groups[0].count());
    CHECK(a.green_id() != b.green_id());
    const auto mod = cuwrap::module::load_file(a, cuwrap::testing::kernels_file("ptx"));
    const auto scale = mod.kernel<void(float*, float, int)>("scale");
    cuwrap::stream sa = a.create_stream();
    cuwrap::stream sb = b.create_stream();
    CHECK(cuwrap::green_context_of(sa) == a.green_handle());
    std::vector<float> host(4096, 1.0f);
    cuwrap::device_buffer<float> data{a, host.size()};
    cuwrap::copy(sa, data, host);
    sa.launch(scale, cuwrap::launch_config::linear(host.size(), 128), data.data(), 3.0f, 4096);
    cuwrap::event done{a};
    a.record(done);
    b.wait(done);
    sb.launch(scale, cuwrap::launch_config::linear(host.size(), 128), data.data(), 2.0f, 4096);
    cuwrap::copy(sb, host, data);
    sb.synchronize();
    CHECK(host == std::vector<float>(4096, 6.0f));
  }
}
