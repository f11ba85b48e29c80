// Launches: checks, argument packing, the launch log, registered host functions in stream
// order, CUkernel launches, and the note for kernels without a host function.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <swcuda/emulation.hpp>
#include <thread>

#include "graph_support.hpp"
#include "module_support.hpp"
#include "saxpy_host.hpp"

namespace {

using swcu::test::mod;
using swcu::test::ModuleTest;
using swcu::test::saxpy_host;

struct pair {
  double a;
  int b;
};

// Appends the launch's first int parameter to the std::vector<int> at `user`.
void record_order(const swcu_launch* launch, void* user) {
  static_cast<std::vector<int>*>(user)->push_back(swcuda::param<int>(*launch, 0));
}

// count_up(int times): adds to the counter global, whose address the test passes as `user`.
void count_up(const swcu_launch* launch, void* user) {
  *static_cast<int*>(user) += swcuda::param<int>(*launch, 0);
}

struct Registration {
  Registration(const char* name, swcu_kernel_fn fn, void* user) : name_(name) {
    REQUIRE(swcu::test::control().register_kernel(name, fn, user) == 0);
  }
  ~Registration() { swcu::test::control().register_kernel(name_, nullptr, nullptr); }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

 private:
  const char* name_;
};

struct LaunchTest : ModuleTest {
  LaunchTest() : m(load(swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx")))) {}
  ~LaunchTest() { mod().cuModuleUnload(m); }
  LaunchTest(const LaunchTest&) = delete;
  LaunchTest& operator=(const LaunchTest&) = delete;

  CUresult launch(CUfunction f, unsigned grid, unsigned block, void** params = nullptr,
                  unsigned shared = 0, CUstream stream = nullptr) {
    return mod().cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, stream, params, nullptr);
  }
  CUresult launch_ex(CUfunction f, CUlaunchConfig config, std::vector<CUlaunchAttribute> attrs,
                     void** params = nullptr) {
    config.attrs = attrs.data();
    config.numAttrs = static_cast<unsigned>(attrs.size());
    return mod().cuLaunchKernelEx(&config, f, params, nullptr);
  }
  static CUlaunchConfig config(unsigned grid, unsigned block) {
    CUlaunchConfig c{};
    c.gridDimX = grid;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = block;
    c.blockDimY = c.blockDimZ = 1;
    return c;
  }

  CUmodule m;
};

CUlaunchAttribute cluster(unsigned x, unsigned y = 1, unsigned z = 1) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  a.value.clusterDim.x = x;
  a.value.clusterDim.y = y;
  a.value.clusterDim.z = z;
  return a;
}

}  // namespace

