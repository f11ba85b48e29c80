// Tensor maps (cuwrap/tensor_map.hpp): a builder over a device span that checks every
// requirement cuda.h lists for cuTensorMapEncodeTiled / Im2col / Im2colWide before the one driver
// call, names the one violated, and makes a map a kernel uses through the tensor memory
// accelerator (tests/kernels/tma_kernels.cu, run by the software driver's interpreter).
#include "cuwrap/tensor_map.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "kernels_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_calls;

namespace {

struct tma_fixture : cuwrap::testing::kernels_fixture {
  // current for the whole test: an encode is then exactly its one driver call
  cuwrap::scoped_current_context current{ctx};
  static constexpr std::size_t rows = 24, cols = 40;
  cuwrap::module tma =
      cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/tma_kernels.ptx");
  cuwrap::device_buffer<float> data{ctx, rows* cols};
  std::vector<float> host = std::vector<float>(rows * cols);

  tma_fixture() {
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
    cuwrap::copy(s, data, host);
  }

  // Loads every 8 x 4 box of `map` with tma_load_boxes and checks it against `source`.
  void check_boxes(const cuwrap::tensor_map& map, const std::vector<float>& source) {
    constexpr int box_cols = 8, box_rows = 4;
    const unsigned gx = cols / box_cols, gy = rows / box_rows;
    cuwrap::device_buffer<float> out{ctx, rows * cols};
    const auto k = tma.kernel<void(cuwrap::tensor_map, float*, int, int)>("tma_load_boxes");
    s.launch(k, cuwrap::launch_config{{gx, gy, 1}, {32, 1, 1}, box_cols * box_rows * sizeof(float)},
             map, out.data(), box_cols, box_rows);
    std::vector<float> got(rows * cols);
    cuwrap::copy(s, got, out);
    s.synchronize();
    for (unsigned by = 0; by < gy; ++by) {
      for (unsigned bx = 0; bx < gx; ++bx) {
        for (int r = 0; r < box_rows; ++r) {
          for (int c = 0; c < box_cols; ++c) {
            const std::size_t k_out = (by * gx + bx) * box_cols * box_rows + r * box_cols + c;
            const std::size_t k_in = (by * box_rows + r) * cols + bx * box_cols + c;
            REQUIRE(got[k_out] == source[k_in]);
          }
        }
      }
    }
  }

  cuwrap::tensor_map_builder<float> tiled() {
    return cuwrap::tensor_map::tiled(ctx, data.span(), {cols, rows}).box({8, 4});
  }

  // build() throws usage_error containing `why` and makes no driver call.
  void refused(const cuwrap::tensor_map_builder<float>& b, const std::string& why) {
    INFO(why);
    const auto calls = calls_made_by([&] {
      try {
        (void)b.build();
        FAIL("no usage_error");
      } catch (const cuwrap::usage_error& e) {
        INFO(e.what());
        CHECK(std::string{e.what()}.find("cuwrap::tensor_map::") == 0);
        CHECK(std::string{e.what()}.find(why) != std::string::npos);
      }
    });
    CHECK(calls.empty());
  }
};

}  // namespace

