// Kernel conformance for the tensor memory accelerator's im2col mode and interleaved layouts
// (conformance/tma_modes.cu): maps made by cuTensorMapEncodeIm2col and cuTensorMapEncodeTiled
// with CU_TENSOR_MAP_INTERLEAVE_16B/32B; im2col loads with offsets (convolution taps), bounding
// boxes smaller and larger than the tensor, traversal strides, channels and pixels outside the
// tensor (zero or NaN fill), every swizzle; interleaved tiled loads and stores. Each is compared
// with the host references of tma_modes_reference.hpp (the PTX ISA's rules written independently
// of the interpreter); the im2col loads gave the same results on an H200 (0 differences in the 5
// cases). Im2col_no_offs stores and .add reductions are illegal instructions on sm_90 (an H200
// faults on them), so their cases check the fault.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "conformance_support.hpp"
#include "tma_modes_cases.hpp"

namespace {

using conf::Conformance;

struct TmaModes : Conformance {
  conf::Rng rng{17};

  // A float tensor of `bytes` bytes with distinct-looking values (multiples of 1/4: sums of a
  // few stay exact in any order).
  std::vector<float> floats(std::size_t bytes) {
    std::vector<float> v(bytes / 4);
    for (float& x : v) x = static_cast<float>(rng.range(-4000, 4000)) / 4.0f;
    return v;
  }

  static std::size_t tensor_bytes(const tmaref::Tensor& t) {
    return static_cast<std::size_t>(t.pitch[t.rank - 1] * t.dim[t.rank - 1]);
  }

