// Kernel conformance: atomics, parameters, __constant__ and __device__ variables, device printf
// and assert (conformance/{atomics,io}.cu).
#include <vector_types.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>

#include "conformance_support.hpp"

namespace {

using conf::Conformance;
using conf::expect_equal;

// The layouts of atomics.cu's AtomicResults and io.cu's Mixed.
struct AtomicResults {
  float fsum;
  float fmul;
  double dsum;
  unsigned long long llsum;
  long long llmax;
  long long llmin;
  int imin;
  int imax;
  int iand;
  int ior;
  int ixor;
  unsigned wrap;
  double dmax;
  int exch_count;
  int cas_winner;
};

struct Mixed {
  char c;
  double d;
  short s;
  int i;
  float f;
  long long ll;
  unsigned char u8;
  float3 v;
  unsigned short us;
  int2 pair;
};

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance, "conformance.atomics: histogram with shared then global atomics") {
    const CUfunction f = function(load_ptx("atomics"), "histogram");
    constexpr int n = 20000;
    conf::Rng rng(20);
    std::vector<unsigned char> data(n);
    for (auto& b : data) b = static_cast<unsigned char>(rng.next() % 251);
    const CUdeviceptr ddata = upload(data);
    for (int bins : {64, 256, 7}) {
      const auto ubins = static_cast<std::size_t>(bins);
      const CUdeviceptr dhist = zeros<unsigned>(ubins);
      run(f, {7}, {100}, static_cast<unsigned>(bins) * 4, ddata, n, dhist, bins);
      std::vector<unsigned> want(ubins, 0);
      for (unsigned char b : data) ++want[b % ubins];
      expect_equal(download<unsigned>(dhist, ubins), want, "histogram of " + std::to_string(bins));
    }
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.atomics: float double and 64-bit atomics and CAS loops") {
    const CUfunction f = function(load_ptx("atomics"), "atomics_mixed");
    constexpr int n = 1000;
    conf::Rng rng(21);
    std::vector<int> values(n);
    for (int& v : values) v = rng.range(-5000, 5000);
    AtomicResults init{};
    init.fmul = 1.0f;
    init.llmax = LLONG_MIN;
    init.llmin = LLONG_MAX;
    init.imin = INT_MAX;
    init.imax = INT_MIN;
    init.iand = -1;
    init.dmax = -1e300;
    init.cas_winner = -1;
    const CUdeviceptr dvalues = upload(values);
    const CUdeviceptr dr = upload(std::vector<AtomicResults>{init});
    const CUdeviceptr dslots = zeros<int>(4 + n, -1);
    run(f, {10}, {100}, 0, dvalues, n, dr, dslots);
    const AtomicResults r = download<AtomicResults>(dr, 1)[0];
    AtomicResults w = init;
    for (int v : values) {
      w.fsum += static_cast<float>(v);  // integers: exact in any order
      w.dsum += static_cast<double>(v) * 0.5;
      w.llsum += static_cast<unsigned long long>(static_cast<long long>(v)) << 33;
      w.llmax = std::max(w.llmax, static_cast<long long>(v) * -1000000007LL);
      w.llmin = std::min(w.llmin, static_cast<long long>(v) * 3000000000LL);
      w.imin = std::min(w.imin, v);
      w.imax = std::max(w.imax, v);
      w.iand &= ~(1 << (v & 31));
      w.ior |= 1 << (v & 31);
      w.ixor ^= v;
      w.dmax = std::max(w.dmax, static_cast<double>(v) / 7.0);
    }
    w.wrap = n % 17;    // atomicInc(16) counts 0..16 and wraps
    w.fmul = 65536.0f;  // 16 threads (i % 64 == 0) double it
    w.exch_count = 1;
    CHECK(r.fsum == w.fsum);
    CHECK(r.dsum == w.dsum);
    CHECK(r.llsum == w.llsum);
    CHECK(r.llmax == w.llmax);
    CHECK(r.llmin == w.llmin);
    CHECK(r.imin == w.imin);
    CHECK(r.imax == w.imax);
    CHECK(r.iand == w.iand);
    CHECK(r.ior == w.ior);
    CHECK(r.ixor == w.ixor);
    CHECK(r.wrap == w.wrap);
    CHECK(r.dmax == w.dmax);
    CHECK(r.fmul == w.fmul);
    CHECK(r.exch_count == w.exch_count);
    CHECK(r.cas_winner >= 0);
    CHECK(r.cas_winner < n);
    // atomicExch: per slot, the values handed back and the final value form one chain: each
    // thread's id appears exactly once among (returned values of the slot's threads, final
    // value), plus the initial -1.
    const std::vector<int> slots = download<int>(dslots, 4 + n);
    for (int s = 0; s < 4; ++s) {
      std::vector<int> seen{slots[static_cast<std::size_t>(s)]};
      std::vector<int> want{-1};
      for (int i = s; i < n; i += 4) {
        seen.push_back(slots[static_cast<std::size_t>(4 + i)]);
        want.push_back(i);
      }
      std::sort(seen.begin(), seen.end());
      expect_equal(seen, want, "exchange chain of slot " + std::to_string(s));
    }
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.io: a struct with mixed members passed by value") {
    const CUfunction f = function(load_ptx("io"), "struct_param");
    Mixed m{};
    m.c = -5;
    m.d = 3.25;
    m.s = -1234;
    m.i = 987654321;
    m.f = 2.5f;
    m.ll = -1234567890123LL;
    m.u8 = 250;
    m.v = float3{1.0f, 2.0f, 3.0f};
    m.us = 65000;
    m.pair = int2{-7, 300000};
    const CUdeviceptr dout = zeros<long long>(10);
    const CUdeviceptr decho = upload(std::vector<Mixed>{Mixed{}});
    run(f, {1}, {10}, 0, m, dout, decho);
    const std::vector<long long> want{-5,  3250, -1234, 987654321, 40, -1234567890123LL,
                                      250, 321,  65000, -2100000};
    expect_equal(download<long long>(dout, 10), want, "members");
    const Mixed e = download<Mixed>(decho, 1)[0];
    CHECK(e.c == m.c);
    CHECK(e.d == m.d);
    CHECK(e.s == m.s);
    CHECK(e.i == m.i);
    CHECK(e.f == m.f);
    CHECK(e.ll == m.ll);
    CHECK(e.u8 == m.u8);
    CHECK(e.v.x == m.v.x);
    CHECK(e.v.y == m.v.y);
    CHECK(e.v.z == m.v.z);
    CHECK(e.us == m.us);
    CHECK(e.pair.x == m.pair.x);
    CHECK(e.pair.y == m.pair.y);
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.io: scalar parameters of every size") {
    const CUfunction f = function(load_ptx("io"), "scalar_params");
    const char c = 'z';
    const double d = -0.125;
    const short s = -300;
    const float fl = 1.75f;
    const long long ll = 1LL << 50;
    const unsigned char u8 = 200;
    const int2 v{10, 3};
    const bool flag = true;
    const unsigned u = 4000000000u;
    const CUdeviceptr dout = zeros<double>(9);
    run(f, {1}, {9}, 0, c, d, s, fl, ll, u8, v, flag, u, dout);
    const std::vector<double> want{122.0, -0.125, -300.0, 1.75,        1125899906842624.0,
                                   200.0, 7.0,    1.0,    4000000000.0};
    expect_equal(download<double>(dout, 9), want, "parameters");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.io: constant memory set through cuModuleGetGlobal") {
    const CUmodule m = load_ptx("io");
    const CUfunction f = function(m, "constant_memory");
    CUdeviceptr dcoef = 0, doffset = 0;
    std::size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuModuleGetGlobal(&dcoef, &bytes, m, "coefficients"));
    CHECK(bytes == 64);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetGlobal(&doffset, &bytes, m, "offset"));
    CHECK(bytes == 4);
    std::vector<float> coef(16);
    for (std::size_t k = 0; k < 16; ++k) coef[k] = static_cast<float>(k) * 0.5f - 3.0f;
    const int offset = -17;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(dcoef, coef.data(), 64));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(doffset, &offset, 4));
    constexpr int n = 333;
    std::vector<float> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) * 0.25f;
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<float>(n);
    run(f, {4}, {100}, 0, din, dout, n);
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i)
      want[i] = std::fma(in[i], coef[i % 16], static_cast<float>(offset));  // contracted
    expect_equal(download<float>(dout, n), want, "scaled by constants");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.io: initialized device globals are read and updated") {
    const CUmodule m = load_ptx("io");
    const CUfunction f = function(m, "device_globals");
    CUdeviceptr dhits = 0;
    std::size_t bytes = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetGlobal(&dhits, &bytes, m, "hits"));
    CHECK(bytes == 8);
    constexpr int n = 77;
    const CUdeviceptr dout = zeros<int>(n);
    run(f, {3}, {33}, 0, dout, n);
    const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
    std::vector<int> want(n);
    for (std::size_t i = 0; i < n; ++i)
      want[i] = static_cast<int>(table[i % 8] * 2.5) + table[(i + 3) % 8];
    expect_equal(download<int>(dout, n), want, "table lookups");
    CHECK(download<unsigned long long>(dhits, 1)[0] == 1000 + n);
    CUdeviceptr dscale = 0;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetGlobal(&dscale, &bytes, m, "scale"));
    CHECK(download<double>(dscale, 1)[0] == 2.5);
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.io: device printf output appears by cuCtxSynchronize") {
    const CUfunction f = function(load_ptx("io"), "device_printf");
    const CUdeviceptr dword = upload(std::vector<char>{'w', 'o', 'r', 'd', '\0'});
    conf::FdCapture capture(1);
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, {2}, {40}, 0, 12, 0.5, dword));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    const std::string text = capture.finish();
    std::vector<std::string> want;
    for (int b = 0; b < 2; ++b)
      for (int t = 0; t < 4; ++t) {
        char line[200];
        std::snprintf(line, sizeof line,
                      "conf block=%d thread=%d v=%d hex=%x ll=%lld f=%.3f s=%s c=%c", b, t, 12 + t,
                      12 * 16 + 10, 12LL * 1000000007LL, 0.5 * t, "word", 'A' + t);
        want.emplace_back(line);
      }
    std::sort(want.begin(), want.end());
    const std::vector<std::string> got = sorted_lines(text);
    REQUIRE_MESSAGE(got.size() == want.size(), text);
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i] == want[i]);
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.io: a failed device assert reports 710 and the expression") {
    const CUfunction f = function(load_ptx("io"), "device_assert");
    constexpr int n = 100;
    std::vector<int> in(n);
    std::iota(in.begin(), in.end(), 0);
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<int>(n);
    swcu::test::StderrCapture capture;
    const CUresult launched = launch(f, {4}, {25}, 0, din, dout, n);
    const CUresult synced = cu.cuCtxSynchronize();
    const std::string text = capture.finish();
    SWCU_TEST_CHECK_RESULT(launched, CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(synced, CUDA_ERROR_ASSERT);
    CHECK_MESSAGE(text.find("Assertion") != std::string::npos, text);
    CHECK_MESSAGE(text.find("in[i] != 42") != std::string::npos, text);
    CHECK_MESSAGE(text.find("io.cu") != std::string::npos, text);
    CHECK_MESSAGE(text.find("block: [1,0,0], thread: [17,0,0]") != std::string::npos, text);
    // The context is unusable: destroy it (with everything in it).
    SWCU_TEST_CHECK_RESULT(cu.cuCtxDestroy_v2(ctx), CUDA_SUCCESS);
    ctx = swcu::test::create_context();
    forget();
  }
}
