// Stream attributes: cuStreamSetAttribute, cuStreamGetAttribute and cuStreamCopyAttributes store
// the attributes cuda.h marks "Valid for streams", with the checks it documents.
#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

CUstreamAttrValue get(CUstream s, CUstreamAttrID attr) {
  CUstreamAttrValue v{};
  REQUIRE(swcu::test::api().cuStreamGetAttribute(s, attr, &v) == CUDA_SUCCESS);
  return v;
}

CUaccessPolicyWindow window(std::size_t bytes, float hit_ratio, CUaccessProperty hit,
                            CUaccessProperty miss) {
  CUaccessPolicyWindow w{};
  w.base_ptr = reinterpret_cast<void*>(0x10000);
  w.num_bytes = bytes;
  w.hitRatio = hit_ratio;
  w.hitProp = hit;
  w.missProp = miss;
  return w;
}

}  // namespace

TEST_SUITE("stream attributes") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a new stream's attributes are the defaults") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CHECK(get(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW).accessPolicyWindow.num_bytes == 0);
    CHECK(get(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY).syncPolicy == CU_SYNC_POLICY_AUTO);
    CHECK(get(s, CU_STREAM_ATTRIBUTE_PRIORITY).priority == 0);
    CHECK(get(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN).memSyncDomain ==
          CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT);
    const CUlaunchMemSyncDomainMap map =
        get(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP).memSyncDomainMap;
    CHECK(map.default_ == 0);
    CHECK(map.remote == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "every stream attribute is stored and read back") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    CUstreamAttrValue v{};
    v.accessPolicyWindow =
        window(1 << 20, 0.5f, CU_ACCESS_PROPERTY_PERSISTING, CU_ACCESS_PROPERTY_STREAMING);
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
    const CUaccessPolicyWindow w =
        get(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW).accessPolicyWindow;
    CHECK(w.base_ptr == reinterpret_cast<void*>(0x10000));
    CHECK(w.num_bytes == 1 << 20);
    CHECK(w.hitRatio == 0.5f);
    CHECK(w.hitProp == CU_ACCESS_PROPERTY_PERSISTING);
    CHECK(w.missProp == CU_ACCESS_PROPERTY_STREAMING);
    v = {};
    v.syncPolicy = CU_SYNC_POLICY_BLOCKING_SYNC;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    CHECK(get(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY).syncPolicy ==
          CU_SYNC_POLICY_BLOCKING_SYNC);
    v = {};
    v.memSyncDomainMap = {2, 3};
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &v));
    CHECK(get(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP).memSyncDomainMap.default_ == 2);
    CHECK(get(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP).memSyncDomainMap.remote == 3);
    v = {};
    v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamSetAttribute_ptsz(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
    CHECK(get(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN).memSyncDomain ==
          CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // The priority attribute is the stream's priority: cuStreamGetPriority agrees, and values
  // outside cuCtxGetStreamPriorityRange are clamped as for cuStreamCreateWithPriority.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "the priority attribute is the stream's priority") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    int least = 0, greatest = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxGetStreamPriorityRange(&least, &greatest));
    CUstreamAttrValue v{};
    v.priority = greatest;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
    int priority = 1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamGetPriority(s, &priority));
    CHECK(priority == greatest);
    v.priority = greatest - 100;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
    CHECK(get(s, CU_STREAM_ATTRIBUTE_PRIORITY).priority == greatest);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // CUaccessPolicyWindow: num_bytes at most CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE,
  // hitRatio a fraction, missProp "Must be either NORMAL or STREAMING"; the attributes that are
  // not "Valid for streams" (cooperative, cluster dimension...) are refused.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "invalid stream attributes are refused") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    int max_window = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuDeviceGetAttribute(&max_window, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, 0));
    CUstreamAttrValue v{};
    const auto refused = [&](CUstreamAttrID attr) {
      return cu.cuStreamSetAttribute(s, attr, &v) == CUDA_ERROR_INVALID_VALUE;
    };
    const auto apw = CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW;
    v.accessPolicyWindow = window(static_cast<std::size_t>(max_window), 1.0f,
                                  CU_ACCESS_PROPERTY_NORMAL, CU_ACCESS_PROPERTY_NORMAL);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSetAttribute(s, apw, &v));
    v.accessPolicyWindow.num_bytes += 1;
    CHECK(refused(apw));
    v.accessPolicyWindow = window(64, 1.5f, CU_ACCESS_PROPERTY_NORMAL, CU_ACCESS_PROPERTY_NORMAL);
    CHECK(refused(apw));
    v.accessPolicyWindow = window(64, -0.1f, CU_ACCESS_PROPERTY_NORMAL, CU_ACCESS_PROPERTY_NORMAL);
    CHECK(refused(apw));
    v.accessPolicyWindow =
        window(64, 0.5f, CU_ACCESS_PROPERTY_NORMAL, CU_ACCESS_PROPERTY_PERSISTING);
    CHECK(refused(apw));
    v.accessPolicyWindow =
        window(64, 0.5f, swcu::test::invalid_enum<CUaccessProperty>(3), CU_ACCESS_PROPERTY_NORMAL);
    CHECK(refused(apw));
    CHECK(get(s, apw).accessPolicyWindow.num_bytes == static_cast<std::size_t>(max_window));
    v = {};
    v.syncPolicy = swcu::test::invalid_enum<CUsynchronizationPolicy>(0);
    CHECK(refused(CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY));
    v.syncPolicy = swcu::test::invalid_enum<CUsynchronizationPolicy>(5);
    CHECK(refused(CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY));
    v = {};
    v.memSyncDomainMap = {4, 0};  // CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT is 4
    CHECK(refused(CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP));
    v = {};
    v.memSyncDomain = swcu::test::invalid_enum<CUlaunchMemSyncDomain>(2);
    CHECK(refused(CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN));
    v = {};
    CHECK(refused(CU_LAUNCH_ATTRIBUTE_COOPERATIVE));
    CHECK(refused(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION));
    CUstreamAttrValue out{};
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetAttribute(s, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &out),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamGetAttribute(reinterpret_cast<CUstream>(0x10),
                                                   CU_STREAM_ATTRIBUTE_PRIORITY, &out),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // cuStreamCopyAttributes: "Both streams must have the same context."
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "copying attributes needs streams of one context") {
    const CUcontext ctx = create_context();
    const CUstream from = create_stream();
    const CUstream to = create_stream();
    CUstreamAttrValue v{};
    v.syncPolicy = CU_SYNC_POLICY_SPIN;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamSetAttribute(from, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    v = {};
    v.priority = -1;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSetAttribute(from, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamCopyAttributes(to, from));
    CHECK(get(to, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY).syncPolicy == CU_SYNC_POLICY_SPIN);
    CHECK(get(to, CU_STREAM_ATTRIBUTE_PRIORITY).priority == -1);
    const CUcontext other_ctx = create_context();
    const CUstream other = create_stream();
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCopyAttributes(other, from), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other_ctx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamCopyAttributes(to, reinterpret_cast<CUstream>(0x10)),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(from));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(to));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