  CUtensorMap im2col_map(const tmacases::Im2colCase& c, CUdeviceptr base) {
    alignas(64) CUtensorMap m{};
    cuuint64_t dims[5] = {}, strides[4] = {};
    cuuint32_t steps[5] = {};
    for (unsigned i = 0; i < c.t.rank; ++i) {
      dims[i] = static_cast<cuuint64_t>(c.t.dim[i]);
      steps[i] = i == 0 ? 1 : c.m.stride[i];
      if (i > 0) strides[i - 1] = static_cast<cuuint64_t>(c.t.pitch[i]);
    }
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuTensorMapEncodeIm2col(
        &m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, c.t.rank, reinterpret_cast<void*>(base), dims, strides,
        c.m.lower, c.m.upper, c.m.channels, c.m.pixels, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
        static_cast<CUtensorMapSwizzle>(c.swizzle), CU_TENSOR_MAP_L2_PROMOTION_NONE,
        c.nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                   : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return m;
  }

  // Runs tma_im2col_load for each block of `c` and compares the boxes with the reference.
  void im2col_load(const tmacases::Im2colCase& c) {
    INFO(c.name);
    const std::vector<float> tensor = floats(tensor_bytes(c.t));
    CUtensorMap map = im2col_map(c, upload(tensor));
    const unsigned blocks = static_cast<unsigned>(c.coords.size() / 5);
    unsigned bytes = c.m.channels * c.m.pixels * 4;
    const CUdeviceptr out = zeros<float>(std::size_t{blocks} * bytes / 4, 1.5f);
    int rank = static_cast<int>(c.t.rank);
    unsigned swizzle = c.swizzle;
    run(function(load_ptx("tma_modes"), "tma_im2col_load"), {blocks}, {96}, bytes, map, rank,
        upload(c.coords), upload(c.offsets), out, bytes, swizzle);
    std::vector<float> want;
    for (unsigned b = 0; b < blocks; ++b) {
      for (const std::int64_t at :
           tmaref::im2col_elements(c.t, c.m, &c.coords[b * 5], &c.offsets[b * 3])) {
        want.push_back(at < 0 ? (c.nan_fill ? NAN : 0.0f)
                              : tensor[static_cast<std::size_t>(at / 4)]);
      }
    }
    conf::compare(download<float>(out, want.size()), want, c.name,
                  [](float g, float w, std::size_t) {
                    // outside the tensor with the NaN fill: a NaN (cuda.h does not say which)
                    return std::isnan(w) ? std::isnan(g) : std::memcmp(&g, &w, 4) == 0;
                  });
  }

  // Runs tma_im2col_store (`reduce`: .add) for the blocks of `c`: an im2col_no_offs store or
  // reduction is an illegal instruction on sm_90. Observed on an H200 (driver 580.159.04, CUDA
  // 13) on 2026-11-27: the module loads (ptxas assembles the form the PTX ISA lists for sm_90),
  // the launch succeeds, and synchronizing gives CUDA_ERROR_ILLEGAL_INSTRUCTION, sticky as every
  // device fault is. The reduction could not be observed apart from the store there (the context
  // was already broken); the software driver treats it the same way. Each case breaks the
  // context, so each ends by destroying it and making a new one.
  void im2col_store_faults(const tmacases::Im2colCase& c, bool reduce) {
    INFO(c.name);
    const CUmodule module = load_ptx("tma_modes");
    const CUfunction f = function(module, "tma_im2col_store");
    const std::vector<float> tensor = floats(tensor_bytes(c.t));
    const CUdeviceptr dtensor = upload(tensor);
    CUtensorMap map = im2col_map(c, dtensor);
    const unsigned blocks = static_cast<unsigned>(c.coords.size() / 5);
    unsigned bytes = c.m.channels * c.m.pixels * 4;
    const std::vector<float> values = floats(std::size_t{blocks} * bytes);
    int rank = static_cast<int>(c.t.rank), red = reduce ? 1 : 0;
    unsigned swizzle = c.swizzle;
    const CUdeviceptr dcoords = upload(c.coords), dvalues = upload(values);
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(
        launch(f, {blocks}, {96}, bytes, map, rank, dcoords, dvalues, bytes, swizzle, red));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    const std::string err = capture.finish();
    INFO(err);
    // the fault names the kernel, the PTX line of the copy and why
    const std::string form =
        std::string(reduce ? "cp.reduce.async.bulk.tensor." : "cp.async.bulk.tensor.") +
        std::to_string(rank) + "d.global.shared::cta" + (reduce ? ".add" : "") +
        ".im2col_no_offs.bulk_group";
    const std::string ptx = swcu::test::read_bytes(conf::built_file("tma_modes.ptx"));
    std::istringstream lines(ptx);
    std::string line;
    int number = 0, copy_line = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (line.find(form) != std::string::npos) copy_line = number;
    }
    REQUIRE_MESSAGE(copy_line != 0, "tma_modes.ptx has no ", form);
    CHECK(err.find("kernel tma_im2col_store, PTX line " + std::to_string(copy_line) + ",") !=
          std::string::npos);
    CHECK(err.find(std::string(reduce ? "cp.reduce.async.bulk.tensor." : "cp.async.bulk.tensor.") +
                   std::to_string(rank) +
                   "d.im2col_no_offs: the sm_90 tensor memory accelerator has no im2col " +
                   (reduce ? "reduction" : "store") +
                   ": a GPU raises an illegal instruction here") != std::string::npos);
    // sticky: the context is broken for everything after
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    std::vector<float> back(tensor.size());
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyDtoH_v2(back.data(), dtensor, back.size() * 4),
                           CUDA_ERROR_ILLEGAL_INSTRUCTION);
    SWCU_TEST_CHECK_RESULT(
        launch(f, {1}, {32}, bytes, map, rank, dcoords, dvalues, bytes, swizzle, red),
        CUDA_ERROR_ILLEGAL_INSTRUCTION);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
  }