TEST_SUITE("tensor_map") {
  TEST_CASE_FIXTURE(tma_fixture, "a tiled map is one driver call and a kernel loads its boxes") {
    check_calls({"cuCtxGetCurrent", "cuTensorMapEncodeTiled"}, [&] { (void)tiled().build(); });
    check_boxes(tiled().build(), host);
    // padded rows: a stride wider than the row, over a bigger buffer
    cuwrap::device_buffer<float> padded{ctx, rows * 48};
    std::vector<float> wide(rows * 48, -1.0f);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) wide[r * 48 + c] = host[r * cols + c];
    }
    cuwrap::copy(s, padded, wide);
    const auto map = cuwrap::tensor_map::tiled(ctx, padded.span(), {cols, rows})
                         .strides({48 * sizeof(float)})
                         .box({8, 4})
                         .l2_promotion(cuwrap::tensor_l2_promotion::bytes128)
                         .build();
    check_boxes(map, host);
  }

  TEST_CASE_FIXTURE(tma_fixture, "replace_address points a map at another span") {
    auto map = tiled().build();
    cuwrap::device_buffer<float> other{ctx, rows * cols};
    std::vector<float> twice(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) twice[i] = 2.0f * host[i];
    cuwrap::copy(s, other, twice);
    check_calls({"cuCtxGetCurrent", "cuTensorMapReplaceAddress"},
                [&] { map.replace_address(ctx, other.span()); });
    check_boxes(map, twice);
    CHECK_THROWS_AS(map.replace_address(ctx, other.span().subspan(1)), cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(tma_fixture, "each requirement is checked before the driver") {
    refused(tiled().box({8}), "box has 1 values, not 2");
    refused(tiled().box({8, 300}), "box[1] is 300; it must be 1..256");
    refused(tiled().box({2, 4}),
            "box[0] is 8 bytes; without interleave it must be a multiple of 16");
    refused(tiled().box({64, 4}).swizzle(cuwrap::tensor_swizzle::bytes128),
            "the box's inner dimension is 256 bytes, more than the 128-byte swizzle span");
    refused(tiled().strides({100}), "strides[0] is 100 bytes; it must be a multiple of 16");
    refused(tiled().strides({64}), "strides[0] is 64 bytes, less than the 160 bytes");
    refused(tiled().strides({160, 16}), "strides has 2 values; a tensor of 2 dimensions has 1");
    refused(tiled().element_strides({1, 9}), "element_strides[1] is 9; it must be 1..8");
    refused(tiled().interleave(cuwrap::tensor_interleave::bytes16),
            "an interleaved layout needs 3 or more dimensions");
    refused(cuwrap::tensor_map::tiled(ctx, data.span(), {cols, rows + 1}).box({8, 4}),
            "the tensor spans 4000 bytes; the span has 3840");
    refused(cuwrap::tensor_map::tiled(ctx, data.span().subspan(1), {cols - 1, rows}).box({8, 4}),
            "the span's address is not 16-byte aligned");
    refused(cuwrap::tensor_map::tiled(ctx, data.span(), {cols, 0}).box({8, 4}),
            "dims[1] is 0; it must be 1..2^32");
    refused(cuwrap::tensor_map::tiled(ctx, data.span(), {}).box({}),
            "the tensor has 0 dimensions; it must have 1 to 5");
    refused(tiled().data_type(cuwrap::tensor_data_type::float16),
            "the data type's elements are 2 bytes, the span's 4");
    auto as_int =
        cuwrap::tensor_map::tiled(
            ctx, cuwrap::device_span<std::int32_t>::from_address(data.address(), rows * cols),
            {cols, rows})
            .box({8, 4})
            .oob_fill(cuwrap::tensor_oob_fill::nan_request_zero_fma);
    CHECK_THROWS_WITH_AS((void)as_int.build(),
                         doctest::Contains("the NaN fill needs a floating-point data type"),
                         cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(tma_fixture, "a type without a tensor data type must name one") {
    struct half {
      std::uint16_t bits;
    };
    const auto span = cuwrap::device_span<half>::from_address(data.address(), 2 * rows * cols);
    auto b = cuwrap::tensor_map::tiled(ctx, span, {2 * cols, rows}).box({16, 4});
    CHECK_THROWS_WITH_AS((void)b.build(),
                         doctest::Contains("the element type has no tensor data type"),
                         cuwrap::usage_error);
    check_calls({"cuCtxGetCurrent", "cuTensorMapEncodeTiled"},
                [&] { (void)b.data_type(cuwrap::tensor_data_type::float16).build(); });
  }

  TEST_CASE_FIXTURE(tma_fixture, "im2col maps") {
    // an NHWC tensor {C, W, H, N} = {8, 5, 6, 4} floats fits in rows * cols = 960 floats
    const auto span = data.span();
    check_calls({"cuCtxGetCurrent", "cuTensorMapEncodeIm2col"}, [&] {
      (void)cuwrap::tensor_map::im2col(ctx, span, {8, 5, 6, 4})
          .pixel_box({-1, -1}, {-1, -1})
          .pixels(8, 16)
          .build();
    });
    CHECK_THROWS_WITH_AS((void)cuwrap::tensor_map::im2col(ctx, span, {8, 5, 6, 4})
                             .pixel_box({-200, 0}, {0, 0})
                             .pixels(8, 16)
                             .build(),
                         doctest::Contains("a pixel box corner offset is -200; with 4 dimensions "
                                           "it must be -128..127"),
                         cuwrap::usage_error);
    CHECK_THROWS_WITH_AS((void)cuwrap::tensor_map::im2col(ctx, span, {8, 5, 6, 4})
                             .pixel_box({0}, {0})
                             .pixels(8, 16)
                             .build(),
                         doctest::Contains("pixel_box needs 2 offsets per corner"),
                         cuwrap::usage_error);
    // W spans 2 .. 5 - 1 - 3 = 1: empty (cuda.h: the box "must have non-zero area")
    CHECK_THROWS_WITH_AS((void)cuwrap::tensor_map::im2col(ctx, span, {8, 5, 6, 4})
                             .pixel_box({2, 0}, {-3, 0})
                             .pixels(8, 16)
                             .build(),
                         doctest::Contains("the pixel box is empty in dimension 1"),
                         cuwrap::usage_error);
    CHECK_THROWS_WITH_AS((void)cuwrap::tensor_map::im2col(ctx, span, {8, 5, 6, 4})
                             .pixel_box({0, 0}, {0, 0})
                             .pixels(300, 16)
                             .build(),
                         doctest::Contains("channels_per_pixel is 300; it must be 1..256"),
                         cuwrap::usage_error);
    check_calls({"cuCtxGetCurrent", "cuTensorMapEncodeIm2colWide"}, [&] {
      (void)cuwrap::tensor_map::im2col_wide(ctx, span, {8, 5, 6, 4})
          .pixel_box_width(-1, 1, true)
          .pixels(8, 0)
          .build();
    });
    CHECK_THROWS_WITH_AS((void)cuwrap::tensor_map::im2col_wide(ctx, span, {8, 5, 6, 4})
                             .pixel_box_width(-1, 1)
                             .pixels(8, 0)
                             .build(),
                         doctest::Contains("pixels_per_column is 0; it must be 1..1024"),
                         cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(tma_fixture, "a failed encode throws the driver's error and names the call") {
    REQUIRE(cuwrap::testing::swcuda().add_fault_rule(
                "cuTensorMapEncodeTiled:1:CUDA_ERROR_INVALID_VALUE") == 0);
    CHECK_THROWS_WITH_AS((void)tiled().build(), doctest::Contains("cuTensorMapEncodeTiled"),
                         cuwrap::error);
    cuwrap::testing::swcuda().clear_fault_rules();
  }

  TEST_CASE_FIXTURE(cuwrap::testing::sw_fixture, "fault sweep: building a tensor map") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::device_buffer<float> data{ctx, 1024};
      auto map = cuwrap::tensor_map::tiled(ctx, data.span(), {32, 32}).box({8, 8}).build();
      map.replace_address(ctx, data.span());
    });
    CHECK(points >= 5);  // the context, the allocation, two encodes' context checks and calls
  }
}
