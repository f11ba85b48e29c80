#include "cuwrap/dlpack.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "cuwrap/cuwrap.hpp"

namespace dl = cuwrap::dlpack;

TEST_SUITE("gpu dlpack") {
  TEST_CASE("every memory kind exports with the device type the real driver reports") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::device_buffer<float> device{ctx, 16};
    cuwrap::pinned_buffer<float> pinned{ctx, 16};
    cuwrap::managed_buffer<float> managed{ctx, 16};
    // Spans: the device type comes from cuPointerGetAttributes on the real driver.
    CHECK(dl::to_dlpack_unowned(device.span())->dl_tensor.device.device_type == dl::kDLCUDA);
    CHECK(dl::to_dlpack_unowned(pinned.host())->dl_tensor.device.device_type == dl::kDLCUDAHost);
    CHECK(dl::to_dlpack_unowned(managed.span())->dl_tensor.device.device_type ==
          dl::kDLCUDAManaged);
    std::vector<float> pageable(16);
    CHECK(dl::to_dlpack_unowned(std::span{pageable})->dl_tensor.device.device_type == dl::kDLCPU);
    CHECK(dl::to_dlpack(std::move(device))->dl_tensor.device.device_id == 0);
  }

  TEST_CASE("a stream-ordered buffer crosses streams through the handshake on a real device") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream producer{ctx};
    cuwrap::stream consumer{ctx};
    std::vector<std::uint32_t> input(1 << 22);
    std::iota(input.begin(), input.end(), 7u);
    cuwrap::pinned_buffer<std::uint32_t> staging{ctx, input.size()};
    std::copy(input.begin(), input.end(), staging.begin());
    cuwrap::stream_ordered_buffer<std::uint32_t> buffer{producer, input.size()};
    cuwrap::copy(producer, buffer, staging);  // still running when the consumer starts
    dl::export_options options;
    options.consumer = consumer;
    const dl::tensor<const std::uint32_t> t{dl::to_dlpack(std::move(buffer), options),
                                            dl::access::device, 0};
    std::vector<std::uint32_t> back(input.size());
    cuwrap::copy(consumer, back, t.span());
    consumer.synchronize();
    CHECK(back == input);
    producer.synchronize();
  }
}
