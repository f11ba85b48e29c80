// Kernel conformance with the rest of the driver around the kernels: generic addressing, cache
// hints, the device heap, clocks, printf formats, host-mapped and managed memory, parameter
// buffers, streams and events, and graphs captured from streams (conformance/{mem,io,control}.cu).
#include <vector_types.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "conformance_numeric.hpp"
#include "graph_support.hpp"

namespace {

using conf::Conformance;
using conf::expect_equal;

// io.cu's Mixed.
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

std::vector<float> saxpy(float a, const std::vector<float>& x, std::vector<float> y) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::fma(a, x[i], y[i]);  // nvcc contracts
  return y;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  conf::Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.range(-1000000, 1000000)) / 997.0f;
  return v;
}

}  // namespace

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(
      Conformance,
      "conformance.mem: generic pointers into shared local global and constant memory") {
    const CUfunction f = function(load_ptx("mem"), "generic_spaces");
    constexpr unsigned block = 64;
    std::vector<int> global(block);
    std::iota(global.begin(), global.end(), 1000);
    const CUdeviceptr dglobal = upload(global);
    const CUdeviceptr dout = zeros<unsigned>(8 * block);
    run(f, {1}, {block}, 0, dglobal, dout);
    std::vector<int> gwant(block);
    std::vector<unsigned> want(8 * block);
    for (unsigned t = 0; t < block; ++t) {
      gwant[t] = static_cast<int>(1000 + t + t * 10 + 1);
      const unsigned w[8] = {1, 2, 4, 8, 1, t * 10 + 1, t % 4 + 100, 5};
      std::copy(std::begin(w), std::end(w), want.begin() + 8 * t);
    }
    expect_equal(download<int>(dglobal, block), gwant, "global data");
    // Constant variables live in global memory on a GPU: whether isspacep.global is true for a
    // constant address, and isspacep.const for a global one, is left open (bits 1 and 8).
    std::vector<unsigned> got = download<unsigned>(dout, want.size());
    for (unsigned t = 0; t < block; ++t) {
      unsigned& global_bits = got[8 * t];
      unsigned& constant_bits = got[8 * t + 3];
      if ((global_bits & 1u) != 0) global_bits &= ~8u;
      if ((constant_bits & 8u) != 0) constant_bits &= ~1u;
    }
    expect_equal(got, want, "space tests and values (8 per thread)");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mem: every cache-hinted load and store") {
    const CUfunction f = function(load_ptx("mem"), "cache_hints");
    constexpr int n = 400;
    conf::Rng rng(70);
    std::vector<int> in(n);
    for (int& v : in) v = rng.range(-100000, 100000);
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<int>(n);
    const CUdeviceptr ds[4] = {zeros<int>(n), zeros<int>(n), zeros<int>(n), zeros<int>(n)};
    run(f, {4}, {100}, 0, din, dout, ds[0], ds[1], ds[2], ds[3], n);
    std::vector<int> out(n), s1(n), s2(n), s3(n), s4(n);
    for (int i = 0; i < n; ++i) {
      const auto at = [&](int k) { return in[static_cast<std::size_t>(k % n)]; };
      const auto k = static_cast<std::size_t>(i);
      out[k] = at(i) + 2 * at(i + 1) + 3 * at(i + 2) + 4 * at(i + 3) + 5 * at(i + 4) +
               6 * at(i + 5) + in[static_cast<std::size_t>(4 * (i % (n / 4)) + 1)];
      s1[k] = at(i) ^ at(i + 1);
      s2[k] = at(i + 2) - at(i + 3);
      s3[k] = at(i + 4) * 3;
      s4[k] = at(i + 5) + 1;
    }
    expect_equal(download<int>(dout, n), out, "loads");
    expect_equal(download<int>(ds[0], n), s1, "st.wb");
    expect_equal(download<int>(ds[1], n), s2, "st.cg");
    expect_equal(download<int>(ds[2], n), s3, "st.cs");
    expect_equal(download<int>(ds[3], n), s4, "st.wt");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.mem: device malloc free new and delete") {
    const CUfunction f = function(load_ptx("mem"), "device_heap");
    constexpr int n = 100;
    conf::Rng rng(71);
    std::vector<int> counts(n);
    for (int& c : counts) c = rng.range(1, 50);
    const CUdeviceptr dcounts = upload(counts);
    const CUdeviceptr dout = zeros<long long>(n);
    run(f, {2}, {50}, 0, dcounts, dout, n);
    std::vector<long long> want(n);
    for (int i = 0; i < n; ++i) {
      const long long c = counts[static_cast<std::size_t>(i)];
      want[static_cast<std::size_t>(i)] = static_cast<long long>(i) * c * (c - 1) / 2 + c + 7;
    }
    expect_equal(download<long long>(dout, n), want, "sums");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.mem: clock64 and globaltimer do not go back across nanosleep") {
    const CUfunction f = function(load_ptx("mem"), "clocks");
    const CUdeviceptr dout = zeros<unsigned long long>(64, 7);
    run(f, {1}, {32}, 0, dout);
    expect_equal(download<unsigned long long>(dout, 64), std::vector<unsigned long long>(64, 1),
                 "monotonic");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.io: printf conversions flags widths and precisions") {
    const CUfunction f = function(load_ptx("io"), "printf_formats");
    const double d = 1234.56789;
    const float fl = -0.1f;
    const long long ll = -1234567890123LL;
    const unsigned u = 0xdeadbeefu;
    const CUdeviceptr dword = upload(std::vector<char>{'c', 'u', 'w', 'r', 'a', 'p', '\0'});
    conf::FdCapture capture(1);
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, {1}, {1}, 0, d, fl, ll, u, dword));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    const std::string got = capture.finish();
    const char* s = "cuwrap";
    const double fd = fl;
    const double inf = HUGE_VAL;
    char buffer[2048];
    int at = 0;
    const auto add = [&](int written) {
      REQUIRE(written > 0);
      at += written;
    };
    add(std::snprintf(buffer + at, sizeof buffer - at, "[%d|%5d|%-5d|%05d|%+d|% d]\n", -42, 42, 42,
                      42, 42, 42));
    add(std::snprintf(buffer + at, sizeof buffer - at, "[%u|%x|%X|%#x|%o|%#o|%08x]\n", u, u, u, u,
                      u, u, u));
    add(std::snprintf(buffer + at, sizeof buffer - at, "[%lld|%llu|%llx|%ld|%hd|%hhd]\n", ll,
                      static_cast<unsigned long long>(ll), static_cast<unsigned long long>(ll),
                      static_cast<long>(ll), static_cast<short>(ll), static_cast<signed char>(ll)));
    add(std::snprintf(buffer + at, sizeof buffer - at, "[%f|%.0f|%.10f|%12.4f|%-12.2f|%+.3f]\n", d,
                      d, d, d, d, d));
    add(std::snprintf(buffer + at, sizeof buffer - at, "[%e|%.2e|%E|%g|%G|%.3g|%g|%g]\n", d, d, d,
                      d, d * 1e-10, d, 1e20, 0.0001));
    add(std::snprintf(buffer + at, sizeof buffer - at, "[%f|%g|%f|%f]\n", fd, fd, inf, -inf));
    add(std::snprintf(buffer + at, sizeof buffer - at, "[%s|%10s|%-10s|%.2s|%c|%%]\n", s, s, s, s,
                      s[0]));
    add(std::snprintf(buffer + at, sizeof buffer - at, "no arguments at all\n"));
    const std::string want(buffer, static_cast<std::size_t>(at));
    CHECK(got == want);
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.memory: kernels on host-mapped and managed memory") {
    const CUfunction f = function(load_ptx("control"), "grid_stride_saxpy");
    constexpr int n = 3000;
    const std::vector<float> x = random_floats(n, 73);
    const std::vector<float> y = random_floats(n, 74);
    const float a = -2.25f;
    const CUdeviceptr dx = upload(x);
    // Host-mapped (pinned) memory, reached through its device pointer.
    void* host = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemHostAlloc(&host, n * sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP));
    std::memcpy(host, y.data(), n * sizeof(float));
    CUdeviceptr dhost = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostGetDevicePointer_v2(&dhost, host, 0));
    run(f, {5}, {128}, 0, a, dx, dhost, n);
    std::vector<float> got(n);
    std::memcpy(got.data(), host, n * sizeof(float));
    expect_equal(got, saxpy(a, x, y), "host-mapped y");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(host));
    // Managed memory, written and read by the host directly.
    CUdeviceptr managed = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemAllocManaged(&managed, n * sizeof(float), CU_MEM_ATTACH_GLOBAL));
    auto* m = reinterpret_cast<float*>(static_cast<std::uintptr_t>(managed));
    std::copy(y.begin(), y.end(), m);
    run(f, {5}, {128}, 0, a, dx, managed, n);
    expect_equal(std::vector<float>(m, m + n), saxpy(a, x, y), "managed y");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(managed));
  }

  TEST_CASE_FIXTURE(
      Conformance,
      "conformance.io: parameters passed as one buffer with CU_LAUNCH_PARAM_BUFFER_POINTER") {
    const CUfunction f = function(load_ptx("io"), "struct_param");
    Mixed m{};
    m.c = 9;
    m.d = -1.5;
    m.s = 4321;
    m.i = -5;
    m.f = 0.25f;
    m.ll = 77;
    m.u8 = 3;
    m.v = float3{4.0f, 5.0f, 6.0f};
    m.us = 1;
    m.pair = int2{11, 12};
    const CUdeviceptr dout = zeros<long long>(10);
    const CUdeviceptr decho = upload(std::vector<Mixed>{Mixed{}});
    const auto params = layout(f);
    REQUIRE(params.size() == 3);
    CHECK(params[0] == std::pair<std::size_t, std::size_t>{0, sizeof(Mixed)});
    std::vector<unsigned char> buffer(params[2].first + params[2].second, 0xcc);
    std::memcpy(buffer.data() + params[0].first, &m, sizeof m);
    std::memcpy(buffer.data() + params[1].first, &dout, sizeof dout);
    std::memcpy(buffer.data() + params[2].first, &decho, sizeof decho);
    std::size_t size = buffer.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &size, CU_LAUNCH_PARAM_END};
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, 10, 1, 1, 0, nullptr, nullptr, extra));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    const std::vector<long long> want{9, -1500, 4321, -5, 4, 77, 3, 654, 1, 132};
    expect_equal(download<long long>(dout, 10), want, "members");
    const Mixed e = download<Mixed>(decho, 1)[0];
    CHECK(e.d == m.d);
    CHECK(e.ll == m.ll);
    CHECK(e.pair.y == m.pair.y);
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.streams: kernels in two streams ordered by an event") {
    const CUfunction f = function(load_ptx("control"), "grid_stride_saxpy");
    constexpr int n = 5000;
    const std::vector<float> x = random_floats(n, 75);
    const std::vector<float> y = random_floats(n, 76);
    const std::vector<float> z = random_floats(n, 77);
    const CUdeviceptr dx = upload(x);
    const CUdeviceptr dy = upload(y);
    const CUdeviceptr dz = upload(z);
    const CUstream s1 = swcu::test::create_stream();
    const CUstream s2 = swcu::test::create_stream();
    const CUevent e = swcu::test::create_event(CU_EVENT_DISABLE_TIMING);
    float a = 0.5f, b = 3.0f;
    int count = n;
    CUdeviceptr px = dx, py = dy, pz = dz;
    void* first[] = {&a, &px, &py, &count};
    void* second[] = {&b, &py, &pz, &count};
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s1, first, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(s2, e, 0));
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 4, 1, 1, 64, 1, 1, 0, s2, second, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s2));
    const std::vector<float> y1 = saxpy(a, x, y);
    expect_equal(download<float>(dz, n), saxpy(b, y1, z), "z after y");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s2));
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.graphs: kernels captured into a graph keep their arguments") {
    const CUfunction f = function(load_ptx("control"), "grid_stride_saxpy");
    constexpr int n = 2000;
    const std::vector<float> x = random_floats(n, 78);
    const std::vector<float> y = random_floats(n, 79);
    const std::vector<float> z = random_floats(n, 80);
    const CUdeviceptr dx = upload(x);
    const CUdeviceptr dy = upload(y);
    const CUdeviceptr dz = upload(z);
    const CUstream s = swcu::test::create_stream();
    float a = 1.5f, b = -0.75f;
    int count = n;
    CUdeviceptr px = dx, py = dy, pz = dz;
    void* first[] = {&a, &px, &py, &count};
    void* second[] = {&b, &py, &pz, &count};
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::gr().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 3, 1, 1, 100, 1, 1, 0, s, first, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 3, 1, 1, 100, 1, 1, 0, s, second, nullptr));
    CUgraph g = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuStreamEndCapture(s, &g));
    const CUgraphExec exec = swcu::test::instantiate(g);
    a = 100.0f;  // captured launches copied their arguments
    b = 100.0f;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphLaunch(exec, s));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphLaunch(exec, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    const std::vector<float> y1 = saxpy(1.5f, x, y);
    const std::vector<float> z1 = saxpy(-0.75f, y1, z);
    const std::vector<float> y2 = saxpy(1.5f, x, y1);
    expect_equal(download<float>(dy, n), y2, "y after two launches");
    expect_equal(download<float>(dz, n), saxpy(-0.75f, y2, z1), "z after two launches");
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphDestroy(g));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
  }
}
