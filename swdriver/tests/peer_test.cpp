// Peer access, peer attributes and peer copies between devices. Suite "env": each test case runs
// in a process of its own with SWCUDA_DEVICES=3 SWCUDA_P2P=0-1,1-0,0-2 (CMakeLists.txt): 0 and
// 1 reach each other, 0 reaches 2, 2 reaches nobody, 1 and 2 have no link.
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "sched_support.hpp"
#include "swdriver_test.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

struct PeerApi {
  PFN_cuCtxEnablePeerAccess_v4000 enable =
      swcu::test::proc<PFN_cuCtxEnablePeerAccess_v4000>("cuCtxEnablePeerAccess", 4000);
  PFN_cuCtxDisablePeerAccess_v4000 disable =
      swcu::test::proc<PFN_cuCtxDisablePeerAccess_v4000>("cuCtxDisablePeerAccess", 4000);
  PFN_cuDeviceGetP2PAtomicCapabilities_v13000 atomics =
      swcu::test::proc<PFN_cuDeviceGetP2PAtomicCapabilities_v13000>(
          "cuDeviceGetP2PAtomicCapabilities", 13000);
  PFN_cuMemcpyPeer_v7000_ptds copy_ptds = swcu::test::proc<PFN_cuMemcpyPeer_v7000_ptds>(
      "cuMemcpyPeer", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  PFN_cuMemcpyPeerAsync_v7000_ptsz copy_async_ptsz =
      swcu::test::proc<PFN_cuMemcpyPeerAsync_v7000_ptsz>(
          "cuMemcpyPeerAsync", 7000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
};

const PeerApi& peer() {
  static const PeerApi functions;
  return functions;
}

// The SWCUDA_P2P of these tests.
bool linked(int from, int to) {
  return (from == 0 && to == 1) || (from == 1 && to == 0) || (from == 0 && to == 2);
}

}  // namespace

TEST_SUITE("env") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "peer: attributes and atomics follow SWCUDA_P2P") {
    for (CUdevice a = 0; a < 3; ++a) {
      for (CUdevice b = 0; b < 3; ++b) {
        CAPTURE(a);
        CAPTURE(b);
        int can = -1;
        SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceCanAccessPeer(&can, a, b));
        CHECK(can == (a != b && linked(a, b) ? 1 : 0));
        int value = -1;
        const CUatomicOperation ops[] = {CU_ATOMIC_OPERATION_INTEGER_ADD, CU_ATOMIC_OPERATION_CAS,
                                         CU_ATOMIC_OPERATION_FLOAT_MIN};
        unsigned caps[3] = {99, 99, 99};
        if (a == b) {
          SWCU_TEST_CHECK_RESULT(
              cu.cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, a, b),
              CUDA_ERROR_INVALID_DEVICE);
          SWCU_TEST_CHECK_RESULT(peer().atomics(caps, ops, 3, a, b), CUDA_ERROR_INVALID_DEVICE);
          continue;
        }
        SWCU_TEST_REQUIRE_SUCCESS(
            cu.cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, a, b));
        CHECK(value == can);
        SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetP2PAttribute(
            &value, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, a, b));
        CHECK(value == can);
        SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetP2PAttribute(
            &value, CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED, a, b));
        CHECK(value == 0);
        SWCU_TEST_REQUIRE_SUCCESS(peer().atomics(caps, ops, 3, a, b));
        CHECK((caps[0] != 0) == (can != 0));
        CHECK(((caps[1] & CU_ATOMIC_CAPABILITY_SCALAR_64) != 0) == (can != 0));
        CHECK(caps[2] == 0);
      }
    }
    unsigned cap = 0;
    const auto bad = swcu::test::invalid_enum<CUatomicOperation>(CU_ATOMIC_OPERATION_MAX);
    SWCU_TEST_CHECK_RESULT(peer().atomics(&cap, &bad, 1, 0, 1), CUDA_ERROR_INVALID_VALUE);
    const CUatomicOperation add = CU_ATOMIC_OPERATION_INTEGER_ADD;
    SWCU_TEST_CHECK_RESULT(peer().atomics(&cap, &add, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(peer().atomics(nullptr, &add, 1, 0, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(peer().atomics(&cap, &add, 1, 0, 3), CUDA_ERROR_INVALID_DEVICE);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "peer: enabling and disabling access return the documented codes") {
    const CUcontext on0 = create_context(0);
    const CUcontext on1 = create_context(1);
    const CUcontext on2 = create_context(2);
    const CUcontext also0 = create_context(0);  // current
    const CUcontext gone = create_context(1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(gone));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(on0));

    SWCU_TEST_CHECK_RESULT(peer().enable(on1, 1), CUDA_ERROR_INVALID_VALUE);  // flags must be 0
    SWCU_TEST_CHECK_RESULT(peer().enable(gone, 0), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(peer().enable(nullptr, 0), CUDA_ERROR_INVALID_CONTEXT);
    int not_a_context = 0;
    SWCU_TEST_CHECK_RESULT(peer().enable(reinterpret_cast<CUcontext>(&not_a_context), 0),
                           CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(peer().enable(on0, 0), CUDA_ERROR_INVALID_CONTEXT);  // itself
    // Another context of the same device: cuDeviceCanAccessPeer(0, 0) is 0.
    SWCU_TEST_CHECK_RESULT(peer().enable(also0, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    SWCU_TEST_CHECK_RESULT(peer().disable(on1), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(on1, 0));
    SWCU_TEST_CHECK_RESULT(peer().enable(on1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(on2, 0));
    // Access is one way: from 1 to 0 is not enabled, and 2 cannot reach 0 at all.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(on1));
    SWCU_TEST_CHECK_RESULT(peer().disable(on0), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    SWCU_TEST_CHECK_RESULT(peer().enable(on2, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);  // no link
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(on0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(on2));
    SWCU_TEST_CHECK_RESULT(peer().enable(on0, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    SWCU_TEST_CHECK_RESULT(peer().disable(gone), CUDA_ERROR_INVALID_CONTEXT);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(on0));
    SWCU_TEST_REQUIRE_SUCCESS(peer().disable(on1));
    SWCU_TEST_CHECK_RESULT(peer().disable(on1), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(on1, 0));  // again

    // Without a current context.
    CUcontext popped = nullptr;
    while (ctl.context_stack_depth() > 0) SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_CHECK_RESULT(peer().enable(on1, 0), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(peer().disable(on1), CUDA_ERROR_INVALID_CONTEXT);
    for (const CUcontext c : {on0, on1, on2, also0})
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(c));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "peer: access ends when either context is destroyed or reset") {
    // Created contexts: destroying the peer ends access to it, in both directions.
    const CUcontext a = create_context(0);
    CUcontext b = create_context(1);
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(a, 0));  // from b
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(a));
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(b, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
    SWCU_TEST_CHECK_RESULT(peer().disable(b), CUDA_ERROR_INVALID_CONTEXT);
    b = create_context(1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(a));
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(b, 0));  // a new context: not enabled yet
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
    CUcontext popped = nullptr;
    while (ctl.context_stack_depth() > 0) SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));

    // Primary contexts keep their handle through a reset, not their peer access.
    CUcontext p0 = nullptr, p1 = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&p0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&p1, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(p0));
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(p1, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxReset_v2(1));  // the peer
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(p1, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxReset_v2(0));  // the context itself
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(p1, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));  // destroyed
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRetain(&p0, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(p0));
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(p1, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDevicePrimaryCtxRelease_v2(1));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "peer: fault rules and sticky errors apply to enabling") {
    const CUcontext b = create_context(1);
    const CUcontext a = create_context(0);
    REQUIRE(ctl.add_fault_rule("cuCtxEnablePeerAccess:1:CUDA_ERROR_TOO_MANY_PEERS;"
                               "cuCtxDisablePeerAccess:1:CUDA_ERROR_UNKNOWN") == 0);
    SWCU_TEST_CHECK_RESULT(peer().enable(b, 0), CUDA_ERROR_TOO_MANY_PEERS);
    SWCU_TEST_REQUIRE_SUCCESS(peer().enable(b, 0));  // the failed call changed nothing
    SWCU_TEST_CHECK_RESULT(peer().disable(b), CUDA_ERROR_UNKNOWN);
    SWCU_TEST_CHECK_RESULT(peer().enable(b, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    REQUIRE(ctl.add_fault_rule("cuCtxGetFlags:1:CUDA_ERROR_LAUNCH_FAILED:sticky") == 0);
    unsigned flags = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetFlags(&flags), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(peer().disable(b), CUDA_ERROR_LAUNCH_FAILED);  // `a` is broken
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(b));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "peer: copies between devices need no access and no current context") {
    const CUcontext c1 = create_context(1);
    CUdeviceptr on1 = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&on1, 4096));
    const CUcontext c2 = create_context(2);
    CUdeviceptr on2 = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&on2, 4096));
    const CUstream s2 = create_stream();
    std::vector<unsigned char> bytes(4096);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(on2, bytes.data(), bytes.size()));
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    REQUIRE(ctl.context_stack_depth() == 0);

    // 1 and 2 have no link and no access is enabled: the driver stages the copy.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyPeer(on1, c1, on2, c2, 4096));
    CHECK(std::memcmp(reinterpret_cast<void*>(on1), bytes.data(), 4096) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD8Async(on1, 9, 100, s2));  // on c2's stream
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyPeerAsync(on2, c2, on1, c1, 100, s2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s2));
    CHECK(reinterpret_cast<unsigned char*>(on2)[99] == 9);
    CHECK(reinterpret_cast<unsigned char*>(on2)[100] == bytes[100]);
    SWCU_TEST_REQUIRE_SUCCESS(peer().copy_ptds(on1 + 1000, c1, on2 + 1000, c2, 10));
    CHECK(reinterpret_cast<unsigned char*>(on1)[1005] == bytes[1005]);
    SWCU_TEST_REQUIRE_SUCCESS(peer().copy_async_ptsz(on1, c1, on2, c2, 1, s2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s2));
    CHECK(reinterpret_cast<unsigned char*>(on1)[0] == 9);
    // A NULL stream is the current context's default stream: there is none.
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeerAsync(on2, c2, on1, c1, 1, nullptr),
                           CUDA_ERROR_INVALID_CONTEXT);

    // Each pointer must be device memory of its context's device.
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(on1, c2, on2, c2, 16), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(on1, c1, on2, c1, 16), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(on1, c1, on2, c2, 4097), CUDA_ERROR_INVALID_VALUE);
    int host = 0;
    SWCU_TEST_CHECK_RESULT(
        cu.cuMemcpyPeer(on1, c1, reinterpret_cast<CUdeviceptr>(&host), c2, sizeof host),
        CUDA_ERROR_INVALID_VALUE);
    const CUcontext gone = create_context(0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(gone));
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(on1, gone, on2, c2, 16), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(cu.cuMemcpyPeer(on1, c1, on2, gone, 16), CUDA_ERROR_INVALID_CONTEXT);

    // The synchronous copy runs in the destination context's default stream, after its work.
    std::memset(reinterpret_cast<void*>(on1), 0, 4096);
    swcu::test::Gate gate;
    gate.start(c1, CU_STREAM_LEGACY);
    std::thread copier([&] { CHECK(cu.cuMemcpyPeer(on1, c1, on2, c2, 4096) == CUDA_SUCCESS); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(reinterpret_cast<unsigned char*>(on1)[1] == 0);  // still behind the gate
    gate.finish();
    copier.join();
    CHECK(std::memcmp(reinterpret_cast<void*>(on1), reinterpret_cast<void*>(on2), 4096) == 0);

    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(c2));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(c1));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "peer: pool access from other devices follows SWCUDA_P2P") {
    CUmemoryPool pools[3] = {};
    for (CUdevice d = 0; d < 3; ++d)
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetDefaultMemPool(&pools[d], d));
    for (CUdevice owner = 0; owner < 3; ++owner) {
      for (CUdevice from = 0; from < 3; ++from) {
        if (from == owner) continue;
        CAPTURE(owner);
        CAPTURE(from);
        CUmemAccessDesc desc{};
        desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        desc.location.id = from;
        desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
        SWCU_TEST_CHECK_RESULT(cu.cuMemPoolSetAccess(pools[owner], &desc, 1),
                               linked(from, owner) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
        CUmemAccess_flags flags{};
        SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolGetAccess(&flags, pools[owner], &desc.location));
        CHECK(flags == (linked(from, owner) ? CU_MEM_ACCESS_FLAGS_PROT_READ
                                            : CU_MEM_ACCESS_FLAGS_PROT_NONE));
        desc.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;  // always allowed
        SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolSetAccess(pools[owner], &desc, 1));
      }
    }
  }
}
