// Kernel conformance for the tensor memory accelerator (conformance/tma.cu): tensor maps made by
// cuTensorMapEncodeTiled, loaded into shared memory with cp.async.bulk.tensor (completing an
// mbarrier) and stored back with a bulk group, in every swizzle mode of sm_90, with boxes that
// reach outside the tensor (zero or NaN fill on loads, nothing written on stores), padded rows
// and element strides; and the bulk reductions (cp.reduce.async.bulk{.tensor}); checked against
// a host reference of the PTX ISA's rules.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conformance_checks.hpp"

namespace {

using conf::Conformance;

struct Tma : Conformance {
  static constexpr int kRows = 37, kCols = 68, kPitch = 72;  // floats; rows padded to 288 bytes
  std::vector<float> in;
  CUdeviceptr din = 0;

  Tma() {
    conf::Rng rng(3);
    in.resize(std::size_t{kRows} * kPitch);
    for (float& x : in) x = static_cast<float>(rng.range(-5000, 5000)) / 8.0f;
    din = upload(in);
  }

  // A 2D float tensor map over `base` (kRows x kCols, rows kPitch floats apart).
  CUtensorMap map(CUdeviceptr base, unsigned box_cols, unsigned box_rows, unsigned row_step,
                  CUtensorMapSwizzle swizzle,
                  CUtensorMapFloatOOBfill fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) {
    alignas(64) CUtensorMap m{};
    const cuuint64_t dims[2] = {kCols, kRows};
    const cuuint64_t strides[1] = {kPitch * sizeof(float)};
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t steps[2] = {1, row_step};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuTensorMapEncodeTiled(
        &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(base), dims, strides, box,
        steps, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE, fill));
    return m;
  }

  // Runs tma_box_roundtrip over boxes of box_cols x box_rows (row_step: the map's
  // elementStrides[1]) shifted by (-3, -2), and checks each box and the stored tensor.
  void roundtrip(unsigned box_cols, unsigned box_rows, unsigned row_step, unsigned swizzle,
                 bool nan_fill = false, CUmodule from = nullptr) {
    INFO("box ", box_cols, " x ", box_rows, ", row step ", row_step, ", swizzle ", swizzle);
    const CUfunction f = function(from != nullptr ? from : load_ptx("tma"), "tma_box_roundtrip");
    const CUdeviceptr dout = zeros<float>(in.size(), -7.0f);
    const auto sw = static_cast<CUtensorMapSwizzle>(swizzle);
    const CUtensorMapFloatOOBfill fill = nan_fill
                                             ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                             : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    CUtensorMap in_map = map(din, box_cols, box_rows, row_step, sw, fill);
    CUtensorMap out_map = map(dout, box_cols, box_rows, row_step, sw);
    int loaded_rows = static_cast<int>((box_rows + row_step - 1) / row_step);
    int cols = static_cast<int>(box_cols), x_step = cols, y_step = static_cast<int>(box_rows);
    int shift_x = -3, shift_y = -2;
    const unsigned gx = (kCols - shift_x + box_cols - 1) / box_cols;
    const unsigned gy = (kRows - shift_y + box_rows - 1) / box_rows;
    const std::size_t box_floats = std::size_t(loaded_rows) * box_cols;
    const CUdeviceptr dboxes = zeros<float>(gx * gy * box_floats, 1.5f);
    unsigned swz = swizzle;
    void* params[] = {&in_map,      &out_map, const_cast<CUdeviceptr*>(&dboxes),
                      &loaded_rows, &cols,    &x_step,
                      &y_step,      &shift_x, &shift_y,
                      &swz};
    const unsigned shared = static_cast<unsigned>(box_floats * sizeof(float));
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, gx, gy, 1, 64, 1, 1, shared, nullptr, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());

