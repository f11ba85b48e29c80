// Kernel conformance: reductions, scans, sorting, control flow, recursion, local memory, launch
// shapes and linear algebra (conformance/{reduce,scan,sort,control,linalg}.cu).
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "conformance_checks.hpp"

namespace conf {

namespace {

unsigned next_pow2(unsigned v) {
  unsigned p = 1;
  while (p < v) p <<= 1;
  return p;
}

std::vector<int> random_ints(std::size_t n, int lo, int hi, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<int> v(n);
  for (int& x : v) x = rng.range(lo, hi);
  return v;
}

}  // namespace

void check_reduce_tree(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "reduce_tree");
  constexpr int n = 1000;
  const std::vector<int> in = random_ints(n, -100000, 100000, 1);
  const CUdeviceptr din = t.upload(in);
  for (unsigned block : {100u, 33u, 256u}) {
    const unsigned grid = (n + block - 1) / block;
    const CUdeviceptr dpartial = t.zeros<int>(grid, -1);
    t.run(f, {grid}, {block}, next_pow2(block) * 4, din, dpartial, n);
    std::vector<int> want(grid, 0);
    for (int i = 0; i < n; ++i)
      want[static_cast<std::size_t>(i) / block] += in[static_cast<std::size_t>(i)];
    expect_equal(t.download<int>(dpartial, grid), want, "block partial sums");
  }
}

void check_reduce_shfl_down(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "reduce_shfl_down");
  constexpr int n = 5000;
  const std::vector<int> ints = random_ints(n, -50, 50, 2);
  std::vector<float> in(ints.begin(), ints.end());
  const CUdeviceptr din = t.upload(in);
  constexpr unsigned grid = 7;
  constexpr unsigned block = 96;
  const CUdeviceptr dpartial = t.zeros<float>(grid);
  t.run(f, {grid}, {block}, 0, din, dpartial, n);
  std::vector<float> want(grid, 0.0f);
  for (int i = 0; i < n; ++i)
    want[(static_cast<unsigned>(i) % (grid * block)) / block] += in[static_cast<std::size_t>(i)];
  expect_equal(t.download<float>(dpartial, grid), want, "grid-stride partial sums");
}

void check_reduce_shfl_xor(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "reduce_shfl_xor");
  constexpr std::size_t n = 256;
  Rng rng(3);
  std::vector<unsigned> in(n);
  for (unsigned& x : in) x = static_cast<unsigned>(rng.next());
  const CUdeviceptr din = t.upload(in);
  const CUdeviceptr dsum = t.zeros<unsigned>(n);
  const CUdeviceptr dmax = t.zeros<unsigned>(n);
  t.run(f, {4}, {64}, 0, din, dsum, dmax);
  std::vector<unsigned> sums(n), maxima(n);
  for (std::size_t w = 0; w < n / 32; ++w) {
    unsigned s = 0, mx = 0;
    for (std::size_t l = 0; l < 32; ++l) {
      s += in[w * 32 + l];
      mx = std::max(mx, in[w * 32 + l]);
    }
    for (std::size_t l = 0; l < 32; ++l) {
      sums[w * 32 + l] = s;
      maxima[w * 32 + l] = mx;
    }
  }
  expect_equal(t.download<unsigned>(dsum, n), sums, "butterfly sums in every lane");
  expect_equal(t.download<unsigned>(dmax, n), maxima, "butterfly maxima in every lane");
}

void check_reduce_cg(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "reduce_cg");
  constexpr int n = 1000;
  constexpr unsigned grid = 4;
  constexpr unsigned block = 256;
  const std::vector<int> in = random_ints(n, -1000, 1000, 4);
  const CUdeviceptr din = t.upload(in);
  const CUdeviceptr dtiles = t.zeros<int>(grid * block / 32, -1);
  const CUdeviceptr dblocks = t.zeros<int>(grid * 2, -1);
  t.run(f, {grid}, {block}, 0, din, dtiles, dblocks, n);
  std::vector<int> tiles(grid * block / 32, 0);
  for (int i = 0; i < n; ++i)
    tiles[static_cast<std::size_t>(i) / 32] += in[static_cast<std::size_t>(i)];
  std::vector<int> blocks(grid * 2);
  for (std::size_t b = 0; b < grid; ++b) {
    const auto first = tiles.begin() + static_cast<std::ptrdiff_t>(b * 8);
    blocks[2 * b] = std::accumulate(first, first + 8, 0);
    blocks[2 * b + 1] = *std::max_element(first, first + 8);
  }
  expect_equal(t.download<int>(dtiles, tiles.size()), tiles, "tile sums");
  expect_equal(t.download<int>(dblocks, blocks.size()), blocks, "block sums and maxima");
}

