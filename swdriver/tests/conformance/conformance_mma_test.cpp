// Kernel conformance for tensor cores: nvcuda::wmma GEMMs (conformance/mma.cu) in .f16 with .f32
// and .f16 accumulators, .bf16, .tf32 and 8-bit integers, and hand-written inline-PTX kernels
// (conformance/mma_sync.cu): ldmatrix + mma.sync, an .f16 mma with stmatrix, integer mma and
// an .f64 DGEMM. Each result is checked against a host GEMM in double precision: exactly for
// integers, and for floats within a bound derived from the types. The interpreter adds the
// exact products to C one by one in f32 (src/ptx/matrix.hpp), so a K-term dot product is within
// (K + 1) 2^-24 (|c| + sum |a b|) of the exact one (the recursive-summation bound); an .f16
// accumulator adds one .f16 rounding, 2^-11 of the running value, per mma.
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "conformance_numeric.hpp"

namespace {

using conf::Conformance;

double half_value(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const double m = h & 0x3ff;
  const double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(m + 1024, e - 25);
  return (h & 0x8000) != 0 ? -v : v;
}

// Random values of `type`'s precision: multiples of 1/64 in [-2, 2] (exact in .f16 and .bf16).
std::vector<double> values(std::size_t n, conf::Rng& rng) {
  std::vector<double> v(n);
  for (double& x : v) x = rng.range(-128, 128) / 64.0;
  return v;
}

std::vector<std::uint16_t> halves(const std::vector<double>& v) {
  std::vector<std::uint16_t> h(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    h[i] = static_cast<std::uint16_t>(conf::half_bits(v[i]));
  return h;
}

// The transposition of a rows x cols row-major matrix (its column-major storage).
template <class T>
std::vector<T> transposed(const std::vector<T>& m, int rows, int cols) {
  std::vector<T> t(m.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c) * rows + r] = m[static_cast<std::size_t>(r) * cols + c];
  }
  return t;
}

// cvt.rna.tf32.f32: the nearest tf32, ties away from zero (wmma::__float_to_tf32).
double tf32_rna(float f) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  return std::bit_cast<float>((b + 0x1000u) & 0xffffe000u);
}

// Checks got (row-major M x N) against A (M x K) * B (K x N) + C (row-major doubles) within
// `bound(exact magnitude sum)`.
template <class Bound>
void check_gemm(const std::vector<double>& got, const std::vector<double>& a,
                const std::vector<double>& b, const std::vector<double>& c, int M, int N, int K,
                Bound bound, const char* what) {
  std::size_t bad = 0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * N + j;
      double want = c.empty() ? 0.0 : c[at];
      double mag = std::fabs(want);
      for (int k = 0; k < K; ++k) {
        const double p =
            a[static_cast<std::size_t>(i) * K + k] * b[static_cast<std::size_t>(k) * N + j];
        want += p;
        mag += std::fabs(p);
      }
      if (std::fabs(got[at] - want) > bound(mag)) {
        if (bad < 5)
          MESSAGE(what, ": C[", i, "][", j, "] = ", got[at], ", want ", want, " +- ", bound(mag));
        ++bad;
      }
    }
  }
  CHECK_MESSAGE(bad == 0, what, ": ", bad, " of ", M * N, " elements outside the bound");
}

// f32 accumulation of K exact products and c.
auto f32_bound(int K) {
  return [K](double mag) { return (K + 1) * std::ldexp(mag, -24); };
}

}  // namespace