    std::vector<float> want_boxes(gx * gy * box_floats);
    std::vector<float> want_out(in.size(), -7.0f);
    for (unsigned by = 0; by < gy; ++by) {
      for (unsigned bx = 0; bx < gx; ++bx) {
        for (int r = 0; r < loaded_rows; ++r) {
          for (int c = 0; c < cols; ++c) {
            const int x = static_cast<int>(bx) * x_step + shift_x + c;
            const int y = static_cast<int>(by) * y_step + shift_y + r * static_cast<int>(row_step);
            const bool inside = x >= 0 && x < kCols && y >= 0 && y < kRows;
            const std::size_t k = (by * gx + bx) * box_floats + std::size_t(r) * box_cols + c;
            want_boxes[k] = inside ? in[std::size_t(y) * kPitch + x] : nan_fill ? NAN : 0.0f;
            if (inside) want_out[std::size_t(y) * kPitch + x] = in[std::size_t(y) * kPitch + x];
          }
        }
      }
    }
    const std::vector<float> got = download<float>(dboxes, want_boxes.size());
    std::size_t bad = 0;
    for (std::size_t k = 0; k < got.size(); ++k) {
      std::uint32_t a = 0, b = 0;
      std::memcpy(&a, &got[k], 4);
      std::memcpy(&b, &want_boxes[k], 4);
      // outside the tensor with the NaN fill: a NaN (cuda.h does not say which one)
      const bool same = std::isnan(want_boxes[k]) ? std::isnan(got[k]) : a == b;
      if (!same && bad++ < 5) {
        INFO("box element ", k, ": got ", got[k], " want ", want_boxes[k]);
        CHECK(same);
      }
    }
    CHECK(bad == 0);
    conf::expect_equal(download<float>(dout, want_out.size()), want_out,
                       "the tensor the boxes were stored into");
  }
};

}  // namespace

