// Green contexts (cuda.h, "Green Contexts"): device resources, splitting, descriptors, creation,
// the context a green context converts to, its streams, events and ids, and launches that see
// only the green context's SMs.
#include <array>
#include <cstdint>

#include "graph_support.hpp"
#include "module_support.hpp"

namespace {

using swcu::test::mod;

CUdevResource device_sms(CUdevice dev = 0) {
  CUdevResource r{};
  REQUIRE(swcu::test::api().cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_SM) ==
          CUDA_SUCCESS);
  return r;
}

CUdevResourceDesc describe(CUdevResource* resources, unsigned n) {
  CUdevResourceDesc desc = nullptr;
  REQUIRE(swcu::test::api().cuDevResourceGenerateDesc(&desc, resources, n) == CUDA_SUCCESS);
  return desc;
}

// A green context of `sms` SMs of device 0 (one group of a split by that count).
CUgreenCtx green_of(unsigned sms) {
  const CUdevResource all = device_sms();
  CUdevResource group{};
  unsigned n = 1;
  REQUIRE(swcu::test::api().cuDevSmResourceSplitByCount(&group, &n, &all, nullptr, 0, sms) ==
          CUDA_SUCCESS);
  REQUIRE(n == 1);
  CUgreenCtx g = nullptr;
  REQUIRE(swcu::test::api().cuGreenCtxCreate(&g, describe(&group, 1), 0,
                                             CU_GREEN_CTX_DEFAULT_STREAM) == CUDA_SUCCESS);
  return g;
}

CUcontext context_of(CUgreenCtx g) {
  CUcontext ctx = nullptr;
  REQUIRE(swcu::test::api().cuCtxFromGreenCtx(&ctx, g) == CUDA_SUCCESS);
  return ctx;
}

// Writes %nsmid to out[0].
constexpr const char* kNsmid = R"(
.visible .entry nsmid(.param .u64 out) {
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %nsmid;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry empty() { ret; }
)";

}  // namespace

