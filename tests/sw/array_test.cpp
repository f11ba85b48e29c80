#include "cuwrap/array.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/copy_3d.hpp"
#include "cuwrap/memory.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

std::vector<std::uint32_t> iota_vector(std::size_t n, std::uint32_t first = 1) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

struct current_primary {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};
};

}  // namespace

static_assert(cuwrap::texel_format<float>::format == CU_AD_FORMAT_FLOAT);
static_assert(cuwrap::texel_format<std::int16_t>::format == CU_AD_FORMAT_SIGNED_INT16);
static_assert(std::is_same_v<cuwrap::array<float, 4>::element_type, std::array<float, 4>>);
static_assert(std::is_same_v<cuwrap::array<std::uint8_t>::element_type, std::uint8_t>);
static_assert(!std::is_copy_constructible_v<cuwrap::array<float>>);
static_assert(std::is_nothrow_move_constructible_v<cuwrap::array<float>>);

TEST_SUITE("arrays") {
  TEST_CASE_FIXTURE(sw_fixture, "every array shape is made with its descriptor") {
    current_primary p;
    const cuwrap::array<float> one_d{p.ctx, {100}};
    const cuwrap::array<float, 4> two_d{p.ctx, {64, 32}};
    const cuwrap::array<std::uint16_t, 2> three_d{
        p.ctx, {8, 8, 8}, cuwrap::array_flags::surface_ldst};
    const auto layered = cuwrap::array<float>::layered(p.ctx, 16, 16, 5);
    const auto cube = cuwrap::array<std::uint8_t, 4>::cubemap(p.ctx, 32);
    const auto cubes = cuwrap::array<float>::cubemap_layered(p.ctx, 8, 2);
    CHECK(swcuda().live_handles(SWCU_ARRAY) == 6);
    const auto d = two_d.descriptor();
    CHECK(d.format == CU_AD_FORMAT_FLOAT);
    CHECK(d.channels == 4);
    CHECK(d.extent == cuwrap::array_extent{64, 32, 0});
    CHECK(three_d.descriptor().flags == cuwrap::array_flags::surface_ldst);
    CHECK(cubes.descriptor().extent.depth == 12);
    CHECK(cube.descriptor().flags == cuwrap::array_flags::cubemap);
    CHECK(layered.view().depth() == 5);
    CHECK(one_d.view().height() == 1);
    CHECK(one_d.extent() == cuwrap::array_extent{100, 0, 0});
  }

  TEST_CASE_FIXTURE(sw_fixture, "an impossible array names its extents") {
    current_primary p;
    CHECK_THROWS_WITH_AS(cuwrap::array<float>(p.ctx, {8, 9, 6}, cuwrap::array_flags::cubemap),
                         doctest::Contains("width 8, height 9, depth 6"), cuwrap::error);
    CHECK_THROWS_WITH_AS(cuwrap::array<float>(p.ctx, {1u << 20, 4}),
                         doctest::Contains("CU_DEVICE_ATTRIBUTE_MAXIMUM_"), cuwrap::error);
    CHECK(swcuda().live_handles(SWCU_ARRAY) == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture, "copy_3d moves data between host, device, pitched and arrays") {
    current_primary p;
    const std::size_t w = 6, h = 4, d = 3;
    const auto input = iota_vector(w * h * d);
    cuwrap::array<std::uint32_t> arr{p.ctx, {w, h, d}};
    cuwrap::copy_3d(cuwrap::volume<std::uint32_t>(arr), cuwrap::volume_of(input, {w, h, d}));
    // Array to device memory, device to host: every element where it was.
    cuwrap::device_buffer<std::uint32_t> device{p.ctx, w * h * d};
    cuwrap::copy_3d(cuwrap::volume_of(device, {w, h, d}), cuwrap::volume<const std::uint32_t>(arr));
    std::vector<std::uint32_t> out(w * h * d);
    cuwrap::copy(out, device);
    CHECK(out == input);
    // A box of the array into one slice of a pitched buffer.
    cuwrap::pitched_buffer<std::uint32_t> pitched{p.ctx, 4, 2};
    const cuwrap::volume<const std::uint32_t> whole = arr;
    cuwrap::copy_3d(cuwrap::volume<std::uint32_t>(pitched), whole.region({1, 2, 2}, {4, 2, 1}));
    std::vector<std::uint32_t> box(8);
    cuwrap::copy_2d(cuwrap::pitched_span<std::uint32_t>::dense(box.data(), 4, 2), pitched);
    for (std::size_t y = 0; y < 2; ++y) {
      for (std::size_t x = 0; x < 4; ++x) {
        CHECK(box[y * 4 + x] == input[(2 * h + y + 2) * w + x + 1]);
      }
    }
    // Queued on a stream: one driver call.
    cuwrap::stream s{p.ctx};
    std::vector<std::uint32_t> async_out(w * h * d);
    check_one_call("cuMemcpy3DAsync_v2", [&] {
      cuwrap::copy_3d(s, cuwrap::volume_of(async_out, {w, h, d}),
                      cuwrap::volume<const std::uint32_t>(arr));
    });
    s.synchronize();
    CHECK(async_out == input);
    check_one_call("cuMemcpy3D_v2", [&] {
      cuwrap::copy_3d(cuwrap::volume_of(async_out, {w, h, d}),
                      cuwrap::volume<const std::uint32_t>(arr));
    });
  }

  TEST_CASE_FIXTURE(sw_fixture, "extents are checked before the driver, naming the extent") {
    current_primary p;
    cuwrap::array<float> arr{p.ctx, {8, 4}};
    std::vector<float> host(8 * 4);
    const cuwrap::volume<float> v = arr;
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)v.region({3, 0, 0}, {6, 1, 1}),
                           doctest::Contains("x 3 + 6 exceeds 8"), cuwrap::error);
      CHECK_THROWS_WITH_AS((void)v.region({0, 2, 0}, {1, 3, 1}),
                           doctest::Contains("y 2 + 3 exceeds 4"), cuwrap::error);
      CHECK_THROWS_WITH_AS((void)v.region({0, 0, 1}, {1, 1, 1}),
                           doctest::Contains("z 1 + 1 exceeds 1"), cuwrap::error);
      CHECK_THROWS_WITH_AS(cuwrap::copy_3d(v, cuwrap::volume_of(host, {8, 2, 2})),
                           doctest::Contains("destination extent 8 x 4 x 1 differs from source "
                                             "extent 8 x 2 x 2"),
                           cuwrap::error);
      CHECK_THROWS_WITH_AS((void)cuwrap::volume_of(host, {8, 5, 1}),
                           doctest::Contains("destination has 40 elements, source has 32"),
                           cuwrap::error);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "a multi-channel array copies whole elements") {
    current_primary p;
    cuwrap::array<float, 4> arr{p.ctx, {5, 3}};
    std::vector<std::array<float, 4>> in(15), out(15);
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto f = static_cast<float>(i);
      in[i] = {f, f + 0.25f, f + 0.5f, f + 0.75f};
    }
    cuwrap::copy_3d(cuwrap::volume<std::array<float, 4>>(arr), cuwrap::volume_of(in, {5, 3, 1}));
    cuwrap::copy_3d(cuwrap::volume_of(out, {5, 3, 1}),
                    cuwrap::volume<const std::array<float, 4>>(arr));
    CHECK(out == in);
  }

  TEST_CASE_FIXTURE(sw_fixture, "mipmapped arrays have level views") {
    current_primary p;
    cuwrap::mipmapped_array<std::uint32_t> mip{p.ctx, {16, 8}, 10};
    CHECK(mip.levels() == 5);  // clamped to 1 + floor(log2(16))
    CHECK(swcuda().live_handles(SWCU_MIPMAPPED_ARRAY) == 1);
    const auto level2 = mip.level(2);
    CHECK(level2.width() == 4);
    CHECK(level2.height() == 2);
    CHECK(level2.descriptor().extent == cuwrap::array_extent{4, 2, 0});
    const auto input = iota_vector(8);
    cuwrap::copy_3d(cuwrap::volume<std::uint32_t>(level2), cuwrap::volume_of(input, {4, 2, 1}));
    std::vector<std::uint32_t> out(8);
    cuwrap::copy_3d(cuwrap::volume_of(out, {4, 2, 1}), cuwrap::volume<const std::uint32_t>(level2));
    CHECK(out == input);
    const auto calls = calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)mip.level(5),
                           doctest::Contains("level 5 of a mipmapped array of 5"), cuwrap::error);
    });
    CHECK(calls.empty());
  }

  TEST_CASE_FIXTURE(sw_fixture, "requirement and sparse queries say what the driver needs") {
    current_primary p;
    cuwrap::array<float> arr{p.ctx, {8, 8}};
    cuwrap::mipmapped_array<float> mip{p.ctx, {8, 8}, 2};
    // cuda.h: only arrays made with CUDA_ARRAY3D_DEFERRED_MAPPING (SPARSE) have them.
    CHECK_THROWS_WITH_AS((void)arr.memory_requirements(0), doctest::Contains("DEFERRED_MAPPING"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)arr.sparse_properties(), doctest::Contains("not sparse"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)mip.memory_requirements(0), doctest::Contains("DEFERRED_MAPPING"),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)mip.sparse_properties(), doctest::Contains("not sparse"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "moved-from arrays throw usage_error") {
    current_primary p;
    cuwrap::array<float> a{p.ctx, {4}};
    cuwrap::array<float> b{std::move(a)};
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move)
    CHECK_THROWS_AS((void)a.descriptor(), cuwrap::usage_error);
    CHECK_THROWS_AS((void)a.view(), cuwrap::usage_error);
    std::vector<float> host(4);
    CHECK_THROWS_AS(cuwrap::copy_3d(cuwrap::volume<float>(a), cuwrap::volume_of(host, {4, 1, 1})),
                    cuwrap::usage_error);
    cuwrap::mipmapped_array<float> m{p.ctx, {4, 4}, 2};
    cuwrap::mipmapped_array<float> n{std::move(m)};
    CHECK_THROWS_AS((void)m.level(0), cuwrap::usage_error);
    CHECK_THROWS_AS((void)m.sparse_properties(), cuwrap::usage_error);
    CHECK(swcuda().live_handles(SWCU_ARRAY) == 3);  // b and n's two levels
  }

  TEST_CASE_FIXTURE(sw_fixture, "fill_2d sets a pitched region, one driver call") {
    current_primary p;
    cuwrap::pitched_buffer<std::uint16_t> buffer{p.ctx, 5, 3};
    cuwrap::fill_2d(buffer, 0x1234);
    check_one_call("cuMemsetD2D16_v2", [&] {
      cuwrap::fill_2d(
          cuwrap::pitched_span<std::uint16_t>{buffer.data(), buffer.pitch_bytes(), 2, 2}, 0xbeef);
    });
    std::vector<std::uint16_t> out(15);
    cuwrap::copy_2d(cuwrap::pitched_span<std::uint16_t>::dense(out.data(), 5, 3), buffer);
    for (std::size_t y = 0; y < 3; ++y) {
      for (std::size_t x = 0; x < 5; ++x) {
        CHECK(out[y * 5 + x] == (x < 2 && y < 2 ? 0xbeef : 0x1234));
      }
    }
    cuwrap::stream s{p.ctx};
    cuwrap::pitched_buffer<std::uint32_t> words{p.ctx, 3, 2};
    check_one_call("cuMemsetD2D32Async", [&] { cuwrap::fill_2d(s, words, 7U); });
    s.synchronize();
    std::vector<std::uint32_t> word_out(6);
    cuwrap::copy_2d(cuwrap::pitched_span<std::uint32_t>::dense(word_out.data(), 3, 2), words);
    CHECK(word_out == std::vector<std::uint32_t>(6, 7));
  }

  TEST_CASE_FIXTURE(sw_fixture, "batches are one driver call") {
    current_primary p;
    cuwrap::stream s{p.ctx};
    const auto a = iota_vector(16), b = iota_vector(8, 100);
    cuwrap::device_buffer<std::uint32_t> da{p.ctx, 16}, db{p.ctx, 8};
    const cuwrap::copy_batch_item items[] = {cuwrap::batch_copy(da, a), cuwrap::batch_copy(db, b)};
    check_one_call("cuMemcpyBatchAsync_v2",
                   [&] { cuwrap::copy_batch(s, items, cuwrap::src_access_order::during_call); });
    s.synchronize();
    std::vector<std::uint32_t> out_a(16), out_b(8);
    cuwrap::copy(out_a, da);
    cuwrap::copy(out_b, db);
    CHECK(out_a == a);
    CHECK(out_b == b);
    // A 3D batch: host into an array and a box of it back out.
    cuwrap::array<std::uint32_t> arr{p.ctx, {4, 4}};
    std::vector<std::uint32_t> box(4, 0);
    const auto input = iota_vector(16);
    const cuwrap::volume<const std::uint32_t> whole = arr;
    const cuwrap::copy_3d_batch_op ops[] = {
        cuwrap::batch_copy_3d(cuwrap::volume<std::uint32_t>(arr),
                              cuwrap::volume_of(input, {4, 4, 1})),
        cuwrap::batch_copy_3d(cuwrap::volume_of(box, {2, 2, 1}),
                              whole.region({1, 1, 0}, {2, 2, 1})),
    };
    check_one_call("cuMemcpy3DBatchAsync_v2", [&] { cuwrap::copy_3d_batch(s, ops); });
    s.synchronize();
    CHECK(box == std::vector<std::uint32_t>{6, 7, 10, 11});
    // Bytes between host buffers with a row pitch: element size 1 in the driver.
    const auto rows = iota_vector(12);
    std::vector<std::uint32_t> firsts(6);
    const auto src = cuwrap::volume<const std::uint32_t>::pitched(rows.data(), 16, 2, 3, 1, 3);
    const cuwrap::copy_3d_batch_op pointer_op =
        cuwrap::batch_copy_3d(cuwrap::volume_of(firsts, {2, 3, 1}), src);
    cuwrap::copy_3d_batch(s, std::span{&pointer_op, 1});
    s.synchronize();
    CHECK(firsts == std::vector<std::uint32_t>{1, 2, 5, 6, 9, 10});
    // The legacy default stream is refused by the driver.
    CHECK_THROWS_WITH_AS(cuwrap::copy_batch(cuwrap::stream_ref::legacy(), items),
                         doctest::Contains("cuMemcpyBatchAsync"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "array creation fails cleanly at every driver call") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::array<float, 2> a{ctx, {8, 8}};
      const auto cube = cuwrap::array<float>::cubemap(ctx, 4);
      cuwrap::mipmapped_array<std::uint8_t> m{ctx, {8, 8}, 3};
      (void)m.level(1);
      (void)a.descriptor();
    });
    CHECK(points >= 5);
  }
}
