// Pool access as kernels and graph copies meet it: a device that cuMemPoolSetAccess has not let
// in faults on a pool's memory when the work executes, as the copy engine does for stream copies
// (pool_location_test.cpp). Run with SWCUDA_DEVICES=3 (CMakeLists.txt).
#include "graph_fixture.hpp"

namespace {

using swcu::test::api;
using swcu::test::create_context;
using swcu::test::create_stream;
using swcu::test::gr;
using swcu::test::kernel_file;
using swcu::test::mod;
using swcu::test::read_bytes;

// A pool on device 0 with `count` floats of 1.0 allocated from it.
struct PoolMemory {
  CUmemoryPool pool = nullptr;
  CUdeviceptr data = 0;
  CUstream owner_stream = nullptr;

  explicit PoolMemory(std::size_t count) {
    auto& cu = swcu::test::api();
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    REQUIRE(cu.cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
    owner_stream = create_stream();
    REQUIRE(cu.cuMemAllocFromPoolAsync(&data, count * 4, pool, owner_stream) == CUDA_SUCCESS);
    REQUIRE(cu.cuMemsetD32Async(data, 0x3f800000u, count, owner_stream) == CUDA_SUCCESS);
    REQUIRE(cu.cuStreamSynchronize(owner_stream) == CUDA_SUCCESS);
  }
  void let_in(int device, CUmemAccess_flags flags) const {
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = device;
    desc.flags = flags;
    REQUIRE(swcu::test::api().cuMemPoolSetAccess(pool, &desc, 1) == CUDA_SUCCESS);
  }
};

// Instantiates `g`, launches it in `s`, checks what synchronizing gives, and destroys both.
void run_graph(CUgraph g, CUstream s, CUresult expected) {
  CUgraphExec exec = nullptr;
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphInstantiate(&exec, g, 0));
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(exec, s));
  SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(s), expected);
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphExecDestroy(exec));
  SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphDestroy(g));
}

}  // namespace

