// Kernel conformance: asynchronous copies and barriers (conformance/async.cu) against host
// references: double-buffered tiled matrix multiplies through cp.async groups and through a
// cuda::pipeline, cuda::memcpy_async with a cuda::barrier (element copies and a bulk copy),
// zero-fill, a bulk store, the Programming Guide's bulk copy example, and programmatic dependent
// launch with cuLaunchKernelEx.
#include <cstdint>
#include <numeric>
#include <vector>

#include "conformance_support.hpp"

namespace {

using conf::Conformance;
using conf::expect_equal;

// Small integers as floats: every product and sum is exact, whatever the order or fusion.
std::vector<float> matrix(int rows, int cols, int seed) {
  std::vector<float> m(static_cast<std::size_t>(rows) * cols);
  for (std::size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(seed)) % 9) - 4);
  return m;
}

std::vector<float> matmul(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                          int k) {
  std::vector<float> c(static_cast<std::size_t>(m) * n, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int x = 0; x < k; ++x) acc += a[i * k + x] * b[x * n + j];
      c[i * n + j] = acc;
    }
  return c;
}

struct AsyncConformance : Conformance {
  // The double-buffered matrix multiplies of module `m`.
  void check_matmuls(CUmodule m) {
    constexpr int M = 32, N = 48, K = 64;
    const std::vector<float> a = matrix(M, K, 1), b = matrix(K, N, 5);
    const std::vector<float> want = matmul(a, b, M, N, K);
    for (const char* kernel : {"matmul_cp_async", "matmul_pipeline"}) {
      INFO(kernel);
      const CUdeviceptr da = upload(a), db = upload(b), dc = zeros<float>(M * N, -1.0f);
      run(function(m, kernel), {N / 16, M / 16, 1}, {16, 16, 1}, 0, da, db, dc, M, N, K);
      expect_equal(download<float>(dc, M * N), want, kernel);
    }
  }

  // The cuda::barrier kernels of module `m`.
  void check_barrier_copies(CUmodule m) {
    constexpr int blocks = 3;
    std::vector<int> in(blocks * 256);
    std::iota(in.begin(), in.end(), -100);
    const CUdeviceptr din = upload(in), dout = zeros<int>(in.size());
    run(function(m, "barrier_copy"), {blocks, 1, 1}, {256, 1, 1}, 0, din, dout);
    std::vector<int> want(in.size());
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < 256; ++t) want[b * 256 + t] = 2 * in[b * 256 + (t + 1) % 256];
    expect_equal(download<int>(dout, in.size()), want, "barrier_copy");

    // 16-byte aligned: one cp.async.bulk completes the barrier's tx-count (compute_80: cp.async
    // of 16 bytes).
    std::vector<int> in4(blocks * 64 * 4);
    std::iota(in4.begin(), in4.end(), 1);
    const CUdeviceptr din4 = upload(in4), dout4 = zeros<int>(in4.size());
    run(function(m, "barrier_copy_bulk"), {blocks, 1, 1}, {64, 1, 1}, 0, din4, dout4);
    std::vector<int> want4(in4.size());
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < 64; ++t)
        for (int c = 0; c < 4; ++c)
          want4[(b * 64 + t) * 4 + c] = in4[(b * 64 + 63 - t) * 4 + 3 - c];
    expect_equal(download<int>(dout4, in4.size()), want4, "barrier_copy_bulk");
  }
};

}  // namespace

TEST_SUITE("conformance.async") {
  TEST_CASE_FIXTURE(AsyncConformance,
                    "conformance.async: double-buffered tiled matrix multiplies") {
    check_matmuls(load_ptx("async"));
  }

  TEST_CASE_FIXTURE(AsyncConformance,
                    "conformance.async: cuda::memcpy_async with a cuda::barrier") {
    check_barrier_copies(load_ptx("async"));
  }

  TEST_CASE_FIXTURE(AsyncConformance,
                    "conformance.async: the same kernels compiled for compute_80 (test_wait)") {
    const CUmodule m = load_ptx("async_80");
    check_matmuls(m);
    check_barrier_copies(m);
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.async: zero-fill reads nothing past the input") {
    const CUmodule m = load_ptx("async");
    constexpr int n = 37, threads = 16;  // the 10th copy has 1 valid float, 6 copies have none
    std::vector<float> in(n);
    std::iota(in.begin(), in.end(), 0.5f);
    const CUdeviceptr din = upload(in), dout = zeros<float>(4 * threads, -7.0f);
    run(function(m, "zero_fill"), {1, 1, 1}, {threads, 1, 1}, 0, din, dout, n);
    std::vector<float> want(4 * threads, 1.0f);
    for (int i = 0; i < n; ++i) want[i] = in[i] + 1.0f;
    expect_equal(download<float>(dout, want.size()), want, "zero_fill");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.async: a bulk store from shared to global memory") {
    const CUmodule m = load_ptx("async");
    std::vector<float> in(2 * 256);
    std::iota(in.begin(), in.end(), -3.0f);
    const CUdeviceptr din = upload(in), dout = zeros<float>(in.size());
    run(function(m, "bulk_store"), {2, 1, 1}, {256, 1, 1}, 0, din, dout);
    std::vector<float> want(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) want[i] = in[i] * in[i];
    expect_equal(download<float>(dout, in.size()), want, "bulk_store");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.async: the Programming Guide's bulk copy example (add one)") {
    const CUmodule m = load_ptx("async");
    constexpr int blocks = 3, len = 1024;
    std::vector<int> data(blocks * len);
    std::iota(data.begin(), data.end(), -500);
    const CUdeviceptr d = upload(data);
    run(function(m, "tma_add_one"), {blocks, 1, 1}, {128, 1, 1}, 0, d);
    std::vector<int> want = data;
    for (int& v : want) ++v;
    expect_equal(download<int>(d, data.size()), want, "tma_add_one");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.async: programmatic dependent launch waits for its primary") {
    // cuda.h: with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION the secondary may start
    // before the primary completes; griddepcontrol.wait (cudaGridDependencySynchronize) returns
    // once the primary has completed and its memory is visible. The primary triggers its
    // dependents before it writes anything, so only that wait makes the secondary correct.
    const CUmodule m = load_ptx("async");
    constexpr int n = 1000, threads = 128, blocks = (n + threads - 1) / threads;
    std::vector<int> in(n);
    std::iota(in.begin(), in.end(), -300);
    const CUdeviceptr din = upload(in), dmid = zeros<int>(n), dout = zeros<int>(n);
    CUstream stream = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    const auto launch_ex = [&](const char* kernel, CUdeviceptr src, CUdeviceptr dst,
                               bool programmatic) {
      CUlaunchAttribute attr{};
      attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attr.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig config{};
      config.gridDimX = blocks;
      config.gridDimY = config.gridDimZ = 1;
      config.blockDimX = threads;
      config.blockDimY = config.blockDimZ = 1;
      config.hStream = stream;
      config.attrs = programmatic ? &attr : nullptr;
      config.numAttrs = programmatic ? 1 : 0;
      int count = n;
      void* params[] = {&src, &dst, &count};
      return swcu::test::mod().cuLaunchKernelEx(&config, function(m, kernel), params, nullptr);
    };
    SWCU_TEST_REQUIRE_SUCCESS(launch_ex("pdl_primary", din, dmid, false));
    SWCU_TEST_REQUIRE_SUCCESS(launch_ex("pdl_secondary", dmid, dout, true));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i) want[i] = 3 * in[i] + i % 7;
    expect_equal(download<int>(dout, n), want, "pdl_secondary");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
  }
}
