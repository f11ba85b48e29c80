#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "cuwrap/cuwrap.hpp"

// The behaviour the software driver models for arrays, on a real device: 3D copies through an
// array and a mipmap level, a batch, and the errors cuda.h documents.
TEST_SUITE("gpu arrays") {
  TEST_CASE("arrays round-trip through copy_3d, levels and batches on a real device") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    std::vector<std::uint32_t> input(16 * 8 * 4);
    std::iota(input.begin(), input.end(), 1u);
    cuwrap::array<std::uint32_t> arr{ctx, {16, 8, 4}};
    cuwrap::copy_3d(cuwrap::volume<std::uint32_t>(arr), cuwrap::volume_of(input, {16, 8, 4}));
    const cuwrap::volume<const std::uint32_t> whole = arr;
    std::vector<std::uint32_t> box(4 * 2 * 2);
    cuwrap::copy_3d(cuwrap::volume_of(box, {4, 2, 2}), whole.region({3, 5, 1}, {4, 2, 2}));
    CHECK(box[0] == input[(1 * 8 + 5) * 16 + 3]);
    cuwrap::mipmapped_array<std::uint32_t> mip{ctx, {8, 8}, 10};
    CHECK(mip.levels() == 4);
    const auto level = mip.level(1);
    CHECK(level.descriptor().extent == cuwrap::array_extent{4, 4, 0});
    std::vector<std::uint32_t> row(16);
    const cuwrap::copy_3d_batch_op ops[] = {
        cuwrap::batch_copy_3d(cuwrap::volume_of(row, {16, 1, 1}), whole.region({}, {16, 1, 1}))};
    cuwrap::copy_3d_batch(s, ops);
    s.synchronize();
    CHECK(row[15] == 16u);
    // cuda.h: the requirements of an array without CUDA_ARRAY3D_DEFERRED_MAPPING are
    // CUDA_ERROR_INVALID_VALUE; so are a cubemap that is not square and a copy past the array.
    CHECK_THROWS_AS((void)arr.memory_requirements(0), cuwrap::error);
    CHECK_THROWS_AS(cuwrap::array<float>(ctx, {8, 9, 6}, cuwrap::array_flags::cubemap),
                    cuwrap::error);
  }

  TEST_CASE("graph memcpy nodes and captures with arrays on a real device") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    std::vector<std::uint32_t> input(8 * 4 * 2), back(8 * 4 * 2), other(16), row(16);
    std::iota(input.begin(), input.end(), 1u);
    std::iota(other.begin(), other.end(), 100u);
    cuwrap::array<std::uint32_t> arr{ctx, {8, 4, 2}};
    cuwrap::graph g{ctx};
    const auto put = cuwrap::add_copy_3d(g, cuwrap::volume<std::uint32_t>(arr),
                                         cuwrap::volume_of(input, {8, 4, 2}));
    cuwrap::add_copy_3d(g, cuwrap::volume_of(back, {8, 4, 2}),
                        cuwrap::volume<const std::uint32_t>(arr), {put});
    auto exec = g.instantiate();
    exec.launch(s);
    s.synchronize();
    CHECK(back == input);
    // A 1D node moves to another array of the context; a 2D one is refused.
    cuwrap::array<std::uint32_t> a{ctx, {16}}, b{ctx, {16}};
    cuwrap::graph line{ctx};
    const auto in =
        cuwrap::add_copy_3d(line, cuwrap::volume<std::uint32_t>(a), cuwrap::volume_of(other, {16}));
    const auto out = cuwrap::add_copy_3d(line, cuwrap::volume_of(row, {16}),
                                         cuwrap::volume<const std::uint32_t>(a), {in});
    auto line_exec = line.instantiate();
    cuwrap::set_copy_3d(line_exec, in, cuwrap::volume<std::uint32_t>(b),
                        cuwrap::volume_of(std::span<std::uint32_t>(input).first(16), {16}));
    cuwrap::set_copy_3d(line_exec, out, cuwrap::volume_of(row, {16}),
                        cuwrap::volume<const std::uint32_t>(b));
    line_exec.launch(s);
    s.synchronize();
    CHECK(row == std::vector<std::uint32_t>(input.begin(), input.begin() + 16));
    CHECK_THROWS_AS(cuwrap::set_copy_3d(line_exec, in, cuwrap::volume<std::uint32_t>(arr),
                                        cuwrap::volume_of(input, {8, 4, 2})),
                    cuwrap::error);
    // A captured copy_3d is a memcpy node; a batch is refused and the capture goes on.
    auto capture = s.begin_capture();
    cuwrap::copy_3d(s, cuwrap::volume_of(back, {8, 4, 2}),
                    cuwrap::volume<const std::uint32_t>(arr));
    const cuwrap::copy_3d_batch_op ops[] = {
        cuwrap::batch_copy_3d(cuwrap::volume<std::uint32_t>::dense(row.data(), 8),
                              cuwrap::volume<const std::uint32_t>(arr).region({}, {8, 1, 1}))};
    CHECK_THROWS_WITH_AS(cuwrap::copy_3d_batch(s, ops), doctest::Contains("cuMemcpy3DBatchAsync"),
                         cuwrap::error);
    cuwrap::graph captured = capture.end();
    CHECK(captured.nodes().size() == 1);
  }
}