TEST_SUITE("conformance.tma") {
  TEST_CASE_FIXTURE(Tma, "conformance.tma: tiled loads and stores without a swizzle") {
    roundtrip(24, 8, 1, CU_TENSOR_MAP_SWIZZLE_NONE);
  }

  TEST_CASE_FIXTURE(Tma, "conformance.tma: the 32B 64B and 128B swizzles") {
    roundtrip(8, 16, 1, CU_TENSOR_MAP_SWIZZLE_32B);
    roundtrip(16, 16, 1, CU_TENSOR_MAP_SWIZZLE_64B);
    roundtrip(32, 12, 1, CU_TENSOR_MAP_SWIZZLE_128B);
  }

  TEST_CASE_FIXTURE(Tma, "conformance.tma: element strides and NaN fill outside the tensor") {
    roundtrip(16, 10, 2, CU_TENSOR_MAP_SWIZZLE_NONE, true);
    roundtrip(32, 9, 3, CU_TENSOR_MAP_SWIZZLE_128B, true);
  }

  TEST_CASE_FIXTURE(Tma, "conformance.tma: a fatbin with SASS lays its parameters out as its ELF") {
    // In the SASS, a 128-byte aligned parameter (the __grid_constant__ CUtensorMap) starts at
    // offset 112, where its constant bank address (0x210 + 112) is aligned; cuFuncGetParamInfo
    // reports that layout, which launches pack by, and the interpreter moves each parameter to
    // where the PTX has it (offset 0 and 128).
    const CUmodule m =
        load(swcu::test::read_bytes(std::string(SWDRIVER_CONFORMANCE_DIR) + "/tma_sass.fatbin"));
    const CUfunction f = function(m, "tma_box_roundtrip");
    std::size_t offset = 0, size = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuFuncGetParamInfo(f, 0, &offset, &size));
    CHECK(offset == 112);
    CHECK(size == 128);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuFuncGetParamInfo(f, 1, &offset, &size));
    CHECK(offset == 240);
    roundtrip(32, 12, 1, CU_TENSOR_MAP_SWIZZLE_128B, false, m);
  }

  TEST_CASE_FIXTURE(Tma, "conformance.tma: a map the driver did not encode faults") {
    // 128 bytes that no cuTensorMapEncode* filled: a GPU's behaviour is undefined; the software
    // driver fails the launch with CUDA_ERROR_ILLEGAL_INSTRUCTION and says why
    const CUfunction f = function(load_ptx("tma"), "tma_box_roundtrip");
    alignas(64) CUtensorMap junk{};
    std::memset(&junk, 0x5a, sizeof junk);
    const CUdeviceptr dboxes = zeros<float>(64, 0.0f);
    int rows = 2, cols = 8, xs = 8, ys = 2, sx = 0, sy = 0;
    unsigned swz = 0;
    void* params[] = {&junk, &junk, const_cast<CUdeviceptr*>(&dboxes), &rows, &cols, &xs, &ys, &sx,
                      &sy,   &swz};
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 64, nullptr, params, nullptr));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_INSTRUCTION);
  }

  // cp.reduce.async.bulk: "each data element ... is reduced atomically" into the destination;
  // 24 blocks reduce into the same elements, so with several workers the reductions race.
  TEST_CASE_FIXTURE(Tma, "conformance.tma: bulk reductions into global memory") {
    const CUfunction f = function(load_ptx("tma"), "bulk_reduce_global");
    constexpr int kBlocks = 24;
    int n = 36;
    conf::Rng rng(11);
    std::vector<int> values(std::size_t{kBlocks} * n);
    for (int& v : values) v = static_cast<int>(rng.range(-100000, 100000));
    std::vector<unsigned> want_sums(n, 7u);
    std::vector<int> want_mins(n, 5000);
    std::vector<float> want_fsums(n, 0.5f);
    for (int b = 0; b < kBlocks; ++b) {
      for (int i = 0; i < n; ++i) {
        const int v = values[std::size_t(b) * n + i];
        want_sums[i] += static_cast<unsigned>(v);
        want_mins[i] = std::min(want_mins[i], v);
        want_fsums[i] += static_cast<float>(v) / 8.0f;  // exact: any order gives the same sum
      }
    }
    const CUdeviceptr dvalues = upload(values);
    const CUdeviceptr sums = zeros<unsigned>(n, 7u);
    const CUdeviceptr mins = zeros<int>(n, 5000);
    const CUdeviceptr fsums = zeros<float>(n, 0.5f);
    void* params[] = {const_cast<CUdeviceptr*>(&dvalues), &n, const_cast<CUdeviceptr*>(&sums),
                      const_cast<CUdeviceptr*>(&mins), const_cast<CUdeviceptr*>(&fsums)};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(
        f, kBlocks, 1, 1, 64, 1, 1, static_cast<unsigned>(3 * n * sizeof(int)), nullptr, params,
        nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    conf::expect_equal(download<unsigned>(sums, n), want_sums, ".add.u32");
    conf::expect_equal(download<int>(mins, n), want_mins, ".min.s32");
    conf::expect_equal(download<float>(fsums, n), want_fsums, ".add.f32");
  }

  // cp.reduce.async.bulk.tensor adds a box into the tensor: only the elements inside it, each
  // atomically; overlapping boxes of 15 blocks add into the same elements.
  TEST_CASE_FIXTURE(Tma, "conformance.tma: tensor reductions add boxes into the tensor") {
    const CUfunction f = function(load_ptx("tma"), "tma_box_reduce_add");
    int rows = 8, cols = 16, x_step = 12, y_step = 6, shift_x = -5, shift_y = -3;
    const unsigned gx = 7, gy = 8;  // reaches past both ends of the 68 x 37 tensor
    std::vector<float> out(in.size());
    conf::Rng rng(5);
    for (float& x : out) x = static_cast<float>(rng.range(-1000, 1000)) / 4.0f;
    std::vector<float> boxes(std::size_t{gx} * gy * rows * cols);
    for (float& x : boxes) x = static_cast<float>(rng.range(-1000, 1000)) / 4.0f;
    std::vector<float> want = out;
    for (unsigned by = 0; by < gy; ++by) {
      for (unsigned bx = 0; bx < gx; ++bx) {
        for (int r = 0; r < rows; ++r) {
          for (int c = 0; c < cols; ++c) {
            const int x = static_cast<int>(bx) * x_step + shift_x + c;
            const int y = static_cast<int>(by) * y_step + shift_y + r;
            if (x < 0 || x >= kCols || y < 0 || y >= kRows) continue;
            want[std::size_t(y) * kPitch + x] +=
                boxes[((by * gx + bx) * rows + r) * std::size_t(cols) + c];
          }
        }
      }
    }
    const CUdeviceptr dout = upload(out);
    const CUdeviceptr dboxes = upload(boxes);
    CUtensorMap out_map = map(dout, cols, rows, 1, CU_TENSOR_MAP_SWIZZLE_NONE);
    void* params[] = {
        &out_map, const_cast<CUdeviceptr*>(&dboxes), &rows, &cols, &x_step, &y_step, &shift_x,
        &shift_y};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuLaunchKernel(
        f, gx, gy, 1, 32, 1, 1, static_cast<unsigned>(rows * cols * sizeof(float)), nullptr, params,
        nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    conf::expect_equal(download<float>(dout, want.size()), want, "the tensor boxes were added to");
  }
}