TEST_SUITE("launches") {
  TEST_CASE_FIXTURE(LaunchTest, "a registered host function computes through copy, launch, copy") {
    const Registration r("saxpy", &saxpy_host, nullptr);
    constexpr int n = 1000;
    std::vector<float> x(n), y(n, 1.0f);
    std::iota(x.begin(), x.end(), 0.0f);
    CUdeviceptr dx = 0, dy = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dx, n * sizeof(float)));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&dy, n * sizeof(float)));
    const CUstream s = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2(dx, x.data(), n * sizeof(float), s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoDAsync_v2(dy, y.data(), n * sizeof(float), s));
    float a = 2.0f;
    int count = n;
    void* params[] = {&a, &dx, &dy, &count};
    const CUfunction f = function(m, "saxpy");
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, (n + 127) / 128, 128, params, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoHAsync_v2(y.data(), dy, n * sizeof(float), s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    for (int i = 0; i < n; ++i)
      REQUIRE(y[static_cast<std::size_t>(i)] == 2.0f * static_cast<float>(i) + 1.0f);
    const swcu_launch l = last_launch();
    CHECK(std::string(l.kernel) == "saxpy");
    CHECK(l.grid[0] == 8);
    CHECK(l.block[0] == 128);
    CHECK(l.stream == s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(dy));
  }

  TEST_CASE_FIXTURE(LaunchTest, "arguments are packed by the layout, from kernelParams or extra") {
    const CUfunction f = function(m, "with_struct");
    pair p{2.5, 7};
    unsigned char c = 'x';
    short sh = -3;
    CUdeviceptr result = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&result, sizeof(long long)));
    auto* out = reinterpret_cast<long long*>(result);
    void* params[] = {&p, &c, &sh, &out};
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, params));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    long long computed = 0;  // the kernel ran on the packed values: 2 + 7 + 'x' - 3
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&computed, result, sizeof computed));
    CHECK(computed == 2 + 7 + 'x' - 3);
    swcu_launch l = last_launch();
    REQUIRE(l.params_size == 32);
    REQUIRE(l.param_count == 4);
    CHECK(std::vector<std::size_t>(l.param_offsets, l.param_offsets + 4) ==
          std::vector<std::size_t>{0, 16, 18, 24});
    CHECK(std::vector<std::size_t>(l.param_sizes, l.param_sizes + 4) ==
          std::vector<std::size_t>{16, 1, 2, 8});
    pair back{};
    std::memcpy(&back, l.params, sizeof back);
    CHECK(back.a == 2.5);
    CHECK(back.b == 7);
    CHECK(l.params[16] == 'x');
    CHECK(swcuda::param<short>(l, 2) == -3);
    CHECK(swcuda::param<long long*>(l, 3) == out);
    CHECK(swcuda::param<pair>(l, 0).b == 7);

    // The same bytes through `extra`.
    std::vector<unsigned char> buffer(l.params, l.params + l.params_size);
    std::size_t size = buffer.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &size, CU_LAUNCH_PARAM_END};
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra));
    const swcu_launch from_extra = last_launch();
    CHECK(from_extra.param_count == 4);
    CHECK(std::equal(buffer.begin(), buffer.end(), from_extra.params));

    // Both ways at once, a short buffer, a missing size, an unknown setting: refused.
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, extra),
                           CUDA_ERROR_INVALID_VALUE);
    size = 31;
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, extra),
                           CUDA_ERROR_INVALID_VALUE);
    void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_END};
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, no_size),
                           CUDA_ERROR_INVALID_VALUE);
    void* unknown[] = {reinterpret_cast<void*>(std::uintptr_t{0x77}), buffer.data(),
                       CU_LAUNCH_PARAM_END};
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, unknown),
                           CUDA_ERROR_INVALID_VALUE);
    // A kernel with parameters needs them; one without takes none.
    SWCU_TEST_CHECK_RESULT(launch(f, 1, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
    void* with_null[] = {&p, nullptr, &sh, &out};
    SWCU_TEST_CHECK_RESULT(launch(f, 1, 1, with_null), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(launch(function(m, "no_params"), 1, 1, nullptr));
    CHECK(last_launch().param_count == 0);
    CHECK(last_launch().params_size == 0);
    CHECK(ctl.launch_log_size() == 3);  // refused launches are not logged
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(result));
  }

  TEST_CASE_FIXTURE(LaunchTest, "the launch log keeps every launch until it is cleared") {
    ctl.clear_launch_log();
    CHECK(ctl.launch_log_size() == 0);
    swcu_launch l{};
    CHECK(ctl.launch_log_entry(0, &l) == -1);
    const CUfunction f = function(m, "count_up");
    for (int i = 0; i < 3; ++i) {
      int times = i;
      void* params[] = {&times};
      SWCU_TEST_REQUIRE_SUCCESS(
          mod().cuLaunchKernel(f, 2, 3, 4, 8, 4, 2, 256, nullptr, params, nullptr));
    }
    REQUIRE(ctl.launch_log_size() == 3);
    swcu_launch first{};
    REQUIRE(ctl.launch_log_entry(0, &first) == 0);
    CHECK(ctl.launch_log_entry(3, &l) == -1);
    CHECK(ctl.launch_log_entry(0, nullptr) == -1);
    CHECK(std::string(first.kernel) == "count_up");
    CHECK((first.grid[0] == 2 && first.grid[1] == 3 && first.grid[2] == 4));
    CHECK((first.block[0] == 8 && first.block[1] == 4 && first.block[2] == 2));
    CHECK((first.cluster[0] == 1 && first.cluster[1] == 1 && first.cluster[2] == 1));
    CHECK(first.shared_bytes == 256);
    CHECK(first.cooperative == 0);
    CHECK(first.priority == 0);
    CHECK(first.stream == nullptr);
    CHECK(swcuda::param<int>(first, 0) == 0);
    // Entries stay valid while more launches come.
    for (int i = 0; i < 100; ++i) {
      int times = 0;
      void* params[] = {&times};
      SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, params));
    }
    CHECK(std::string(first.kernel) == "count_up");
    swcu_launch third{};
    REQUIRE(ctl.launch_log_entry(2, &third) == 0);
    CHECK(swcuda::param<int>(third, 0) == 2);
    ctl.clear_launch_log();
    CHECK(ctl.launch_log_size() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  }

  TEST_CASE_FIXTURE(LaunchTest, "launch dimensions and shared memory are checked") {
    const CUfunction f = function(m, "no_params");
    const auto launch3 = [&](unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared) {
      return mod().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, nullptr, nullptr, nullptr);
    };
    SWCU_TEST_CHECK_RESULT(launch3(0, 1, 1, 1, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 1, 0, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 1025, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 1, 1, 65, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 64, 32, 1, 0),
                           CUDA_ERROR_INVALID_VALUE);  // 2048 threads
    SWCU_TEST_CHECK_RESULT(launch3(1, 65536, 1, 1, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 65536, 1, 1, 1, 0), CUDA_ERROR_INVALID_VALUE);
    {
      // The largest grid is accepted. Interpreting 2^62 empty CTAs would take years, as it
      // would on a GPU, so a host function stands in for the kernel here.
      const Registration r(
          "no_params", [](const swcu_launch*, void*) {}, nullptr);
      SWCU_TEST_CHECK_RESULT(launch3(2147483647u, 65535, 65535, 1024, 1, 1, 0), CUDA_SUCCESS);
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    }
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 32, 32, 1, 49152), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 1, 1, 1, 49153), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 1, 1, 1, 100000), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(launch3(1, 1, 1, 1, 1, 1, 100001), CUDA_ERROR_INVALID_VALUE);
    // A kernel built for fewer threads (__launch_bounds__(256)).
    CUdeviceptr buffer = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&buffer, 256 * sizeof(int)));
    int* out = reinterpret_cast<int*>(buffer);
    void* params[] = {&out};
    const CUfunction bounded = function(m, "bounded");
    SWCU_TEST_CHECK_RESULT(launch(bounded, 1, 256, params), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(launch(bounded, 1, 257, params), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(buffer));
    // Handles.
    SWCU_TEST_CHECK_RESULT(launch(reinterpret_cast<CUfunction>(m), 1, 1),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(launch(f, 1, 1, nullptr, 0, reinterpret_cast<CUstream>(f)),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_CHECK_RESULT(launch(f, 1, 1), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(ctx));
  }

  TEST_CASE_FIXTURE(LaunchTest, "cuLaunchKernelEx: clusters, cooperation, priority, events") {
    const CUfunction f = function(m, "no_params");
    CUlaunchConfig c = config(4, 32);
    c.gridDimY = 2;
    SWCU_TEST_REQUIRE_SUCCESS(launch_ex(f, c, {cluster(2, 1)}));
    swcu_launch l = last_launch();
    CHECK((l.cluster[0] == 2 && l.cluster[1] == 1 && l.cluster[2] == 1));
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(3)}),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);  // 4 % 3
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(0)}), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    c.gridDimX = 32;
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(8)}), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(16)}), CUDA_ERROR_INVALID_CLUSTER_SIZE);
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(16)}), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(32)}), CUDA_ERROR_INVALID_CLUSTER_SIZE);

    // A kernel with a compile-time cluster size gets it; another one is refused.
    CUdeviceptr buffer = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&buffer, 4 * sizeof(int)));
    int* out = reinterpret_cast<int*>(buffer);
    void* params[] = {&out};
    const CUfunction clustered = function(m, "clustered");
    SWCU_TEST_REQUIRE_SUCCESS(launch_ex(clustered, config(4, 32), {}, params));
    CHECK(last_launch().cluster[0] == 2);
    SWCU_TEST_CHECK_RESULT(launch_ex(clustered, config(4, 32), {cluster(4)}, params),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    SWCU_TEST_CHECK_RESULT(launch_ex(clustered, config(3, 32), {}, params),
                           CUDA_ERROR_INVALID_CLUSTER_SIZE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    int ones[4] = {};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(ones, buffer, sizeof ones));
    CHECK((ones[0] == 1 && ones[1] == 1 && ones[2] == 1 && ones[3] == 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(buffer));

    CUlaunchAttribute coop{};
    coop.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    coop.value.cooperative = 1;
    CUlaunchAttribute priority{};
    priority.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    priority.value.priority = -3;
    SWCU_TEST_REQUIRE_SUCCESS(launch_ex(f, config(2, 64), {coop, priority}));
    l = last_launch();
    CHECK(l.cooperative == 1);
    CHECK(l.priority == -3);

    CUlaunchAttribute unknown{};
    unknown.id = swcu::test::invalid_enum<CUlaunchAttributeID>(999);
    SWCU_TEST_CHECK_RESULT(launch_ex(f, config(1, 1), {unknown}), CUDA_ERROR_INVALID_VALUE);
    unknown.id = swcu::test::invalid_enum<CUlaunchAttributeID>(15);
    SWCU_TEST_CHECK_RESULT(launch_ex(f, config(1, 1), {unknown}), CUDA_ERROR_INVALID_VALUE);
    CUlaunchAttribute graphs_only{};
    graphs_only.id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
    graphs_only.value.deviceUpdatableKernelNode.deviceUpdatable = 1;
    SWCU_TEST_CHECK_RESULT(launch_ex(f, config(1, 1), {graphs_only}), CUDA_ERROR_INVALID_VALUE);
    CUlaunchAttribute ignored{};
    ignored.id = CU_LAUNCH_ATTRIBUTE_IGNORE;
    CUlaunchAttribute serialize{};
    serialize.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    serialize.value.programmaticStreamSerializationAllowed = 1;
    SWCU_TEST_CHECK_RESULT(launch_ex(f, config(1, 1), {ignored, serialize}), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernelEx(nullptr, f, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    c = config(1, 1);
    c.numAttrs = 1;
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernelEx(&c, f, nullptr, nullptr),
                           CUDA_ERROR_INVALID_VALUE);

    // A completion event is recorded after the kernel; it must not time.
    const CUevent timing = swcu::test::create_event();
    const CUevent quiet = swcu::test::create_event(CU_EVENT_DISABLE_TIMING);
    CUlaunchAttribute completion{};
    completion.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    completion.value.launchCompletionEvent.event = timing;
    SWCU_TEST_CHECK_RESULT(launch_ex(f, config(1, 1), {completion}), CUDA_ERROR_INVALID_VALUE);
    completion.value.launchCompletionEvent.event = quiet;
    SWCU_TEST_CHECK_RESULT(launch_ex(f, config(1, 1), {completion}), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(quiet));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(quiet), CUDA_SUCCESS);
    completion.value.launchCompletionEvent.event = reinterpret_cast<CUevent>(f);
    SWCU_TEST_CHECK_RESULT(launch_ex(f, config(1, 1), {completion}), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(timing));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(quiet));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  }

  TEST_CASE_FIXTURE(LaunchTest, "cuLaunchKernelEx: every attribute's values as cuda.h states") {
    const CUfunction f = function(m, "no_params");
    const auto one = [&](const CUlaunchAttribute& a, unsigned grid = 1) {
      return launch_ex(f, config(grid, 32), {a});
    };
    // CUaccessPolicyWindow: hit ratio in [0, 1], missProp "Must be either NORMAL or
    // STREAMING", at most CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE bytes.
    CUlaunchAttribute window{};
    window.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
    window.value.accessPolicyWindow.num_bytes = 4096;
    window.value.accessPolicyWindow.hitRatio = 0.5f;
    window.value.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    SWCU_TEST_CHECK_RESULT(one(window), CUDA_SUCCESS);
    window.value.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_PERSISTING;
    SWCU_TEST_CHECK_RESULT(one(window), CUDA_ERROR_INVALID_VALUE);
    window.value.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    window.value.accessPolicyWindow.num_bytes = std::size_t{1} << 30;
    SWCU_TEST_CHECK_RESULT(one(window), CUDA_ERROR_INVALID_VALUE);

    // Memory sync domain ids below CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT (4).
    CUlaunchAttribute map{};
    map.id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP;
    map.value.memSyncDomainMap.default_ = 3;
    map.value.memSyncDomainMap.remote = 1;
    SWCU_TEST_CHECK_RESULT(one(map), CUDA_SUCCESS);
    map.value.memSyncDomainMap.remote = 4;
    SWCU_TEST_CHECK_RESULT(one(map), CUDA_ERROR_INVALID_VALUE);

    // Programmatic and launch completion events: timing disabled, record flags that "Does not
    // accept CU_EVENT_RECORD_EXTERNAL"; both are recorded after the kernel.
    const CUevent quiet = swcu::test::create_event(CU_EVENT_DISABLE_TIMING);
    CUlaunchAttribute programmatic{};
    programmatic.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
    programmatic.value.programmaticEvent.event = quiet;
    programmatic.value.programmaticEvent.triggerAtBlockStart = 1;
    SWCU_TEST_CHECK_RESULT(one(programmatic), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(quiet));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(quiet), CUDA_SUCCESS);
    programmatic.value.programmaticEvent.flags = CU_EVENT_RECORD_EXTERNAL;
    SWCU_TEST_CHECK_RESULT(one(programmatic), CUDA_ERROR_INVALID_VALUE);
    CUlaunchAttribute completion{};
    completion.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    completion.value.launchCompletionEvent.event = quiet;
    completion.value.launchCompletionEvent.flags = CU_EVENT_RECORD_EXTERNAL;
    SWCU_TEST_CHECK_RESULT(one(completion), CUDA_ERROR_INVALID_VALUE);

    // Policies and hints: values of their enums only.
    CUlaunchAttribute policy{};
    policy.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    policy.value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    SWCU_TEST_CHECK_RESULT(one(policy), CUDA_SUCCESS);
    policy.value.clusterSchedulingPolicyPreference =
        swcu::test::invalid_enum<CUclusterSchedulingPolicy>(3);
    SWCU_TEST_CHECK_RESULT(one(policy), CUDA_ERROR_INVALID_VALUE);
    CUlaunchAttribute carveout{};
    carveout.id = CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
    carveout.value.sharedMemCarveout = 100;
    SWCU_TEST_CHECK_RESULT(one(carveout), CUDA_SUCCESS);
    carveout.value.sharedMemCarveout = 101;  // "a percentage between 0-100"
    SWCU_TEST_CHECK_RESULT(one(carveout), CUDA_ERROR_INVALID_VALUE);
    CUlaunchAttribute nvlink{};
    nvlink.id = CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING;
    nvlink.value.nvlinkUtilCentricScheduling = 1;
    SWCU_TEST_CHECK_RESULT(one(nvlink), CUDA_SUCCESS);
    nvlink.value.nvlinkUtilCentricScheduling = 2;  // "Valid values ... are 0 and 1"
    SWCU_TEST_CHECK_RESULT(one(nvlink), CUDA_ERROR_INVALID_VALUE);

    // Preferred cluster: x, y multiples of the cluster's dividing the grid, z equal to it; it
    // "will only take effect when a regular cluster dimension has been specified".
    CUlaunchAttribute preferred{};
    preferred.id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
    preferred.value.preferredClusterDim = {4, 1, 1};
    CUlaunchConfig c = config(8, 32);
    c.gridDimZ = 2;
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(2), preferred}), CUDA_SUCCESS);
    preferred.value.preferredClusterDim = {3, 1, 1};
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(2), preferred}), CUDA_ERROR_INVALID_VALUE);
    preferred.value.preferredClusterDim = {4, 1, 2};
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {cluster(2), preferred}), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {preferred}), CUDA_SUCCESS);  // no cluster: no effect

    // DEVICE_UPDATABLE_KERNEL_NODE is "graphs-only, and passing it to a launch in a
    // non-capturing stream will result in an error". In a capture the software driver refuses
    // it too, with CUDA_ERROR_NOT_SUPPORTED: it does not model device-side node updates.
    CUlaunchAttribute updatable{};
    updatable.id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
    updatable.value.deviceUpdatableKernelNode.deviceUpdatable = 1;
    SWCU_TEST_CHECK_RESULT(one(updatable), CUDA_ERROR_INVALID_VALUE);
    const CUstream stream = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::gr().cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED));
    c = config(1, 32);
    c.hStream = stream;
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {updatable}), CUDA_ERROR_NOT_SUPPORTED);
    updatable.value.deviceUpdatableKernelNode.deviceUpdatable = 2;  // "only be set to 0 or 1"
    SWCU_TEST_CHECK_RESULT(launch_ex(f, c, {updatable}), CUDA_ERROR_INVALID_VALUE);
    CUgraph captured = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuStreamEndCapture(stream, &captured));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphDestroy(captured));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(quiet));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  }

  TEST_CASE_FIXTURE(LaunchTest, "a cooperative grid must fit on the device at once") {
    const CUfunction f = function(m, "no_params");
    const auto coop = [&](unsigned grid, unsigned block) {
      return mod().cuLaunchCooperativeKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, nullptr);
    };
    // 32 blocks of 32 threads per SM, 132 SMs; 2 blocks of 1024.
    SWCU_TEST_CHECK_RESULT(coop(132 * 32, 32), CUDA_SUCCESS);
    CHECK(last_launch().cooperative == 1);
    SWCU_TEST_CHECK_RESULT(coop(132 * 32 + 1, 32), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    SWCU_TEST_CHECK_RESULT(coop(132 * 2, 1024), CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(coop(132 * 2 + 1, 1024), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    SWCU_TEST_CHECK_RESULT(
        mod().cuLaunchCooperativeKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr),
        CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
  }

  TEST_CASE_FIXTURE(LaunchTest, "host functions run in stream order with other stream work") {
    std::vector<int> order;
    const Registration r("count_up", &record_order, &order);
    const CUfunction f = function(m, "count_up");
    const CUstream s = swcu::test::create_stream();
    swcu::test::Log log;
    int one = 1, three = 3;
    void* p1[] = {&one};
    void* p3[] = {&three};
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, p1, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(s, 2));
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, p3, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(order == std::vector<int>{1, 3});
    CHECK(log.order() == std::vector<int>{2});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
  }

  TEST_CASE_FIXTURE(LaunchTest,
                    "inside a host function driver calls are refused, control calls work") {
    struct Seen {
      CUresult driver = CUDA_SUCCESS;
      std::size_t log_size = 0;
    } seen;
    const Registration r(
        "no_params",
        [](const swcu_launch*, void* user) {
          auto& s = *static_cast<Seen*>(user);
          int count = 0;
          s.driver = swcu::test::api().cuDeviceGetCount(&count);
          s.log_size = swcu::test::control().launch_log_size();
        },
        &seen);
    ctl.clear_launch_log();
    SWCU_TEST_REQUIRE_SUCCESS(launch(function(m, "no_params"), 1, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_CHECK_RESULT(seen.driver, CUDA_ERROR_NOT_PERMITTED);
    CHECK(seen.log_size == 1);
  }

  TEST_CASE_FIXTURE(LaunchTest,
                    "registering replaces, NULL removes, a global is the kernel's memory") {
    CUdeviceptr counter = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetGlobal(&counter, nullptr, m, "counter"));
    auto* value = reinterpret_cast<int*>(counter);  // device memory is host memory here
    const CUfunction f = function(m, "count_up");
    int five = 5;
    void* params[] = {&five};
    std::vector<int> order;
    CHECK(ctl.register_kernel("count_up", &record_order, &order) == 0);
    CHECK(ctl.register_kernel("count_up", &count_up, value) == 0);  // replaces
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, params));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    int host = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&host, counter, sizeof host));
    CHECK(host == 5);
    CHECK(order.empty());
    CHECK(ctl.register_kernel("count_up", nullptr, nullptr) == 0);  // removes
    // Without a host function the kernel's PTX runs: counter += times + table[0] + 0.0f.
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, params));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&host, counter, sizeof host));
    CHECK(host == 5 + 5 + 1);
    CHECK(ctl.register_kernel(nullptr, &count_up, nullptr) == -1);
  }

  TEST_CASE_FIXTURE(ModuleTest, "a kernel without a host function runs its PTX and is logged") {
    const CUmodule m =
        load(swcu::test::ptx(".visible .entry never_registered_kernel() { ret; }\n"));
    const CUfunction f = function(m, "never_registered_kernel");
    ctl.clear_launch_log();
    swcu::test::StderrCapture capture;
    for (int i = 0; i < 3; ++i) {
      SWCU_TEST_REQUIRE_SUCCESS(
          mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(capture.finish().empty());
    CHECK(ctl.launch_log_size() == 3);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(ModuleTest, "a kernel with neither PTX nor a host function is refused") {
    // A cubin holds only SASS: a GPU would run it, the software driver cannot, and says so.
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.cubin"));
    const CUmodule m = load(image);
    const CUfunction f = function(m, "no_params");
    ctl.clear_launch_log();
    swcu::test::StderrCapture capture;
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
                           CUDA_ERROR_NOT_SUPPORTED);
    const std::string text = capture.finish();
    INFO(text);
    CHECK(text.find("kernel no_params has no PTX") != std::string::npos);
    CHECK(text.find("compute_90") != std::string::npos);
    CHECK(ctl.launch_log_size() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(ModuleTest, "a CUkernel launches in the context of the stream") {
    std::vector<int> order;
    const Registration r("count_up", &record_order, &order);
    CUlibrary lib = nullptr;
    const std::string image = swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.cubin"));
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel k = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryGetKernel(&k, lib, "count_up"));
    const auto as_function = reinterpret_cast<CUfunction>(k);
    int seven = 7;
    void* params[] = {&seven};
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchKernel(as_function, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    const CUstream s = swcu::test::create_stream();
    seven = 8;
    CUlaunchConfig c{};
    c.gridDimX = c.gridDimY = c.gridDimZ = c.blockDimX = c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLaunchKernelEx(&c, as_function, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(order == std::vector<int>{7, 8});
    CHECK(std::string(last_launch().kernel) == "count_up");
    int blocks = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, as_function, 256, 0));
    CHECK(blocks == 8);

    // A module function of another context is refused on this context's stream.
    const CUcontext other = swcu::test::create_context();
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadData(&m, image.data()));
    CUfunction foreign = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunction(&foreign, m, "no_params"));
    SWCU_TEST_CHECK_RESULT(mod().cuLaunchKernel(foreign, 1, 1, 1, 1, 1, 1, 0, s, nullptr, nullptr),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLibraryUnload(lib));
  }

  TEST_CASE_FIXTURE(LaunchTest, "threads launch concurrently into their own streams") {
    std::atomic<int> runs{0};
    const Registration r(
        "count_up",
        [](const swcu_launch* launch, void* user) {
          static_cast<std::atomic<int>*>(user)->fetch_add(swcuda::param<int>(*launch, 0));
        },
        &runs);
    const CUfunction f = function(m, "count_up");
    ctl.clear_launch_log();
    constexpr int kThreads = 4;
    constexpr int kLaunches = 100;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        if (cu.cuCtxSetCurrent(ctx) != CUDA_SUCCESS) ++failures;
        CUstream s = nullptr;
        if (cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) ++failures;
        int one = 1;
        void* params[] = {&one};
        for (int i = 0; i < kLaunches; ++i) {
          if (mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr) != CUDA_SUCCESS) {
            ++failures;
          }
        }
        if (cu.cuStreamSynchronize(s) != CUDA_SUCCESS) ++failures;
        if (cu.cuStreamDestroy_v2(s) != CUDA_SUCCESS) ++failures;
        cu.cuCtxSetCurrent(nullptr);
      });
    }
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
    CHECK(runs == kThreads * kLaunches);
    CHECK(ctl.launch_log_size() == static_cast<std::size_t>(kThreads * kLaunches));
  }

  TEST_CASE_FIXTURE(LaunchTest, "_ptsz launches go to the per-thread default stream") {
    std::vector<int> order;
    const Registration r("count_up", &record_order, &order);
    const CUfunction f = function(m, "count_up");
    int v = 4;
    void* params[] = {&v};
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
    CUlaunchConfig c = config(1, 1);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLaunchKernelEx_ptsz(&c, f, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize_ptsz(nullptr));
    CHECK(order == std::vector<int>{4, 4});
    CHECK(last_launch().stream == nullptr);
  }

  TEST_CASE_FIXTURE(LaunchTest, "an async fault fails the launch when it runs") {
    std::vector<int> order;
    const Registration r("count_up", &record_order, &order);
    const CUfunction f = function(m, "count_up");
    int v = 1;
    void* params[] = {&v};
    REQUIRE(ctl.add_fault_rule("cuLaunchKernel:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    const CUstream s = swcu::test::create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, params, 0, s));  // the call succeeds
    v = 2;
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, params, 0, s));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(order == std::vector<int>{2});  // the failed launch ran no host function
    CHECK(ctl.launch_log_size() == 2);
    REQUIRE(ctl.add_fault_rule("cuLaunchKernel:1:CUDA_ERROR_INVALID_VALUE") == 0);
    SWCU_TEST_CHECK_RESULT(launch(f, 1, 1, params, 0, s), CUDA_ERROR_INVALID_VALUE);
    CHECK(ctl.launch_log_size() == 2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
  }
}

TEST_SUITE("deferred") {
  TEST_CASE_FIXTURE(LaunchTest,
                    "deferred: kernel launches run in stream order when something synchronizes") {
    std::vector<int> order;
    const Registration r("count_up", &record_order, &order);
    const CUfunction f = function(m, "count_up");
    const CUstream s = swcu::test::create_stream();
    const CUevent e = swcu::test::create_event();
    int one = 1, two = 2;
    void* p1[] = {&one};
    void* p2[] = {&two};
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, p1, 0, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s));
    SWCU_TEST_REQUIRE_SUCCESS(launch(f, 1, 1, p2, 0, s));
    CHECK(ctl.launch_log_size() == 2);  // logged at the call
    CHECK(order.empty());               // run later
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));
    CHECK(order == std::vector<int>{1});
    ctl.clear_launch_log();  // pending launches keep their records
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(order == std::vector<int>{1, 2});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
  }
}