TEST_SUITE("green contexts") {
  // cuDeviceGetDevResource: "Get the type resources available to the device"; for compute
  // capability 9.0 "The minimum count is 8 SMs and must be a multiple of 8". Observed on an H200,
  // driver 580.159.04, 2026-11-27: smCount 132, minSmPartitionSize 8, smCoscheduledAlignment 8
  // (so smCount is not "a multiple of" smCoscheduledAlignment, as cuda.h says it is).
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a device's SM resource is all its SMs") {
    CUdevResource r{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM));
    int sms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    CHECK(r.type == CU_DEV_RESOURCE_TYPE_SM);
    CHECK(r.sm.smCount == static_cast<unsigned>(sms));
    CHECK(r.sm.smCount == 132);
    CHECK(r.sm.minSmPartitionSize == 8);
    CHECK(r.sm.smCoscheduledAlignment == 8);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetDevResource(99, &r, CU_DEV_RESOURCE_TYPE_SM),
                           CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetDevResource(0, nullptr, CU_DEV_RESOURCE_TYPE_SM),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_INVALID),
                           CUDA_ERROR_INVALID_RESOURCE_TYPE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuDeviceGetDevResource(0, &r, swcu::test::invalid_enum<CUdevResourceType>(7)),
        CUDA_ERROR_INVALID_RESOURCE_TYPE);
  }

  // cuDevSmResourceSplitByCount: "If result is NULL, the API simulates a split and provides the
  // amount of groups that would be created in nbGroups", groups are minCount rounded up to the
  // minimum partition and its granularity, and what does not fit is the remainder.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "splitting rounds groups up and leaves a remainder") {
    const CUdevResource all = device_sms();
    unsigned n = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevSmResourceSplitByCount(nullptr, &n, &all, nullptr, 0, 30));
    CHECK(n == 4);  // 30 rounds up to 32; 4 groups of 32 in 132
    std::array<CUdevResource, 4> groups{};
    CUdevResource rest{};
    n = 2;  // fewer groups than fit
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDevSmResourceSplitByCount(groups.data(), &n, &all, &rest, 0, 30));
    CHECK(n == 2);
    CHECK(groups[0].sm.smCount == 32);
    CHECK(groups[1].sm.smCount == 32);
    CHECK(rest.type == CU_DEV_RESOURCE_TYPE_SM);
    CHECK(rest.sm.smCount == 132 - 64);
    n = 10;  // more than fit: as many as fit
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDevSmResourceSplitByCount(groups.data(), &n, &all, &rest, 0, 32));
    CHECK(n == 4);
    CHECK(rest.sm.smCount == 4);
    n = 1;  // minCount 0 and below the minimum: the minimum partition
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevSmResourceSplitByCount(groups.data(), &n, &all, &rest, 0, 0));
    CHECK(groups[0].sm.smCount == 8);
    // Ignoring co-scheduling lowers the minimum and the granularity.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevSmResourceSplitByCount(
        groups.data(), &n, &all, &rest, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 3));
    CHECK(groups[0].sm.smCount == 4);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "splitting refuses bad input with the documented codes") {
    const CUdevResource all = device_sms();
    CUdevResource group{};
    unsigned n = 1;
    // "Value of minCount must be between 0 and the SM count specified in input."
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &n, &all, nullptr, 0, 133),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, nullptr, &all, nullptr, 0, 8),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &n, nullptr, nullptr, 0, 8),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &n, &all, nullptr, 0x100, 8),
                           CUDA_ERROR_INVALID_VALUE);
    unsigned zero = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &zero, &all, nullptr, 0, 8),
                           CUDA_ERROR_INVALID_VALUE);
    // The input must be an SM resource a query wrote ("Must be a valid CU_DEV_RESOURCE_TYPE_SM
    // resource"), not one the program made or changed.
    CUdevResource made{};
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &n, &made, nullptr, 0, 8),
                           CUDA_ERROR_INVALID_RESOURCE_TYPE);
    made.type = CU_DEV_RESOURCE_TYPE_SM;
    made.sm.smCount = 64;
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &n, &made, nullptr, 0, 8),
                           CUDA_ERROR_INVALID_VALUE);
    CUdevResource changed = all;
    changed.sm.smCount = 1000;
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &n, &changed, nullptr, 0, 8),
                           CUDA_ERROR_INVALID_VALUE);
    // "the output results cannot be split again without first creating a descriptor and a green
    // context with that descriptor"
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevSmResourceSplitByCount(&group, &n, &all, nullptr, 0, 64));
    CUdevResource half{};
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&half, &n, &group, nullptr, 0, 8),
                           CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    REQUIRE(ctl.add_fault_rule("cuDevSmResourceSplitByCount:1:CUDA_ERROR_UNKNOWN") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuDevSmResourceSplitByCount(&group, &n, &all, nullptr, 0, 8),
                           CUDA_ERROR_UNKNOWN);
    ctl.clear_fault_rules();
  }

  // cuDevResourceGenerateDesc: "If multiple resources are provided in resources and they are of
  // type CU_DEV_RESOURCE_TYPE_SM, they must be outputs (whether result or remaining) from the same
  // split API instance, otherwise CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION is returned."
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a descriptor takes resources of one split") {
    const CUdevResource all = device_sms();
    std::array<CUdevResource, 3> a{};
    std::array<CUdevResource, 2> b{};
    unsigned n = 2;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevSmResourceSplitByCount(a.data(), &n, &all, &a[2], 0, 16));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevSmResourceSplitByCount(b.data(), &n, &all, nullptr, 0, 16));
    CUdevResourceDesc desc = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevResourceGenerateDesc(&desc, a.data(), 3));  // with the rest
    CHECK(desc != nullptr);
    std::array<CUdevResource, 2> mixed{a[0], b[1]};
    SWCU_TEST_CHECK_RESULT(cu.cuDevResourceGenerateDesc(&desc, mixed.data(), 2),
                           CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    std::array<CUdevResource, 2> twice{a[0], a[0]};
    SWCU_TEST_CHECK_RESULT(cu.cuDevResourceGenerateDesc(&desc, twice.data(), 2),
                           CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    std::array<CUdevResource, 2> whole{all, all};
    SWCU_TEST_CHECK_RESULT(cu.cuDevResourceGenerateDesc(&desc, whole.data(), 2),
                           CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    SWCU_TEST_CHECK_RESULT(cu.cuDevResourceGenerateDesc(nullptr, a.data(), 1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevResourceGenerateDesc(&desc, nullptr, 1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDevResourceGenerateDesc(&desc, a.data(), 0),
                           CUDA_ERROR_INVALID_VALUE);
    CUdevResource none{};
    SWCU_TEST_CHECK_RESULT(cu.cuDevResourceGenerateDesc(&desc, &none, 1),
                           CUDA_ERROR_INVALID_RESOURCE_TYPE);
  }

  // cuGreenCtxCreate "will retain the primary context on device dev, which will is released when
  // the green context is destroyed"; "CU_GREEN_CTX_DEFAULT_STREAM is required".
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a green context retains the primary context and has its partition") {
    CUdevResource all = device_sms();
    const CUdevResourceDesc desc = describe(&all, 1);
    CUgreenCtx g = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxCreate(&g, desc, 0, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM | 2),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxCreate(&g, desc, 5, CU_GREEN_CTX_DEFAULT_STREAM),
                           CUDA_ERROR_INVALID_DEVICE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxCreate(&g, nullptr, 0, CU_GREEN_CTX_DEFAULT_STREAM),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxCreate(nullptr, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(ctl.live_handles(SWCU_GREEN_CONTEXT) == 0);
    CHECK(ctl.live_handles(SWCU_PRIMARY_CONTEXT) == 0);

    g = green_of(40);  // rounds up to 40 (a multiple of 8)
    CHECK(ctl.live_handles(SWCU_GREEN_CONTEXT) == 1);
    unsigned flags = 0;
    int active = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxGetState(0, &flags, &active));
    CHECK(active == 1);
    CUdevResource r{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxGetDevResource(g, &r, CU_DEV_RESOURCE_TYPE_SM));
    CHECK(r.sm.smCount == 40);
    const CUcontext ctx = context_of(g);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetDevResource(ctx, &r, CU_DEV_RESOURCE_TYPE_SM));
    CHECK(r.sm.smCount == 40);
    // "The API does not set the green context current."
    CUcontext current = reinterpret_cast<CUcontext>(1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetCurrent(&current));
    CHECK(current == nullptr);
    // The green context's resource can be split again.
    CUdevResource quarter{};
    unsigned n = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevSmResourceSplitByCount(&quarter, &n, &r, nullptr, 0, 10));
    CHECK(quarter.sm.smCount == 16);
    // A CUgreenCtx is not a CUcontext: "Users are expected to call this API [cuCtxFromGreenCtx]
    // before calling any CUDA APIs that accept a CUcontext. Failing to do so will result in the
    // APIs returning CUDA_ERROR_INVALID_CONTEXT."
    SWCU_TEST_CHECK_RESULT(
        cu.cuCtxGetDevResource(reinterpret_cast<CUcontext>(g), &r, CU_DEV_RESOURCE_TYPE_SM),
        CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxFromGreenCtx(nullptr, g), CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxDestroy(g));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxGetState(0, &flags, &active));
    CHECK(active == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxDestroy(g), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxGetDevResource(g, &r, CU_DEV_RESOURCE_TYPE_SM),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetDevResource(ctx, &r, CU_DEV_RESOURCE_TYPE_SM),
                           CUDA_ERROR_INVALID_CONTEXT);
    CUcontext again = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxFromGreenCtx(&again, g), CUDA_ERROR_INVALID_CONTEXT);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a green context's streams, ids and events") {
    const CUgreenCtx g = green_of(16);
    const CUgreenCtx other = green_of(16);
    unsigned long long id = 0, other_id = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxGetId(g, &id));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxGetId(other, &other_id));
    CHECK(id != other_id);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxGetId(g, nullptr), CUDA_ERROR_INVALID_VALUE);
    // NULL: the current context's green context ("If green context is supplied as NULL and the
    // current context is set to a green context, the Id of the current green context is
    // returned").
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxGetId(nullptr, &id), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(context_of(other)));
    unsigned long long current_id = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxGetId(nullptr, &current_id));
    CHECK(current_id == other_id);
    // A stream created with cuStreamCreate while a green context's context is current belongs to
    // that green context; so does the NULL stream.
    const CUstream plain = swcu::test::create_stream();
    CUgreenCtx of = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetGreenCtx(plain, &of));
    CHECK(of == other);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetGreenCtx(nullptr, &of));
    CHECK(of == other);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(plain));
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));

    // cuGreenCtxStreamCreate: "CU_STREAM_NON_BLOCKING must be specified"; the current context
    // does not matter.
    CUstream s = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxStreamCreate(&s, g, CU_STREAM_DEFAULT, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxStreamCreate(nullptr, g, CU_STREAM_NON_BLOCKING, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuGreenCtxStreamCreate(&s, reinterpret_cast<CUgreenCtx>(&s), CU_STREAM_NON_BLOCKING, 0),
        CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, -100));
    int priority = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetPriority(s, &priority));
    CHECK(priority == -5);  // clamped, as documented
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetGreenCtx(s, &of));
    CHECK(of == g);
    CUcontext ctx = nullptr;
    CUgreenCtx green = nullptr;
    // cuStreamGetCtx_v2: "If the stream is associated with a green context, the API returns the
    // green context in pGreenCtx" and the context cuCtxFromGreenCtx gives in pCtx.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetCtx_v2(s, &ctx, &green));
    CHECK(green == g);
    CHECK(ctx == context_of(g));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetGreenCtx(s, nullptr), CUDA_ERROR_INVALID_VALUE);

    // Events: a record in one green context, waited for by another.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(context_of(g)));
    const CUevent e = swcu::test::create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    swcu::test::Gate gate;
    gate.start(context_of(g), s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxRecordEvent(g, e));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);  // after the gated work
    CUstream t = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxStreamCreate(&t, other, CU_STREAM_NON_BLOCKING, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxWaitEvent(other, e));
    // "Makes all future work submitted to" the green context wait: in a stream that existed
    // before the call and in one created after it.
    CUstream later = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxStreamCreate(&later, other, CU_STREAM_NON_BLOCKING, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(context_of(other)));
    const CUevent after_t = swcu::test::create_event();
    const CUevent after_later = swcu::test::create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(after_t, t));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(after_later, later));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(after_t), CUDA_ERROR_NOT_READY);
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(after_later), CUDA_ERROR_NOT_READY);
    gate.open();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(t));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(later));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventQuery(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventQuery(after_t));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventQuery(after_later));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(after_t));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(after_later));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(later));
    // "hEvent and hCtx must be from the same primary context otherwise
    // CUDA_ERROR_INVALID_HANDLE is returned."
    const CUcontext created = swcu::test::create_context();
    const CUevent foreign = swcu::test::create_event();
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxRecordEvent(g, foreign), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxRecordEvent(g, nullptr), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxWaitEvent(g, nullptr), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxRecordEvent(nullptr, e), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxWaitEvent(g, foreign));  // "may be from a different
                                                                    // context or device"
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(foreign));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(created));

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(t));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxDestroy(g));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxDestroy(other));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "destroying a green context reclaims the streams left in it") {
    const CUgreenCtx g = green_of(8);
    CUstream s = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
    const std::size_t reclaimed = ctl.reclaimed_handles(SWCU_STREAM);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxDestroy(g));
    CHECK(ctl.reclaimed_handles(SWCU_STREAM) == reclaimed + 1);
    CHECK(ctl.live_handles(SWCU_STREAM) == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE);
  }

  // Kernels in a green context run on its SMs only: %nsmid, the cooperative launch limit and the
  // occupancy queries use the partition (the real driver schedules a green context's work on
  // its provisioned SMs, "never less").
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "launches in a green context see its SMs") {
    const CUgreenCtx g = green_of(16);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(context_of(g)));
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadData(&m, swcu::test::ptx(kNsmid).c_str()));
    CUfunction nsmid = nullptr;
    CUfunction empty = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunction(&nsmid, m, "nsmid"));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunction(&empty, m, "empty"));
    CUstream s = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
    CUdeviceptr out = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&out, sizeof(std::uint32_t)));
    void* args[] = {&out};
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLaunchKernel(nsmid, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
    std::uint32_t sms = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&sms, out, sizeof sms));
    CHECK(sms == 16);
    // A graph's kernel node launched in the green context's stream runs on its partition too.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(out, 0, 1));
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::gr().cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLaunchKernel(nsmid, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuStreamEndCapture(s, &graph));
    CUgraphExec exec = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphInstantiate(&exec, graph, 0));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphLaunch(exec, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&sms, out, sizeof sms));
    CHECK(sms == 16);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().cuGraphDestroy(graph));
    // 32 blocks of 32 threads fit on an SM: 16 * 32 blocks at once in the partition.
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchCooperativeKernel(empty, 16 * 32, 1, 1, 32, 1, 1, 0, s, nullptr));
    SWCU_TEST_CHECK_RESULT(
        mod().cuLaunchCooperativeKernel(empty, 16 * 32 + 1, 1, 1, 32, 1, 1, 0, s, nullptr),
        CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    CUlaunchConfig c{};
    c.gridDimX = c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 128;
    c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    int clusters = 0;
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuOccupancyMaxActiveClusters(&clusters, empty, &c));
    CHECK(clusters == 16 * 16);  // 16 blocks of 128 threads per SM
    int min_grid = 0, block = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuOccupancyMaxPotentialBlockSize(&min_grid, &block, empty, nullptr, 0, 0));
    CHECK(min_grid == 16 * (2048 / block));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(out));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));

    // The primary context's module runs in the green context too (it is "a normal primary
    // context but with the resources of the specified green context"), and on the whole device
    // in the primary context.
    CUcontext primary = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&primary, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(primary));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleLoadData(&m, swcu::test::ptx(kNsmid).c_str()));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleGetFunction(&nsmid, m, "nsmid"));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&out, sizeof(std::uint32_t)));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuLaunchKernel(nsmid, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&sms, out, sizeof sms));
    CHECK(sms == 16);
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchKernel(nsmid, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&sms, out, sizeof sms));
    CHECK(sms == 132);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(out));
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxDestroy(g));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
  }

  // cuCtxWaitEvent: "If the context passed to hCtx is the primary context, the primary context
  // and its green contexts will wait for hEvent."
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a wait in the primary context holds its green contexts' later work") {
    CUcontext primary = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&primary, 0));
    const CUgreenCtx g = green_of(8);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(primary));
    const CUstream producer = swcu::test::create_stream();
    const CUevent produced = swcu::test::create_event();
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(context_of(g)));
    const CUevent consumed = swcu::test::create_event();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    swcu::test::Gate gate;
    gate.start(primary, producer);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(produced, producer));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxWaitEvent(primary, produced));
    CUstream s = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(consumed, s));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(consumed), CUDA_ERROR_NOT_READY);
    gate.open();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventQuery(produced));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(producer));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(produced));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(consumed));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuGreenCtxDestroy(g));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a fault rule fails green context creation") {
    REQUIRE(ctl.add_fault_rule("cuGreenCtxCreate:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CUdevResource all = device_sms();
    const CUdevResourceDesc desc = describe(&all, 1);
    CUgreenCtx g = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM),
                           CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(ctl.live_handles(SWCU_GREEN_CONTEXT) == 0);
    ctl.clear_fault_rules();
  }
}