void check_scan_hillis_steele(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "scan_hillis_steele");
  constexpr int n = 1000;
  const std::vector<int> in = random_ints(n, -500, 500, 5);
  const CUdeviceptr din = t.upload(in);
  for (unsigned block : {100u, 33u, 128u}) {
    const unsigned grid = (n + block - 1) / block;
    const CUdeviceptr dinc = t.zeros<int>(n, 7);
    const CUdeviceptr dexc = t.zeros<int>(n, 7);
    t.run(f, {grid}, {block}, 2 * block * 4, din, dinc, dexc, n);
    std::vector<int> inc(n), exc(n);
    int running = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % block == 0) running = 0;
      exc[i] = running;
      running += in[i];
      inc[i] = running;
    }
    expect_equal(t.download<int>(dinc, n), inc, "inclusive scan, block " + std::to_string(block));
    expect_equal(t.download<int>(dexc, n), exc, "exclusive scan, block " + std::to_string(block));
  }
}

void check_scan_warp(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "scan_warp");
  constexpr unsigned grid = 3;
  constexpr unsigned block = 256;
  constexpr std::size_t n = grid * block;
  Rng rng(6);
  std::vector<long long> in(n);
  for (long long& x : in) x = static_cast<long long>(rng.next() >> 24) - (1ll << 39);
  const CUdeviceptr din = t.upload(in);
  const CUdeviceptr dinc = t.zeros<long long>(n);
  const CUdeviceptr dexc = t.zeros<long long>(n);
  t.run(f, {grid}, {block}, 0, din, dinc, dexc);
  std::vector<long long> inc(n), exc(n);
  long long running = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % block == 0) running = 0;
    exc[i] = running;
    running += in[i];
    inc[i] = running;
  }
  expect_equal(t.download<long long>(dinc, n), inc, "inclusive warp scan");
  expect_equal(t.download<long long>(dexc, n), exc, "exclusive warp scan");
}

namespace {

template <class T>
void check_bitonic(Conformance& t, CUfunction f, std::vector<T> data, unsigned block) {
  const std::size_t segment = 2 * block;
  REQUIRE(data.size() % segment == 0);
  const auto grid = static_cast<unsigned>(data.size() / segment);
  const CUdeviceptr d = t.upload(data);
  t.run(f, {grid}, {block}, static_cast<unsigned>(segment * sizeof(T)), d);
  for (std::size_t s = 0; s < grid; ++s) {
    const auto first = data.begin() + static_cast<std::ptrdiff_t>(s * segment);
    std::sort(first, first + static_cast<std::ptrdiff_t>(segment));
  }
  expect_equal(t.download<T>(d, data.size()), data, "sorted segments");
}

}  // namespace

void check_bitonic_int(Conformance& t, CUmodule m) {
  check_bitonic(t, t.function(m, "bitonic_sort_int"), random_ints(2048, -100000, 100000, 7), 256);
}

void check_bitonic_float(Conformance& t, CUmodule m, const char* name) {
  Rng rng(8);
  std::vector<float> data(768);
  for (float& x : data) x = static_cast<float>(rng.range(-1000000, 1000000)) / 1024.0f;
  check_bitonic(t, t.function(m, name), data, 128);
}

void check_bitonic_u64(Conformance& t, CUmodule m, const char* name) {
  Rng rng(9);
  std::vector<unsigned long long> data(256);
  for (auto& x : data) x = rng.next();
  check_bitonic(t, t.function(m, name), data, 64);
}

namespace {

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

}  // namespace

