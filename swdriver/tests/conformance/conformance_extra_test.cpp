// Kernel conformance: indirect calls and deep recursion, SIMD intrinsics, 128-bit integers,
// vector accesses, block-wide votes, more atomics, __trap and large dynamic shared memory
// (conformance/{dispatch,simd,atomics,control}.cu). Grid-wide barriers are in
// conformance_coresident_test.cpp.
#include <vector_types.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "conformance_numeric.hpp"

namespace {

using conf::Conformance;
using conf::expect_equal;
using u64 = unsigned long long;

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 s128;

// Lanes of a 32-bit word: 4 bytes or 2 halfwords, signed or not.
int lane(unsigned v, int bits, int k, bool is_signed) {
  const unsigned mask = (1u << bits) - 1u;
  const unsigned u = (v >> (bits * k)) & mask;
  if (!is_signed || (u & (1u << (bits - 1))) == 0) return static_cast<int>(u);
  return static_cast<int>(u) - static_cast<int>(1u << bits);
}
template <class F>
unsigned per_lane(unsigned x, unsigned y, int bits, bool is_signed, F f) {
  unsigned r = 0;
  const unsigned mask = (1u << bits) - 1u;
  for (int k = 0; k < 32 / bits; ++k)
    r |= (static_cast<unsigned>(f(lane(x, bits, k, is_signed), lane(y, bits, k, is_signed))) & mask)
         << (bits * k);
  return r;
}

std::vector<unsigned> simd_reference(unsigned x, unsigned y) {
  std::vector<unsigned> o(16);
  o[0] = per_lane(x, y, 8, false, [](int a, int b) { return a + b; });
  o[1] = per_lane(x, y, 16, false, [](int a, int b) { return a - b; });
  o[2] = per_lane(x, y, 8, false, [](int a, int b) { return std::abs(a - b); });
  o[3] = per_lane(x, y, 16, true, [](int a, int b) { return std::max(a, b); });
  o[4] = per_lane(x, y, 8, false, [](int a, int b) { return std::min(a, b); });
  o[5] = per_lane(x, y, 8, false, [](int a, int b) { return a > b ? 0xff : 0; });
  o[6] = per_lane(x, y, 16, false, [](int a, int b) { return a == b ? 0xffff : 0; });
  o[7] = per_lane(x, y, 8, false, [](int a, int b) { return (a + b + 1) >> 1; });
  unsigned sads = 0;
  for (int k = 0; k < 2; ++k)
    sads += static_cast<unsigned>(std::abs(lane(x, 16, k, true) - lane(y, 16, k, true)));
  o[8] = sads;
  int dp_s = 1000;
  unsigned dp_u = 7;
  for (int k = 0; k < 4; ++k) {
    dp_s += lane(x, 8, k, true) * lane(y, 8, k, true);
    dp_u += static_cast<unsigned>(lane(x, 8, k, false) * lane(y, 8, k, false));
  }
  o[9] = static_cast<unsigned>(dp_s);
  o[10] = dp_u;
  o[11] = static_cast<unsigned>(lane(x, 16, 0, true) * lane(y, 8, 0, true) +
                                lane(x, 16, 1, true) * lane(y, 8, 1, true) - 5);
  o[12] = static_cast<unsigned>(lane(x, 16, 0, false) * lane(y, 8, 2, false) +
                                lane(x, 16, 1, false) * lane(y, 8, 3, false)) +
          9u;
  o[13] = per_lane(x, y, 16, true, [](int a, int b) { return std::clamp(a + b, -32768, 32767); });
  o[14] = per_lane(x, y, 8, true, [](int a, int b) { return a <= b ? 1 : 0; });
  const auto s24 = [](unsigned v) {
    return static_cast<long long>(lane(v & 0xffffffu, 24, 0, true));
  };
  const auto mul24 = static_cast<unsigned>(static_cast<u64>(s24(x) * s24(y)));
  const auto umul24 = static_cast<unsigned>(u64{x & 0xffffffu} * (y & 0xffffffu));
  const auto umulhi = static_cast<unsigned>((u64{x} * y) >> 32);
  const auto rhadd = static_cast<unsigned>(static_cast<int>(
      (static_cast<long long>(static_cast<int>(x)) + static_cast<int>(y) + 1) >> 1));
  o[15] = mul24 ^ umul24 ^ umulhi ^ rhadd;
  return o;
}

// Host versions of dispatch.cu's operations, with wrapping arithmetic.
int wrap(long long v) { return static_cast<int>(static_cast<std::uint32_t>(v)); }
int apply_op(int which, int a, int b) {
  switch (which) {
    case 0: return wrap(static_cast<long long>(a) + b);
    case 1: return wrap(static_cast<long long>(a) - b);
    case 2: return wrap(static_cast<long long>(a) * b);
    default: return std::min(a, b);
  }
}

int run_program(const std::vector<int>& program, int acc, int i) {
  for (int code : program) {
    switch (code & 15) {
      case 0: acc = apply_op(0, acc, i); break;
      case 1: acc = apply_op(1, acc, 3); break;
      case 2: acc = apply_op(2, acc, 5); break;
      case 3: acc = apply_op(3, acc, 1000); break;
      case 4: acc ^= 0x5555; break;
      case 5: acc = acc >> 1; break;
      case 6: acc = wrap(static_cast<long long>(acc) * 3 + 1); break;
      case 7: acc = wrap(-static_cast<long long>(acc)); break;
      case 8: acc = wrap(static_cast<long long>(acc) + (code >> 4)); break;
      case 9: acc = apply_op((code >> 4) & 3, acc, i & 7); break;
      case 10: acc = acc % 1009; break;
      case 11:
        acc = wrap(static_cast<long long>(static_cast<std::uint32_t>(acc) << 3) | (acc & 7));
        break;
      default: acc = wrap(static_cast<long long>(acc) + 1); break;
    }
  }
  return acc;
}

// Layout of atomics.cu's MoreAtomics (the half types as their bits).
struct MoreAtomics {
  std::uint32_t h2;
  std::uint16_t bf;
  std::uint16_t u16;
  unsigned dec;
  int sub;
  int block_scope;
  u64 system_scope;
  float exch;
  int exch_seen;
};

// Runs video.cu's simd_ops and checks every result.
void check_video(Conformance& t, CUfunction f) {
  std::vector<unsigned> xs{0, 0xffffffffu, 0x80808080u, 0x7fff8000u, 0x01020304u};
  std::vector<unsigned> ys{0, 1, 0x7f7f7f7fu, 0x80007fffu, 0x04030201u};
  conf::Rng rng(63);
  for (int i = 0; i < 195; ++i) {
    xs.push_back(static_cast<unsigned>(rng.next()));
    ys.push_back(static_cast<unsigned>(rng.next()));
  }
  const auto n = static_cast<int>(xs.size());
  const CUdeviceptr dx = t.upload(xs);
  const CUdeviceptr dy = t.upload(ys);
  const CUdeviceptr dout = t.zeros<unsigned>(16 * xs.size());
  t.run(f, {2}, {100}, 0, dx, dy, dout, n);
  std::vector<unsigned> want;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto r = simd_reference(xs[i], ys[i]);
    want.insert(want.end(), r.begin(), r.end());
  }
  expect_equal(t.download<unsigned>(dout, want.size()), want, "simd (16 results per input)");
}

}  // namespace

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.dispatch: virtual functions on objects built in the kernel") {
    const CUfunction f = function(load_ptx("dispatch"), "virtual_calls");
    constexpr int n = 200;
    conf::Rng rng(60);
    std::vector<int> kinds(n);
    for (int& k : kinds) k = rng.range(0, 100);
    const CUdeviceptr dkinds = upload(kinds);
    const CUdeviceptr dareas = zeros<int>(n);
    const CUdeviceptr dsides = zeros<int>(n);
    run(f, {4}, {50}, 0, dkinds, dareas, dsides, n);
    std::vector<int> areas(n), sides(n);
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      switch (kinds[k] % 3) {
        case 0:
          areas[k] = (i % 7 + 1) * (i % 5 + 2);
          sides[k] = 4;
          break;
        case 1:
          areas[k] = (i % 9 + 2) * (i % 4 + 2) / 2;
          sides[k] = 3;
          break;
        default:
          areas[k] = (i % 6 + 1) * (i % 6 + 1) + 1;
          sides[k] = 4;
          break;
      }
    }
    expect_equal(download<int>(dareas, n), areas, "areas");
    expect_equal(download<int>(dsides, n), sides, "sides");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.dispatch: function pointers from a device table and a switch") {
    const CUfunction f = function(load_ptx("dispatch"), "function_pointers");
    conf::Rng rng(61);
    std::vector<int> program(60);
    for (int& c : program) c = rng.range(0, 255);
    constexpr int n = 256;
    std::vector<int> inputs(n);
    for (int& v : inputs) v = rng.range(-100000, 100000);
    const CUdeviceptr dprogram = upload(program);
    const CUdeviceptr dinputs = upload(inputs);
    const CUdeviceptr dout = zeros<int>(n);
    run(f, {2}, {128}, 0, dprogram, static_cast<int>(program.size()), dinputs, dout, n);
    std::vector<int> want(n);
    for (int i = 0; i < n; ++i)
      want[static_cast<std::size_t>(i)] =
          run_program(program, inputs[static_cast<std::size_t>(i)], i);
    expect_equal(download<int>(dout, n), want, "program results");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.dispatch: recursion with arrays in every frame") {
    const CUmodule m = load_ptx("dispatch");
    // Room for the frames (on a GPU too): 64 KiB of stack per thread.
    std::size_t saved_stack = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetLimit(&saved_stack, CU_LIMIT_STACK_SIZE));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 64 * 1024));
    constexpr int per_thread = 64, threads = 50;
    const std::vector<int> data = [] {
      conf::Rng rng(62);
      std::vector<int> v(per_thread * threads);
      for (int& x : v) x = rng.range(-1000, 1000);
      return v;
    }();
    const CUdeviceptr ddata = upload(data);
    run(function(m, "recursive_sort"), {2}, {25}, 0, ddata, per_thread, threads);
    std::vector<int> want = data;
    for (int t = 0; t < threads; ++t)
      std::sort(want.begin() + t * per_thread, want.begin() + (t + 1) * per_thread);
    expect_equal(download<int>(ddata, data.size()), want, "sorted runs");

    constexpr int n = 64;
    std::vector<int> depth(n);
    for (int i = 0; i < n; ++i) depth[static_cast<std::size_t>(i)] = (i * 37) % 300;
    const CUdeviceptr ddepth = upload(depth);
    const CUdeviceptr dsum = zeros<int>(n);
    run(function(m, "deep_recursion"), {2}, {32}, 0, ddepth, dsum, n);
    std::vector<int> sums(n);
    for (std::size_t i = 0; i < n; ++i) sums[i] = depth[i] * (depth[i] + 1) / 2;
    expect_equal(download<int>(dsum, n), sums, "recursive sums");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, saved_stack));
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.video: SIMD-in-a-word dp4a dp2a and 24-bit intrinsics") {
    check_video(*this, function(load_ptx("video"), "simd_ops"));
  }
  TEST_CASE_FIXTURE(Conformance, "conformance.video: the same kernel compiled for compute_80") {
    check_video(*this, function(load_ptx("video_80"), "simd_ops"));
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.simd: 128-bit integer arithmetic") {
    const CUfunction f = function(load_ptx("simd"), "int128_ops");
    constexpr int n = 100;
    conf::Rng rng(64);
    std::vector<u64> a(2 * n), b(2 * n);
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = rng.next();
      b[i] = rng.next() >> (i % 5 == 0 ? 40 : 0);
    }
    const CUdeviceptr da = upload(a);
    const CUdeviceptr db = upload(b);
    const CUdeviceptr dout = zeros<u64>(10 * n);
    run(f, {1}, {n}, 0, da, db, dout, n);
    std::vector<u64> want;
    for (std::size_t i = 0; i < n; ++i) {
      const u128 x = (static_cast<u128>(a[2 * i + 1]) << 64) | a[2 * i];
      const u128 y = (static_cast<u128>(b[2 * i + 1]) << 64) | b[2 * i];
      const u128 r[5] = {x * y, x + y, x - y, x / ((y >> 70) | 1),
                         static_cast<u128>(static_cast<s128>(x) >> (b[2 * i] & 127))};
      for (const u128 v : r) {
        want.push_back(static_cast<u64>(v));
        want.push_back(static_cast<u64>(v >> 64));
      }
    }
    expect_equal(download<u64>(dout, want.size()), want, "int128 (10 words per input)");
  }

  TEST_CASE_FIXTURE(
      Conformance,
      "conformance.simd: vector loads and stores of float4 int4 double2 char4 short2") {
    const CUfunction f = function(load_ptx("simd"), "vector_access");
    constexpr int n = 150;
    conf::Rng rng(65);
    std::vector<float4> fin(n);
    std::vector<int4> vin(n);
    std::vector<double2> din(n);
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      fin[k] = float4{static_cast<float>(rng.range(-1000, 1000)) / 8.0f,
                      static_cast<float>(rng.range(-1000, 1000)) / 16.0f,
                      static_cast<float>(rng.range(-1000, 1000)), static_cast<float>(i)};
      vin[k] = int4{rng.range(-100000, 100000), rng.range(-100000, 100000),
                    rng.range(-30000, 30000), rng.range(-30000, 30000)};
      din[k] = double2{static_cast<double>(rng.range(-1000, 1000)) / 3.0, 1.0 / (i + 1)};
    }
    const CUdeviceptr dfin = upload(fin);
    const CUdeviceptr dvin = upload(vin);
    const CUdeviceptr ddin = upload(din);
    const CUdeviceptr dfo = zeros<float4>(n);
    const CUdeviceptr dvo = zeros<int4>(n);
    const CUdeviceptr ddo = zeros<double2>(n);
    const CUdeviceptr dco = zeros<char4>(n);
    const CUdeviceptr dso = zeros<short2>(n);
    run(f, {2}, {100}, 0, dfin, dvin, ddin, dfo, dvo, ddo, dco, dso, n);
    const auto fo = download<float4>(dfo, n);
    const auto vo = download<int4>(dvo, n);
    const auto dout = download<double2>(ddo, n);
    const auto co = download<char4>(dco, n);
    const auto so = download<short2>(dso, n);
    std::vector<float> fgot, fwant;
    std::vector<int> igot, iwant;
    std::vector<double> dgot, dwant;
    for (std::size_t k = 0; k < n; ++k) {
      const float4 a = fin[k];
      const int4 b = vin[k];
      const double2 c = din[k];
      const float fw[4] = {a.w, a.x * 2.0f, a.y - a.z, a.x + a.w};
      const float fg[4] = {fo[k].x, fo[k].y, fo[k].z, fo[k].w};
      fwant.insert(fwant.end(), std::begin(fw), std::end(fw));
      fgot.insert(fgot.end(), std::begin(fg), std::end(fg));
      const int iw[10] = {b.x + b.y,
                          b.y ^ b.z,
                          b.z * b.w,
                          b.w - b.x,
                          static_cast<signed char>(b.x),
                          static_cast<signed char>(b.y >> 8),
                          static_cast<signed char>(-b.z),
                          static_cast<signed char>(k),
                          static_cast<short>(b.w),
                          static_cast<short>(b.x >> 16)};
      const int ig[10] = {vo[k].x, vo[k].y, vo[k].z, vo[k].w, co[k].x,
                          co[k].y, co[k].z, co[k].w, so[k].x, so[k].y};
      iwant.insert(iwant.end(), std::begin(iw), std::end(iw));
      igot.insert(igot.end(), std::begin(ig), std::end(ig));
      dwant.push_back(c.y);
      dwant.push_back(c.x * c.y);
      dgot.push_back(dout[k].x);
      dgot.push_back(dout[k].y);
    }
    expect_equal(fgot, fwant, "float4 results");
    expect_equal(igot, iwant, "int4 char4 short2 results");
    expect_equal(dgot, dwant, "double2 results");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.simd: syncthreads_count and votes in a 10x10 block") {
    const CUfunction f = function(load_ptx("simd"), "block_votes");
    constexpr unsigned threads = 100, blocks = 3;
    conf::Rng rng(66);
    std::vector<int> in(threads * blocks);
    for (int& v : in) v = rng.range(-45, 40);
    in[17] = 42;            // block 0: some 42, all above -50
    in[threads + 5] = -55;  // block 1: no 42, one below -50
    in[2 * threads + 99] = 42;
    in[2 * threads + 98] = -60;
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<int>(7 * in.size());
    run(f, {blocks}, {10, 10}, 0, din, dout);
    const std::vector<int> got = download<int>(dout, 7 * in.size());
    std::vector<int> want(got.size());
    for (unsigned b = 0; b < blocks; ++b) {
      const int* v = &in[b * threads];
      int count = 0;
      bool all = true, any = false;
      for (unsigned t = 0; t < threads; ++t) {
        count += v[t] > 0 ? 1 : 0;
        all = all && v[t] > -50;
        any = any || v[t] == 42;
      }
      for (unsigned t = 0; t < threads; ++t) {
        const unsigned warp = t / 32, l = t % 32;
        const unsigned lanes = std::min(32u, threads - warp * 32);
        const unsigned existing = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
        int* w = &want[7 * (b * threads + t)];
        const int* g = &got[7 * (b * threads + t)];
        // __activemask: at least this lane, only lanes that exist; the ballot and the sum are
        // over the lanes it names.
        const auto active = static_cast<unsigned>(g[3]);
        const bool plausible = (active >> l & 1u) != 0 && (active & ~existing) == 0;
        unsigned ballot = 0, sum = 0;
        for (unsigned k = 0; k < 32; ++k)
          if (active >> k & 1u) {
            ballot |= static_cast<unsigned>(v[warp * 32 + k] & 1) << k;
            sum += static_cast<unsigned>(v[warp * 32 + k]);
          }
        w[0] = count;
        w[1] = all ? 1 : 0;
        w[2] = any ? 1 : 0;
        w[3] = plausible ? g[3] : static_cast<int>(existing);
        w[4] = static_cast<int>(ballot);
        w[5] = static_cast<int>(l);
        w[6] = static_cast<int>(sum);
      }
    }
    expect_equal(got, want, "block votes (7 per thread)");
  }

  TEST_CASE_FIXTURE(
      Conformance,
      "conformance.atomics: shared double half2 bfloat16 16-bit CAS and scoped atomics") {
    const CUfunction f = function(load_ptx("atomics"), "atomics_more");
    constexpr int n = 1000;
    constexpr unsigned block = 128, grid = 8;
    conf::Rng rng(67);
    std::vector<int> values(n);
    for (int& v : values) v = rng.range(-500, 500);
    MoreAtomics init{};
    init.exch = -1.0f;
    const CUdeviceptr dvalues = upload(values);
    const CUdeviceptr dr = upload(std::vector<MoreAtomics>{init});
    const CUdeviceptr dsums = zeros<double>(grid, -1.0);
    run(f, {grid}, {block}, 0, dvalues, n, dr, dsums);
    std::vector<double> sums(grid, 0.0);
    for (int i = 0; i < n; ++i)
      sums[static_cast<std::size_t>(i) / block] += values[static_cast<std::size_t>(i)] * 0.25;
    expect_equal(download<double>(dsums, grid), sums, "shared-memory double sums");
    const MoreAtomics r = download<MoreAtomics>(dr, 1)[0];
    double bf = 0.0;
    unsigned dec = 0;
    int sub = 0;
    u64 system = 0;
    for (int v : values) {
      bf = conf::to_bf16(bf + 2.0);  // stops at 512: 514 rounds back to even
      dec = (dec == 0 || dec > 1000) ? 1000 : dec - 1;
      sub -= v;
      system += static_cast<u64>(v & 0xff);
    }
    CHECK(r.h2 == (conf::half_bits(1000.0) | (conf::half_bits(500.0) << 16)));
    CHECK(r.bf == conf::bf16_bits(bf));
    CHECK(r.u16 == 3 * n);
    CHECK(r.dec == dec);
    CHECK(r.sub == sub);
    CHECK(r.block_scope == n);
    CHECK(r.system_scope == system);
    CHECK(r.exch >= 0.0f);
    CHECK(r.exch < static_cast<float>(n));
    CHECK(r.exch == std::floor(r.exch));
    CHECK(r.exch_seen == 1);
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.atomics: the last block to finish adds the partial sums") {
    const CUfunction f = function(load_ptx("atomics"), "last_block_sum");
    constexpr int n = 5000;
    constexpr unsigned block = 256, grid = (n + block - 1) / block;
    conf::Rng rng(68);
    std::vector<float> in(n);
    for (float& v : in) v = static_cast<float>(rng.range(-100, 100));
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dpartials = zeros<float>(grid);
    const CUdeviceptr dtickets = zeros<unsigned>(1);
    const CUdeviceptr dtotal = zeros<float>(1);
    std::vector<float> partials(grid, 0.0f);
    for (std::size_t i = 0; i < n; ++i) partials[i / block] += in[i];
    const float total = std::accumulate(partials.begin(), partials.end(), 0.0f);
    for (int round = 0; round < 2; ++round) {
      run(f, {grid}, {block}, 0, din, dpartials, dtickets, dtotal, n);
      expect_equal(download<float>(dpartials, grid), partials, "partials");
      expect_equal(download<float>(dtotal, 1), std::vector<float>{total}, "total");
      expect_equal(download<unsigned>(dtickets, 1), std::vector<unsigned>{0}, "tickets reset");
    }
  }

  TEST_CASE_FIXTURE(
      Conformance,
      "conformance.control: more than 48 KiB of dynamic shared memory after opting in") {
    const CUfunction f = function(load_ptx("control"), "large_dynamic_shared");
    constexpr int count = 20000;
    constexpr unsigned bytes = count * 4, block = 128, grid = 2;
    const CUdeviceptr dout = zeros<int>(grid * block);
    SWCU_TEST_CHECK_RESULT(launch(f, {grid}, {block}, bytes, dout, count),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuFuncSetAttribute(
        f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)));
    run(f, {grid}, {block}, bytes, dout, count);
    std::vector<int> want(grid * block);
    for (unsigned b = 0; b < grid; ++b)
      for (unsigned t = 0; t < block; ++t) {
        long long sum = 0;
        for (int k = static_cast<int>(t); k < count; k += block)
          sum += (count - 1 - k) * 7 + static_cast<int>(b);
        want[b * block + t] = static_cast<int>(sum);
      }
    expect_equal(download<int>(dout, want.size()), want, "sums");
  }

  TEST_CASE_FIXTURE(
      Conformance,
      "conformance.control: __trap makes the launch fail with CUDA_ERROR_LAUNCH_FAILED") {
    const CUfunction f = function(load_ptx("control"), "trap_kernel");
    const CUdeviceptr dout = zeros<int>(64);
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, {1}, {64}, 0, dout, 5));
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    // The error is sticky: the context is unusable. Destroy it (with everything in it).
    SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
  }
}