TEST_SUITE("env") {
  // "cudaMemPoolSetAccess modifies what devices can access allocations from a pool" (CUDA
  // Programming Guide, stream-ordered allocator): without it, a kernel on another device faults
  // as on an unmapped address (CUDA_ERROR_ILLEGAL_ADDRESS, sticky), and so does a graph's copy.
  TEST_CASE_FIXTURE(swcu::test::GraphTest,
                    "peer: kernels and graph copies on a device without pool access fault") {
    constexpr unsigned n = 64;
    const PoolMemory memory{n};  // in the fixture's context, on device 0
    float a = 2.0f;
    unsigned count = n;
    void* args[] = {&a, const_cast<CUdeviceptr*>(&memory.data),
                    const_cast<CUdeviceptr*>(&memory.data), &count};

    // Each round makes a context on device 1, loads the kernels there and runs saxpy (y = 2y + y
    // in place) and a graph memset node on the pool's memory from that device's stream.
    const auto round = [&](CUresult expected) {
      const CUcontext peer = create_context(1);
      const CUstream s1 = create_stream();
      const CUmodule m1 = load(read_bytes(kernel_file("sw_kernels.ptx")));
      const CUfunction saxpy = function(m1, "saxpy");
      SWCU_TEST_REQUIRE_SUCCESS(
          mod().cuLaunchKernel(saxpy, 1, 1, 1, n, 1, 1, 0, s1, args, nullptr));
      SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(s1), expected);
      if (expected == CUDA_SUCCESS) {  // a broken context runs nothing more
        CUgraph g = nullptr;
        SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphCreate(&g, 0));
        CUDA_MEMSET_NODE_PARAMS fill{};
        fill.dst = memory.data;
        fill.value = 0x40800000u;  // 4.0f
        fill.elementSize = 4;
        fill.width = n;
        fill.height = 1;
        CUgraphNode node = nullptr;
        SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemsetNode(&node, g, nullptr, 0, &fill, peer));
        run_graph(g, s1, expected);
      }
      SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxDestroy_v2(peer));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSetCurrent(ctx));
    };

    round(CUDA_ERROR_ILLEGAL_ADDRESS);  // no access: the kernel faults, nothing is written
    CHECK(reinterpret_cast<const float*>(memory.data)[0] == 1.0f);

    // Read-only access: a kernel that writes faults; so does a graph memset.
    memory.let_in(1, CU_MEM_ACCESS_FLAGS_PROT_READ);
    round(CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(reinterpret_cast<const float*>(memory.data)[n - 1] == 1.0f);

    memory.let_in(1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    round(CUDA_SUCCESS);  // saxpy gives 3.0, then the graph's memset 4.0
    CHECK(reinterpret_cast<const float*>(memory.data)[0] == 4.0f);

    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFreeAsync(memory.data, memory.owner_stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(memory.owner_stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(memory.owner_stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemPoolDestroy(memory.pool));
  }

  // A graph's memcpy node run by a device without access faults too; with access it copies.
  TEST_CASE_FIXTURE(swcu::test::GraphTest,
                    "peer: a graph memcpy node honours pool access on the launching device") {
    constexpr unsigned n = 16;
    const PoolMemory memory{n};
    const CUcontext peer = create_context(1);
    const CUstream s1 = create_stream();
    CUdeviceptr out = 0;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemAlloc_v2(&out, n * 4));  // device 1's own memory
    CUgraph g = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphCreate(&g, 0));
    CUDA_MEMCPY3D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = memory.data;
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = out;
    copy.WidthInBytes = n * 4;
    copy.Height = 1;
    copy.Depth = 1;
    CUgraphNode node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemcpyNode(&node, g, nullptr, 0, &copy, peer));
    run_graph(g, s1, CUDA_ERROR_ILLEGAL_ADDRESS);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxDestroy_v2(peer));

    memory.let_in(1, CU_MEM_ACCESS_FLAGS_PROT_READ);  // reading is enough for the source
    const CUcontext again = create_context(1);
    const CUstream s2 = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemAlloc_v2(&out, n * 4));
    copy.dstDevice = out;
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphCreate(&g, 0));
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphAddMemcpyNode(&node, g, nullptr, 0, &copy, again));
    run_graph(g, s2, CUDA_SUCCESS);
    CHECK(reinterpret_cast<const float*>(out)[n - 1] == 1.0f);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFree_v2(out));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxDestroy_v2(again));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSetCurrent(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFreeAsync(memory.data, memory.owner_stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(memory.owner_stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(memory.owner_stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemPoolDestroy(memory.pool));
  }

  // cuMemPoolCreate (cuda.h): "In the case of pools created with CU_MEM_LOCATION_TYPE_HOST_NUMA
  // or CU_MEM_LOCATION_TYPE_HOST, their default accessibility will be from the host CPU": a
  // kernel on a device the pool has not let in faults on its memory (CUDA_ERROR_ILLEGAL_ADDRESS,
  // sticky); once cuMemPoolSetAccess lets the device in, the kernel reads and writes the same
  // host memory the CPU sees.
  TEST_CASE_FIXTURE(swcu::test::GraphTest,
                    "peer: kernels need pool access to a host pool's memory") {
    constexpr unsigned n = 32;
    for (const CUmemLocationType type :
         {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA}) {
      CAPTURE(type);
      CUmemPoolProps props{};
      props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
      props.location.type = type;
      CUmemoryPool pool = nullptr;
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemPoolCreate(&pool, &props));
      const CUstream owner = create_stream();
      CUdeviceptr data = 0;
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemAllocFromPoolAsync(&data, n * 4, pool, owner));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(owner));
      auto* const host = reinterpret_cast<float*>(data);
      for (unsigned i = 0; i < n; ++i) host[i] = 1.0f;
      float a = 2.0f;
      unsigned count = n;
      void* args[] = {&a, &data, &data, &count};
      const auto round = [&](CUresult expected) {
        const CUcontext other = create_context(0);
        const CUstream s = create_stream();
        const CUfunction saxpy = function(load(read_bytes(kernel_file("sw_kernels.ptx"))), "saxpy");
        SWCU_TEST_REQUIRE_SUCCESS(
            mod().cuLaunchKernel(saxpy, 1, 1, 1, n, 1, 1, 0, s, args, nullptr));
        SWCU_TEST_CHECK_RESULT(api().cuStreamSynchronize(s), expected);
        SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxDestroy_v2(other));
        SWCU_TEST_REQUIRE_SUCCESS(api().cuCtxSetCurrent(ctx));
      };
      round(CUDA_ERROR_ILLEGAL_ADDRESS);
      CHECK(host[0] == 1.0f);  // nothing was written
      CUmemAccessDesc desc{};
      desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      desc.location.id = 0;
      desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemPoolSetAccess(pool, &desc, 1));
      round(CUDA_SUCCESS);
      CHECK(host[n - 1] == 3.0f);  // y = 2y + y, seen by the host
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemFreeAsync(data, owner));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(owner));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamDestroy_v2(owner));
      SWCU_TEST_REQUIRE_SUCCESS(api().cuMemPoolDestroy(pool));
    }
  }
}