void check_recursion(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "recursion");
  constexpr int n = 100;
  const CUdeviceptr dfib = t.zeros<int>(n);
  const CUdeviceptr dfact = t.zeros<unsigned long long>(n);
  const CUdeviceptr dparity = t.zeros<int>(n, 5);
  t.run(f, {4}, {33}, 0, dfib, dfact, dparity, n);
  std::vector<int> fibs(n), parity(n);
  std::vector<unsigned long long> facts(n);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    fibs[k] = fib(i % 21);
    unsigned long long p = 1;
    for (int j = 2; j <= i % 21; ++j) p *= static_cast<unsigned long long>(j);
    facts[k] = p;
    parity[k] = (i % 37) % 2 == 0 ? 1 : 0;
  }
  expect_equal(t.download<int>(dfib, n), fibs, "fib");
  expect_equal(t.download<unsigned long long>(dfact, n), facts, "factorial");
  expect_equal(t.download<int>(dparity, n), parity, "mutual recursion");
}

void check_local_array(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "local_array");
  constexpr int n = 300;
  const std::vector<int> in = random_ints(n, -1000, 1000, 10);
  const std::vector<int> idx = random_ints(n, 0, 1 << 20, 11);
  const CUdeviceptr din = t.upload(in);
  const CUdeviceptr didx = t.upload(idx);
  const CUdeviceptr dout = t.zeros<unsigned>(n);
  t.run(f, {3}, {100}, 0, din, didx, dout, n);
  std::vector<unsigned> want(n);
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    unsigned a[40];
    for (int k = 0; k < 40; ++k) a[k] = static_cast<unsigned>(in[ui] * (k + 1) + k);
    for (int k = 0; k < 40; ++k) {
      const int j = idx[static_cast<std::size_t>((i + k) % n)] % 40;
      a[j] += a[(j + k) % 40] ^ static_cast<unsigned>(k);
    }
    unsigned walk = 0;
    unsigned p = static_cast<unsigned>(in[ui]) & 31u;
    for (int k = 0; k < 20; ++k) {
      walk += a[p];
      p = (p + (a[p] & 7u) + 1u) % 40u;
    }
    want[ui] = walk;
  }
  expect_equal(t.download<unsigned>(dout, n), want, "local array walk");
}

void check_divergent(Conformance& t, CUmodule m) {
  const CUfunction f = t.function(m, "divergent");
  constexpr int n = 500;
  std::vector<int> in(n);
  std::iota(in.begin(), in.end(), 0);
  const CUdeviceptr din = t.upload(in);
  const CUdeviceptr dout = t.zeros<int>(n, 99);
  const CUdeviceptr dsteps = t.zeros<int>(n, 99);
  t.run(f, {5}, {100}, 0, din, dout, dsteps, n);
  std::vector<int> out(n), steps(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int v = in[i];
    if (v % 11 == 0) {
      out[i] = -1;
      steps[i] = 0;
      continue;
    }
    int acc = 0;
    int k = 0;
    bool done = false;
    for (; k < 64; ++k) {
      if ((k + v) % 3 == 0) continue;
      if (acc > v * 4) break;
      acc += k ^ v;
      int inner = v & 7;
      while (inner-- > 0) {
        if ((inner + k) % 5 == 4) break;
        acc += inner;
      }
      if (acc % 17 == 3) {
        out[i] = acc;
        steps[i] = 1000 + k;
        done = true;
        break;
      }
    }
    if (done) continue;
    out[i] = acc;
    steps[i] = k;
  }
  expect_equal(t.download<int>(dout, n), out, "results");
  expect_equal(t.download<int>(dsteps, n), steps, "exit steps");
}

}  // namespace conf