TEST_SUITE("conformance.mma") {
  TEST_CASE_FIXTURE(Conformance, "conformance.mma: a wmma f16 GEMM with f32 accumulators") {
    const int M = 64, N = 48, K = 64;
    conf::Rng rng(1);
    const std::vector<double> a = values(M * K, rng), b = values(K * N, rng);
    const CUdeviceptr da = upload(halves(a)), db = upload(halves(transposed(b, K, N)));
    const CUdeviceptr dc = zeros<float>(M * N, -1.0f);
    run(function(load_ptx("mma"), "wmma_gemm"), {N / 16, M / 16}, {32}, 0, da, db, dc, M, N, K);
    const std::vector<float> got = download<float>(dc, M * N);
    check_gemm(std::vector<double>(got.begin(), got.end()), a, b, {}, M, N, K, f32_bound(K),
               "wmma_gemm");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.mma: a tiled wmma GEMM with shared memory, alpha and beta") {
    const int M = 64, N = 96, K = 48;
    const float alpha = 1.5f, beta = -0.5f;
    conf::Rng rng(2);
    const std::vector<double> a = values(M * K, rng), b = values(K * N, rng),
                              c = values(M * N, rng);
    std::vector<float> cf(c.begin(), c.end());
    const CUdeviceptr da = upload(halves(a)), db = upload(halves(b)), dc = upload(cf);
    run(function(load_ptx("mma"), "wmma_gemm_tiled"), {N / 32, M / 32}, {128}, 0, da, db, dc, M, N,
        K, alpha, beta);
    const std::vector<float> got = download<float>(dc, M * N);
    // alpha * (A B) + beta * C, each rounded in f32: scale the product's bound by alpha, add
    // the last two roundings.
    std::vector<double> scaled_a(a), scaled_c(c);
    for (double& x : scaled_a) x *= alpha;
    for (double& x : scaled_c) x *= beta;
    check_gemm(
        std::vector<double>(got.begin(), got.end()), scaled_a, b, scaled_c, M, N, K,
        [&](double mag) { return (K + 4) * std::ldexp(mag, -24); }, "wmma_gemm_tiled");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: a wmma f16 GEMM with f16 accumulators") {
    const int M = 64, N = 32, K = 64;
    conf::Rng rng(3);
    const std::vector<double> a = values(M * K, rng), b = values(K * N, rng),
                              c = values(M * N, rng);
    // every matrix column-major
    const CUdeviceptr da = upload(halves(transposed(a, M, K)));
    const CUdeviceptr db = upload(halves(transposed(b, K, N)));
    const CUdeviceptr dc = upload(halves(transposed(c, M, N)));
    const CUdeviceptr dd = zeros<std::uint16_t>(M * N, 0xffff);
    run(function(load_ptx("mma"), "wmma_gemm_f16acc"), {N / 8, M / 32}, {32}, 0, da, db, dc, dd, M,
        N, K);
    const std::vector<std::uint16_t> col = download<std::uint16_t>(dd, M * N);
    const std::vector<std::uint16_t> got16 = transposed(col, N, M);
    std::vector<double> got(got16.size());
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = half_value(got16[i]);
    // K / 16 mma steps, each rounding its result to .f16 (2^-11 relative), on top of the f32 sums
    const int steps = K / 16;
    check_gemm(
        got, a, b, c, M, N, K,
        [&](double mag) { return steps * std::ldexp(mag, -11) + (K + 1) * std::ldexp(mag, -24); },
        "wmma_gemm_f16acc");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: a wmma tf32 GEMM") {
    const int M = 48, N = 32, K = 64;
    conf::Rng rng(4);
    // full f32 inputs: the kernel rounds them to tf32 (cvt.rna.tf32.f32), the host likewise
    std::vector<float> a(M * K), b(K * N);
    for (float& x : a) x = static_cast<float>(rng.range(-1 << 20, 1 << 20)) / (1 << 19);
    for (float& x : b) x = static_cast<float>(rng.range(-1 << 20, 1 << 20)) / (1 << 19);
    const CUdeviceptr da = upload(a), db = upload(transposed(b, K, N));
    const CUdeviceptr dc = zeros<float>(M * N, -1.0f);
    run(function(load_ptx("mma"), "wmma_gemm_tf32"), {N / 16, M / 16}, {32}, 0, da, db, dc, M, N,
        K);
    const std::vector<float> col = download<float>(dc, M * N);
    const std::vector<float> got = transposed(col, N, M);
    std::vector<double> ta(a.size()), tb(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ta[i] = tf32_rna(a[i]);
    for (std::size_t i = 0; i < b.size(); ++i) tb[i] = tf32_rna(b[i]);
    check_gemm(std::vector<double>(got.begin(), got.end()), ta, tb, {}, M, N, K, f32_bound(K),
               "wmma_gemm_tf32");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: a wmma bf16 GEMM") {
    const int M = 32, N = 48, K = 48;
    conf::Rng rng(5);
    const std::vector<double> a = values(M * K, rng), b = values(K * N, rng);
    std::vector<std::uint16_t> ab(a.size()), bb(b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      ab[i] = static_cast<std::uint16_t>(conf::bf16_bits(a[i]));
    for (std::size_t i = 0; i < b.size(); ++i)
      bb[i] = static_cast<std::uint16_t>(conf::bf16_bits(b[i]));
    const CUdeviceptr da = upload(ab), db = upload(bb), dc = zeros<float>(M * N);
    run(function(load_ptx("mma"), "wmma_gemm_bf16"), {N / 16, M / 16}, {32}, 0, da, db, dc, M, N,
        K);
    const std::vector<float> got = download<float>(dc, M * N);
    check_gemm(std::vector<double>(got.begin(), got.end()), a, b, {}, M, N, K, f32_bound(K),
               "wmma_gemm_bf16");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: a wmma int8 GEMM is exact") {
    const int M = 32, N = 64, K = 64;
    conf::Rng rng(6);
    std::vector<signed char> a(M * K), b(K * N);
    for (auto& x : a) x = static_cast<signed char>(rng.range(-128, 127));
    for (auto& x : b) x = static_cast<signed char>(rng.range(-128, 127));
    const CUdeviceptr da = upload(a), db = upload(transposed(b, K, N)), dc = zeros<int>(M * N, 7);
    run(function(load_ptx("mma"), "wmma_gemm_s8"), {N / 32, M / 8}, {32}, 0, da, db, dc, M, N, K);
    std::vector<int> want(M * N, 0);
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        for (int k = 0; k < K; ++k) want[i * N + j] += a[i * K + k] * b[k * N + j];
      }
    }
    conf::expect_equal(download<int>(dc, M * N), want, "wmma_gemm_s8");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: hand-written ldmatrix and mma.sync") {
    const int M = 48, N = 40, K = 64;
    conf::Rng rng(7);
    const std::vector<double> a = values(M * K, rng), b = values(K * N, rng);
    const CUdeviceptr da = upload(halves(a)), db = upload(halves(b));
    const CUdeviceptr dc = zeros<float>(M * N, -1.0f);
    run(function(load_ptx("mma_sync"), "mma_ldmatrix_gemm"), {N / 8, M / 16}, {32}, 0, da, db, dc,
        M, N, K);
    const std::vector<float> got = download<float>(dc, M * N);
    check_gemm(std::vector<double>(got.begin(), got.end()), a, b, {}, M, N, K, f32_bound(K),
               "mma_ldmatrix_gemm");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: an f16 mma.sync whose result stmatrix stores") {
    const int M = 32, N = 24, K = 32;
    conf::Rng rng(8);
    const std::vector<double> a = values(M * K, rng), b = values(K * N, rng),
                              c = values(M * N, rng);
    const CUdeviceptr da = upload(halves(a)), db = upload(halves(b)), dc = upload(halves(c));
    const CUdeviceptr dd = zeros<std::uint16_t>(M * N, 0xffff);
    run(function(load_ptx("mma_sync"), "mma_f16_stmatrix"), {N / 8, M / 16}, {32}, 0, da, db, dc,
        dd, M, N, K);
    const std::vector<std::uint16_t> got16 = download<std::uint16_t>(dd, M * N);
    std::vector<double> got(got16.size());
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = half_value(got16[i]);
    const int steps = K / 16;
    check_gemm(
        got, a, b, c, M, N, K,
        [&](double mag) { return steps * std::ldexp(mag, -11) + (K + 1) * std::ldexp(mag, -24); },
        "mma_f16_stmatrix");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: hand-written 8-bit integer mma.sync is exact") {
    const int M = 32, N = 24, K = 64;
    conf::Rng rng(9);
    std::vector<signed char> a(M * K), b(K * N);
    std::vector<unsigned char> ua(M * K);
    for (auto& x : a) x = static_cast<signed char>(rng.range(-128, 127));
    for (auto& x : ua) x = static_cast<unsigned char>(rng.range(0, 255));
    for (auto& x : b) x = static_cast<signed char>(rng.range(-128, 127));
    const CUdeviceptr db = upload(transposed(b, K, N));
    std::vector<int> want_s8(M * N, 0), want_u8(M * N, 0);
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        for (int k = 0; k < K; ++k) {
          want_s8[i * N + j] += a[i * K + k] * b[k * N + j];
          want_u8[i * N + j] += ua[i * K + k] * b[k * N + j];
        }
      }
    }
    const CUdeviceptr dc = zeros<int>(M * N, 7);
    run(function(load_ptx("mma_sync"), "mma_s8_gemm"), {N / 8, M / 16}, {32}, 0, upload(a), db, dc,
        M, N, K);
    conf::expect_equal(download<int>(dc, M * N), want_s8, "mma_s8_gemm (m16n8k32.s8.s8)");
    run(function(load_ptx("mma_sync"), "mma_u8s8_gemm"), {N / 8, M / 8}, {32}, 0, upload(ua), db,
        dc, M, N, K);
    conf::expect_equal(download<int>(dc, M * N), want_u8, "mma_u8s8_gemm (m8n8k16.u8.s8)");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mma: an f64 DGEMM with mma.m8n8k4") {
    const int M = 24, N = 32, K = 40;
    conf::Rng rng(10);
    std::vector<double> a(M * K), b(K * N), c(M * N);
    for (double& x : a)
      x = static_cast<double>(static_cast<std::int64_t>(rng.next() >> 11)) / 0x1p53 - 0.5;
    for (double& x : b)
      x = static_cast<double>(static_cast<std::int64_t>(rng.next() >> 11)) / 0x1p53 - 0.5;
    for (double& x : c)
      x = static_cast<double>(static_cast<std::int64_t>(rng.next() >> 11)) / 0x1p53 - 0.5;
    const CUdeviceptr dc = upload(c);
    run(function(load_ptx("mma_sync"), "mma_f64_gemm"), {N / 8, M / 8}, {32}, 0, upload(a),
        upload(b), dc, M, N, K);
    // a chain of K fused multiply-adds: within (K + 1) 2^-53 (|c| + sum |a b|)
    check_gemm(
        download<double>(dc, M * N), a, b, c, M, N, K,
        [&](double mag) { return (K + 1) * std::ldexp(mag, -53); }, "mma_f64_gemm");
  }
}