  // Runs tma_tile3_roundtrip for `c`: the boxes loaded and the tensor stored through a second map.
  void tile(const tmacases::TileCase& c) {
    INFO(c.name);
    const std::size_t total = tensor_bytes(c.t);
    std::vector<std::uint8_t> tensor(total);
    for (std::uint8_t& x : tensor) x = static_cast<std::uint8_t>(rng.range(0, 255));
    const CUdeviceptr din = upload(tensor);
    const CUdeviceptr dout = zeros<std::uint8_t>(total, 0xa5);
    const auto encode = [&](CUdeviceptr base) {
      alignas(64) CUtensorMap m{};
      const cuuint64_t dims[3] = {static_cast<cuuint64_t>(c.t.dim[0]),
                                  static_cast<cuuint64_t>(c.t.dim[1]),
                                  static_cast<cuuint64_t>(c.t.dim[2])};
      const cuuint64_t strides[2] = {static_cast<cuuint64_t>(c.t.pitch[1]),
                                     static_cast<cuuint64_t>(c.t.pitch[2])};
      SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuTensorMapEncodeTiled(
          &m, c.type, 3, reinterpret_cast<void*>(base), dims, strides, c.box, c.stride, c.il,
          static_cast<CUtensorMapSwizzle>(c.swizzle), CU_TENSOR_MAP_L2_PROMOTION_NONE,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
      return m;
    };
    CUtensorMap in_map = encode(din), out_map = encode(dout);
    const unsigned blocks = static_cast<unsigned>(c.coords.size() / 3);
    const auto first = tmaref::tile_elements(c.t, c.box, c.stride, c.il != 0, c.coords.data());
    unsigned bytes = static_cast<unsigned>(first.size()) * c.es;
    const CUdeviceptr boxes = zeros<std::uint8_t>(std::size_t{blocks} * bytes, 0x33);
    unsigned swizzle = c.swizzle;
    run(function(load_ptx("tma_modes"), "tma_tile3_roundtrip"), {blocks}, {96}, bytes, in_map,
        out_map, upload(c.coords), boxes, bytes, swizzle);
    std::vector<std::uint8_t> want_boxes, want_out(total, 0xa5);
    for (unsigned b = 0; b < blocks; ++b) {
      for (const std::int64_t at :
           tmaref::tile_elements(c.t, c.box, c.stride, c.il != 0, &c.coords[b * 3])) {
        for (unsigned k = 0; k < c.es; ++k) {
          const auto i = static_cast<std::size_t>(at + k);
          want_boxes.push_back(at < 0 ? 0 : tensor[i]);  // zeros outside the tensor
          if (at >= 0) want_out[i] = tensor[i];
        }
      }
    }
    conf::expect_equal(download<std::uint8_t>(boxes, want_boxes.size()), want_boxes,
                       std::string(c.name) + ": the boxes loaded");
    conf::expect_equal(download<std::uint8_t>(dout, total), want_out,
                       std::string(c.name) + ": the tensor stored");
  }
};

}  // namespace

TEST_SUITE("conformance.tma") {
  TEST_CASE_FIXTURE(TmaModes, "conformance.tma: im2col loads with offsets, strides and fill") {
    for (const auto& c : tmacases::im2col_loads()) im2col_load(c);
  }

  TEST_CASE_FIXTURE(TmaModes,
                    "conformance.tma: im2col_no_offs stores and reductions are illegal "
                    "instructions, as on an H200") {
    // observed on an H200 (driver 580.159.04, CUDA 13) on 2026-11-27; see im2col_store_faults
    for (const auto& c : tmacases::im2col_stores()) im2col_store_faults(c, false);
    for (const auto& c : tmacases::im2col_reductions()) im2col_store_faults(c, true);
  }

  TEST_CASE_FIXTURE(TmaModes, "conformance.tma: interleaved tiled loads and stores") {
    for (const auto& c : tmacases::tiles()) tile(c);
  }

  TEST_CASE_FIXTURE(TmaModes, "conformance.tma: an interleaved box of partial slices faults") {
    // cuda.h accepts a 16B-interleaved map whose box rows are 8 bytes (4 u16); how a GPU lays
    // such a box out in shared memory is not documented, so the software driver refuses the copy
    // (Stricter than the real driver) and says why
    const CUdeviceptr data = zeros<std::uint8_t>(16 * 20 * 6, 0);
    alignas(64) CUtensorMap m{};
    const cuuint64_t dims[3] = {8, 20, 6}, strides[2] = {16, 320};
    const cuuint32_t box[3] = {4, 8, 3}, steps[3] = {1, 1, 1};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuTensorMapEncodeTiled(
        &m, CU_TENSOR_MAP_DATA_TYPE_UINT16, 3, reinterpret_cast<void*>(data), dims, strides, box,
        steps, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    const std::vector<int> coords = {0, 0, 0};
    unsigned bytes = 4 * 8 * 3 * 2, swizzle = 0;
    swcu::test::StderrCapture capture;
    SWCU_TEST_REQUIRE_SUCCESS(launch(function(load_ptx("tma_modes"), "tma_tile3_roundtrip"), {1},
                                     {32}, bytes, m, m, upload(coords), zeros<std::uint8_t>(bytes),
                                     bytes, swizzle));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_INSTRUCTION);
    const std::string err = capture.finish();
    INFO(err);
    CHECK(err.find("an interleaved tensor map (CU_TENSOR_MAP_INTERLEAVE_16B) whose box rows are 8 "
                   "bytes, not whole 16-byte slices") != std::string::npos);
  }
}