using conf::Conformance;
using conf::Dim;
using conf::expect_equal;

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.reduce: shared-memory tree reduction matches the host sum") {
    conf::check_reduce_tree(*this, load_ptx("reduce"));
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.reduce: grid-stride shfl_down reduction of floats") {
    conf::check_reduce_shfl_down(*this, load_ptx("reduce"));
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.reduce: shfl_xor butterfly leaves the total in every lane") {
    conf::check_reduce_shfl_xor(*this, load_ptx("reduce"));
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.reduce: cooperative_groups tile and block reductions") {
    conf::check_reduce_cg(*this, load_ptx("reduce"));
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.reduce: a fatbin holding only PTX runs the same kernels") {
    const CUmodule m = load_image(swcu::test::read_bytes(conf::built_file("reduce_ptx.fatbin")));
    conf::check_reduce_tree(*this, m);
    conf::check_reduce_shfl_xor(*this, m);
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.scan: Hillis-Steele inclusive and exclusive block scans") {
    conf::check_scan_hillis_steele(*this, load_ptx("scan"));
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.scan: warp-shuffle block scan of 64-bit values") {
    conf::check_scan_warp(*this, load_ptx("scan"));
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.sort: bitonic sort in shared memory") {
    const CUmodule m = load_ptx("sort");
    conf::check_bitonic_int(*this, m);
    conf::check_bitonic_float(*this, m, "_Z12bitonic_sortIfEvPT_");
    conf::check_bitonic_u64(*this, m, "_Z12bitonic_sortIyEvPT_");
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.control: recursive noinline device functions") {
    conf::check_recursion(*this, load_ptx("control"));
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.control: a local array indexed at run time") {
    conf::check_local_array(*this, load_ptx("control"));
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.control: divergent loops with continue and break and return") {
    conf::check_divergent(*this, load_ptx("control"));
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.control: a 3D grid of 3D blocks writes its linear indices") {
    const CUfunction f = function(load_ptx("control"), "index_3d");
    const Dim grid{3, 2, 2};
    const Dim block{5, 3, 2};
    const std::size_t n = 12 * 30;
    const CUdeviceptr dlinear = zeros<unsigned>(n, 0xffffffffu);
    const CUdeviceptr dcoords = zeros<unsigned>(n, 0xffffffffu);
    run(f, grid, block, 0, dlinear, dcoords);
    std::vector<unsigned> linear(n), coords(n);
    for (unsigned bz = 0; bz < grid.z; ++bz)
      for (unsigned by = 0; by < grid.y; ++by)
        for (unsigned bx = 0; bx < grid.x; ++bx)
          for (unsigned tz = 0; tz < block.z; ++tz)
            for (unsigned ty = 0; ty < block.y; ++ty)
              for (unsigned tx = 0; tx < block.x; ++tx) {
                const unsigned b = bx + grid.x * (by + grid.y * bz);
                const unsigned g = b * 30 + tx + block.x * (ty + block.y * tz);
                linear[g] = g;
                coords[g] = (bx << 24) | (by << 20) | (bz << 16) | (tx << 8) | (ty << 4) | tz;
              }
    expect_equal(download<unsigned>(dlinear, n), linear, "linear indices");
    expect_equal(download<unsigned>(dcoords, n), coords, "coordinates");
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.control: a grid-stride loop covers every element once") {
    const CUfunction f = function(load_ptx("control"), "grid_stride_saxpy");
    constexpr int n = 10000;
    conf::Rng rng(12);
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[static_cast<std::size_t>(i)] = static_cast<float>(rng.range(-1000000, 1000000)) / 3.0f;
      y[static_cast<std::size_t>(i)] = static_cast<float>(rng.range(-1000000, 1000000)) / 7.0f;
    }
    const float a = 1.3f;
    const CUdeviceptr dx = upload(x);
    const CUdeviceptr dy = upload(y);
    run(f, {3}, {100}, 0, a, dx, dy, n);
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = std::fma(a, x[i], y[i]);  // nvcc contracts
    expect_equal(download<float>(dy, n), want, "saxpy");
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.control: dynamic shared memory with a block of 33") {
    const CUfunction f = function(load_ptx("control"), "dynamic_shared_reverse");
    constexpr int n = 100;
    constexpr unsigned block = 33;
    std::vector<int> in(n);
    std::iota(in.begin(), in.end(), 1000);
    const CUdeviceptr din = upload(in);
    const CUdeviceptr drev = zeros<int>(n);
    const CUdeviceptr drot = zeros<int>(n);
    run(f, {4}, {block}, block * 4, din, drev, drot, n);
    std::vector<int> rev(n), rot(n);
    const auto s = [&](std::size_t g) { return g < n ? in[g] : -7; };
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t base = i / block * block;
      const std::size_t l = i - base;
      rev[i] = s(base + block - 1 - l);
      rot[i] = s(base + (l + 1) % block);
    }
    expect_equal(download<int>(drev, n), rev, "reversed");
    expect_equal(download<int>(drot, n), rot, "rotated");
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.linalg: 16x16 tiled matrix multiply of 50x70 by 70x37") {
    const CUfunction f = function(load_ptx("linalg"), "matmul_tiled");
    constexpr int M = 50, N = 37, K = 70;
    conf::Rng rng(13);
    std::vector<float> A(M * K), B(K * N);
    for (float& v : A) v = static_cast<float>(rng.range(-4, 4));
    for (float& v : B) v = static_cast<float>(rng.range(-4, 4)) * 0.5f;
    const CUdeviceptr dA = upload(A);
    const CUdeviceptr dB = upload(B);
    const CUdeviceptr dC = zeros<float>(M * N, -1.0f);
    run(f, {(N + 15) / 16, (M + 15) / 16}, {16, 16}, 0, dA, dB, dC, M, N, K);
    std::vector<float> C(M * N);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) {
        float s = 0.0f;
        for (int k = 0; k < K; ++k)
          s += A[static_cast<std::size_t>(r * K + k)] * B[static_cast<std::size_t>(k * N + c)];
        C[static_cast<std::size_t>(r * N + c)] = s;
      }
    expect_equal(download<float>(dC, M * N), C, "C");
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.linalg: transpose through a padded shared tile") {
    const CUfunction f = function(load_ptx("linalg"), "transpose_padded");
    constexpr int rows = 70, cols = 45;
    std::vector<double> in(rows * cols);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i) * 1.25 - 7.0;
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<double>(in.size(), -1.0);
    run(f, {(cols + 31) / 32, (rows + 31) / 32}, {32, 8}, 0, din, dout, rows, cols);
    std::vector<double> want(in.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) want[c * rows + r] = in[r * cols + c];
    expect_equal(download<double>(dout, in.size()), want, "transposed");
  }
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.linalg: 1D stencil with a halo in dynamic shared memory") {
    const CUfunction f = function(load_ptx("linalg"), "stencil_1d");
    constexpr int n = 1000;
    conf::Rng rng(14);
    std::vector<int> in(n);
    for (int& v : in) v = rng.range(-10000, 10000);
    const CUdeviceptr din = upload(in);
    const int w[7] = {1, -2, 3, 10, 3, -2, 1};
    std::vector<int> want(n, 0);
    for (int i = 0; i < n; ++i)
      for (int k = -3; k <= 3; ++k)
        if (i + k >= 0 && i + k < n)
          want[static_cast<std::size_t>(i)] += w[k + 3] * in[static_cast<std::size_t>(i + k)];
    for (unsigned block : {100u, 33u}) {
      const CUdeviceptr dout = zeros<int>(n);
      run(f, {(n + block - 1) / block}, {block}, (block + 6) * 4, din, dout, n);
      expect_equal(download<int>(dout, n), want, "stencil, block " + std::to_string(block));
    }
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.linalg: 2D five-point stencil with 16x12 blocks") {
    const CUfunction f = function(load_ptx("linalg"), "stencil_2d");
    constexpr int w = 50, h = 40;
    conf::Rng rng(15);
    std::vector<float> in(w * h);
    for (float& v : in) v = static_cast<float>(rng.range(-100, 100));
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<float>(in.size());
    run(f, {(w + 15) / 16, (h + 11) / 12}, {16, 12}, 0, din, dout, w, h);
    const auto at = [&](int x, int y) {
      return x >= 0 && x < w && y >= 0 && y < h ? in[static_cast<std::size_t>(y * w + x)] : 0.0f;
    };
    std::vector<float> want(in.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        want[static_cast<std::size_t>(y * w + x)] =
            4.0f * at(x, y) - at(x, y - 1) - at(x, y + 1) - at(x - 1, y) - at(x + 1, y);
    expect_equal(download<float>(dout, in.size()), want, "laplacian");
  }
}
