#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "cuwrap/cuwrap.hpp"

namespace {
std::vector<std::uint32_t> pattern(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0x1234u);
  return v;
}
}  // namespace

TEST_SUITE("gpu memory") {
  TEST_CASE("data round-trips through every memory kind on a real device") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    const auto input = pattern(1 << 20);
    cuwrap::device_buffer<std::uint32_t> device{ctx, input.size()};
    cuwrap::pinned_buffer<std::uint32_t> pinned{ctx, input.size()};
    cuwrap::managed_buffer<std::uint32_t> managed{ctx, input.size()};
    cuwrap::stream_ordered_buffer<std::uint32_t> ordered{s, input.size()};
    cuwrap::memory_pool pool{cuwrap::device::get(0)};
    auto pooled = pool.allocate<std::uint32_t>(s, input.size());

    cuwrap::copy(device, input);       // pageable -> device
    cuwrap::copy(s, pinned, device);   // device -> pinned
    cuwrap::copy(s, ordered, pinned);  // pinned -> stream-ordered
    cuwrap::copy(s, pooled, ordered);  // device -> pool memory
    cuwrap::copy(s, managed, pooled);  // device -> managed
    s.synchronize();
    CHECK(std::equal(managed.begin(), managed.end(), input.begin()));

    cuwrap::fill(s, device, 0xabcdef01u);
    std::vector<std::uint32_t> back(input.size());
    cuwrap::copy(s, back, device);
    s.synchronize();
    CHECK(back == std::vector<std::uint32_t>(input.size(), 0xabcdef01u));
    CHECK(cuwrap::pointer_attributes(device.data()).type == cuwrap::memory_type::device);
    CHECK(cuwrap::pointer_attributes(managed.data()).type == cuwrap::memory_type::managed);
    CHECK(cuwrap::pointer_attributes(pinned.data()).type == cuwrap::memory_type::host);
  }

  TEST_CASE("pitched 2D copies on a real device") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    constexpr std::size_t width = 33, height = 17;
    cuwrap::pitched_buffer<float> device{ctx, width, height};
    CHECK(device.pitch_bytes() % 128 == 0);
    std::vector<float> input(width * height);
    std::iota(input.begin(), input.end(), 1.0f);
    std::vector<float> output(input.size());
    cuwrap::copy_2d(device.view(),
                    cuwrap::pitched_span<const float>::dense(input.data(), width, height));
    cuwrap::copy_2d(cuwrap::pitched_span<float>::dense(output.data(), width, height),
                    device.view());
    CHECK(output == input);
  }

  TEST_CASE("pinned copies in two directions overlap (event timing)") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const std::size_t n = std::size_t{64} << 20;  // 256 MiB of uint32
    cuwrap::pinned_buffer<std::uint32_t> up{ctx, n};
    cuwrap::pinned_buffer<std::uint32_t> down{ctx, n};
    cuwrap::device_buffer<std::uint32_t> a{ctx, n};
    cuwrap::device_buffer<std::uint32_t> b{ctx, n};
    cuwrap::stream s1{ctx}, s2{ctx};
    cuwrap::event start1{ctx, cuwrap::event_flags::timing}, stop1{ctx, cuwrap::event_flags::timing};
    cuwrap::event start2{ctx, cuwrap::event_flags::timing}, stop2{ctx, cuwrap::event_flags::timing};
    s1.record(start1);
    cuwrap::copy(s1, a, up);  // host to device on one copy engine
    s1.record(stop1);
    s2.record(start2);
    cuwrap::copy(s2, down, b);  // device to host on the other, at the same time
    s2.record(stop2);
    s1.synchronize();
    s2.synchronize();
    // Overlap: the second copy started before the first one ended, and vice versa.
    CHECK(cuwrap::elapsed(start2, stop1).count() > 0.0f);
    CHECK(cuwrap::elapsed(start1, stop2).count() > 0.0f);
  }

  TEST_CASE("an impossible allocation on a real device throws out_of_memory with the bytes") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    CHECK_THROWS_WITH_AS(cuwrap::device_buffer<std::byte>(ctx, std::size_t{1} << 50),
                         doctest::Contains("1125899906842624 bytes on device 0"),
                         cuwrap::out_of_memory);
  }
}
