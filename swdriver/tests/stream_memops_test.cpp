// Stream memory operations (cuStreamWaitValue32/64, cuStreamWriteValue32/64,
// cuStreamBatchMemOp): what cuda.h documents for them, a wait blocking only its own stream until
// a kernel, another stream or a host thread writes the value, and the checks before enqueuing.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "graph_support.hpp"
#include "module_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::create_context;
using swcu::test::create_stream;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string{} : std::string{value};
}

CUdeviceptr device_words(std::size_t count) {
  CUdeviceptr p = 0;
  REQUIRE(swcu::test::api().cuMemAlloc_v2(&p, count * 8) == CUDA_SUCCESS);
  REQUIRE(swcu::test::api().cuMemsetD32_v2(p, 0, count * 2) == CUDA_SUCCESS);
  return p;
}

std::uint32_t read32(CUdeviceptr p) {
  std::uint32_t v = 0;
  REQUIRE(swcu::test::api().cuMemcpyDtoH_v2(&v, p, 4) == CUDA_SUCCESS);
  return v;
}

std::uint64_t read64(CUdeviceptr p) {
  std::uint64_t v = 0;
  REQUIRE(swcu::test::api().cuMemcpyDtoH_v2(&v, p, 8) == CUDA_SUCCESS);
  return v;
}

// Whether a 32-bit wait with `flags` on memory that holds `current` is satisfied at once.
bool satisfied32(CUstream s, CUdeviceptr p, std::uint32_t current, std::uint32_t value,
                 unsigned flags) {
  const auto& cu = swcu::test::api();
  REQUIRE(cu.cuMemcpyHtoD_v2(p, &current, 4) == CUDA_SUCCESS);
  REQUIRE(cu.cuStreamWaitValue32(s, p, value, flags) == CUDA_SUCCESS);
  const CUresult r = cu.cuStreamQuery(s);
  REQUIRE((r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY));
  if (r == CUDA_ERROR_NOT_READY) {  // release it with a value that satisfies the condition
    const std::uint32_t release = (flags & 0xf) == CU_STREAM_WAIT_VALUE_NOR ? 0 : value;
    REQUIRE(cu.cuMemcpyHtoD_v2(p, &release, 4) == CUDA_SUCCESS);
    REQUIRE(cu.cuStreamSynchronize(s) == CUDA_SUCCESS);
  }
  return r == CUDA_SUCCESS;
}

bool satisfied64(CUstream s, CUdeviceptr p, std::uint64_t current, std::uint64_t value,
                 unsigned flags) {
  const auto& cu = swcu::test::api();
  REQUIRE(cu.cuMemcpyHtoD_v2(p, &current, 8) == CUDA_SUCCESS);
  REQUIRE(cu.cuStreamWaitValue64(s, p, value, flags) == CUDA_SUCCESS);
  const CUresult r = cu.cuStreamQuery(s);
  REQUIRE((r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY));
  if (r == CUDA_ERROR_NOT_READY) {
    const std::uint64_t release = (flags & 0xf) == CU_STREAM_WAIT_VALUE_NOR ? 0 : value;
    REQUIRE(cu.cuMemcpyHtoD_v2(p, &release, 8) == CUDA_SUCCESS);
    REQUIRE(cu.cuStreamSynchronize(s) == CUDA_SUCCESS);
  }
  return r == CUDA_SUCCESS;
}

CUstreamBatchMemOpParams write_op(unsigned kind, CUdeviceptr p, std::uint64_t v) {
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = static_cast<CUstreamBatchMemOpType>(kind);
  op.writeValue.address = p;
  if (kind == CU_STREAM_MEM_OP_WRITE_VALUE_32) {
    op.writeValue.value = static_cast<cuuint32_t>(v);
  } else {
    op.writeValue.value64 = v;
  }
  return op;
}

CUstreamBatchMemOpParams wait_op(unsigned kind, CUdeviceptr p, std::uint64_t v, unsigned flags) {
  CUstreamBatchMemOpParams op{};
  op.waitValue.operation = static_cast<CUstreamBatchMemOpType>(kind);
  op.waitValue.address = p;
  if (kind == CU_STREAM_MEM_OP_WAIT_VALUE_32) {
    op.waitValue.value = static_cast<cuuint32_t>(v);
  } else {
    op.waitValue.value64 = v;
  }
  op.waitValue.flags = flags;
  return op;
}

}  // namespace

TEST_SUITE("stream memory operations") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "writes store 32 and 64-bit values in stream order") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr p = device_words(2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue32(s, p, 0xdeadbeefu, 0));
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamWriteValue64(s, p + 8, 0x0123456789abcdefull, CU_STREAM_WRITE_VALUE_DEFAULT));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(read32(p) == 0xdeadbeefu);
    CHECK(read64(p + 8) == 0x0123456789abcdefull);
    // NO_MEMORY_BARRIER only permits reordering with earlier writes.
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamWriteValue32_ptsz(s, p, 7, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(read32(p) == 7);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // cuda.h, CUstreamWaitValue_flags: GEQ is (int32_t)(*addr - value) >= 0, "a cyclic comparison
  // which ignores wraparound"; EQ *addr == value; AND (*addr & value) != 0; NOR ~(*addr | value)
  // != 0.
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "wait conditions are the ones cuda.h defines") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr p = device_words(1);
    CHECK(satisfied32(s, p, 5, 5, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK(satisfied32(s, p, 6, 5, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK_FALSE(satisfied32(s, p, 4, 5, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK(satisfied32(s, p, 2, 0xfffffff0u, CU_STREAM_WAIT_VALUE_GEQ));  // wrapped around: later
    CHECK_FALSE(satisfied32(s, p, 0xfffffff0u, 2, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK(satisfied32(s, p, 9, 9, CU_STREAM_WAIT_VALUE_EQ));
    CHECK_FALSE(satisfied32(s, p, 10, 9, CU_STREAM_WAIT_VALUE_EQ));
    CHECK(satisfied32(s, p, 0b0110, 0b0100, CU_STREAM_WAIT_VALUE_AND));
    CHECK_FALSE(satisfied32(s, p, 0b0011, 0b0100, CU_STREAM_WAIT_VALUE_AND));
    CHECK(satisfied32(s, p, 0xffff0000u, 0x0000fff0u, CU_STREAM_WAIT_VALUE_NOR));  // bits 0-3 free
    CHECK_FALSE(satisfied32(s, p, 0xffff0000u, 0x0000ffffu, CU_STREAM_WAIT_VALUE_NOR));
    CHECK(satisfied32(s, p, 5, 5, CU_STREAM_WAIT_VALUE_GEQ | CU_STREAM_WAIT_VALUE_FLUSH));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(p, 0, 2));
    const CUdeviceptr q = device_words(1);
    CHECK(satisfied64(s, q, 1ull << 40, 1ull << 40, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK_FALSE(satisfied64(s, q, (1ull << 40) - 1, 1ull << 40, CU_STREAM_WAIT_VALUE_GEQ));
    CHECK(satisfied64(s, q, 3, ~0ull - 3, CU_STREAM_WAIT_VALUE_GEQ));  // 64-bit wraparound
    CHECK(satisfied64(s, q, 1ull << 33, 1ull << 33, CU_STREAM_WAIT_VALUE_EQ));
    CHECK_FALSE(satisfied64(s, q, 1ull << 32, 1ull << 33, CU_STREAM_WAIT_VALUE_EQ));
    CHECK(satisfied64(s, q, 1ull << 50, 1ull << 50, CU_STREAM_WAIT_VALUE_AND));
    CHECK_FALSE(satisfied64(s, q, 1ull << 49, 1ull << 50, CU_STREAM_WAIT_VALUE_AND));
    CHECK(satisfied64(s, q, ~0ull << 1, 0, CU_STREAM_WAIT_VALUE_NOR));  // bit 0 free
    CHECK_FALSE(satisfied64(s, q, ~0ull << 1, 1, CU_STREAM_WAIT_VALUE_NOR));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(q));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a wait blocks only its stream until another stream writes the value") {
    const CUcontext ctx = create_context();
    const CUstream waiting = create_stream();
    const CUstream other = create_stream();
    const CUdeviceptr flag = device_words(1);
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitValue32(waiting, flag, 1, CU_STREAM_WAIT_VALUE_EQ));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(waiting, 2));
    SWCU_TEST_REQUIRE_SUCCESS(log.enqueue(other, 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(other));
    CHECK(log.order() == std::vector<int>{1});
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(waiting), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue32(other, flag, 1, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(waiting));
    CHECK(log.order() == std::vector<int>{1, 2});
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(flag));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(waiting));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // A host thread writes page-locked memory while the main thread is inside cuStreamSynchronize:
  // the synchronize polls the memory, it does not deadlock the process.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a host thread releases a wait through page-locked memory") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    void* host = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&host, 16, CU_MEMHOSTALLOC_DEVICEMAP));
    auto* word = static_cast<std::uint64_t*>(host);
    *word = 0;
    const auto address = reinterpret_cast<CUdeviceptr>(host);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitValue64(s, address, 3, CU_STREAM_WAIT_VALUE_GEQ));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue64(s, address + 8, 42, 0));
    std::atomic<bool> synchronizing{false};
    std::thread writer([&] {
      while (!synchronizing.load()) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it block first
      std::atomic_ref<std::uint64_t>(*word).store(3);
    });
    synchronizing.store(true);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_SUCCESS);
    writer.join();
    CHECK(word[1] == 42);  // the write after the wait ran after it was released
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(host));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // On a GPU an event recorded after a wait completes once the host stores the value, and
  // cuEventQuery then reports it: the query itself must look at the memory again.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "cuEventQuery sees a wait released by a host store without another call") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    void* host = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&host, 8, CU_MEMHOSTALLOC_DEVICEMAP));
    auto* word = static_cast<std::uint32_t*>(host);
    *word = 0;
    CUevent e = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuStreamWaitValue32(s, reinterpret_cast<CUdeviceptr>(host), 7, CU_STREAM_WAIT_VALUE_EQ));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
    std::atomic_ref<std::uint32_t>(*word).store(7);
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeHost(host));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::ModuleTest, "a kernel in another stream releases a wait") {
    const std::string text = swcu::test::ptx(R"(
.visible .entry release(.param .u64 flag, .param .u32 value)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [flag];
  ld.param.u32 %r1, [value];
  st.global.u32 [%rd1], %r1;
  ret;
}
)");
    CUmodule m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleLoadData(&m, text.c_str()));
    CUfunction f = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleGetFunction(&f, m, "release"));
    const CUstream waiting = create_stream();
    const CUstream producer = create_stream();
    CUdeviceptr flag = device_words(2);
    const CUdeviceptr after = flag + 4;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitValue32(waiting, flag, 5, CU_STREAM_WAIT_VALUE_GEQ));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue32(waiting, after, 99, 0));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(waiting), CUDA_ERROR_NOT_READY);
    CHECK(read32(after) == 0);
    unsigned value = 7;
    void* args[] = {&flag, &value};
    SWCU_TEST_REQUIRE_SUCCESS(
        swcu::test::mod().cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, producer, args, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(waiting));
    CHECK(read32(flag) == 7);
    CHECK(read32(after) == 99);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(flag));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(waiting));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(producer));
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::mod().cuModuleUnload(m));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a batch runs its operations in order and is validated as a whole") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr p = device_words(3);
    CUstreamBatchMemOpParams ops[5] = {
        write_op(CU_STREAM_MEM_OP_WRITE_VALUE_32, p, 11),
        wait_op(CU_STREAM_MEM_OP_WAIT_VALUE_32, p, 11, CU_STREAM_WAIT_VALUE_EQ),
        write_op(CU_STREAM_MEM_OP_WRITE_VALUE_64, p + 8, 1ull << 40),
        {},
        {},
    };
    ops[3].flushRemoteWrites.operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
    ops[4].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
    ops[4].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_GPU;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamBatchMemOp(s, 5, ops, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(read32(p) == 11);
    CHECK(read64(p + 8) == 1ull << 40);
    // "count: Must be less than 256"; "flags: must be 0"; the barrier is "Only supported in the
    // _v2 API".
    CUstreamBatchMemOpParams many[256] = {};
    SWCU_TEST_CHECK_RESULT(cu.cuStreamBatchMemOp(s, 256, many, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamBatchMemOp(s, 1, ops, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamBatchMemOp(s, 1, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamBatchMemOp_v1(s, 1, &ops[4], 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamBatchMemOp_v1(s, 2, &ops[2], 0));
    // One invalid operation (an unknown kind) and nothing of the batch is enqueued.
    CUstreamBatchMemOpParams bad[2] = {write_op(CU_STREAM_MEM_OP_WRITE_VALUE_32, p + 16, 5), {}};
    bad[1].operation = swcu::test::invalid_enum<CUstreamBatchMemOpType>(99);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamBatchMemOp(s, 2, bad, 0), CUDA_ERROR_INVALID_VALUE);
    ops[4].memoryBarrier.flags = 7;
    SWCU_TEST_CHECK_RESULT(cu.cuStreamBatchMemOp(s, 1, &ops[4], 0), CUDA_ERROR_INVALID_VALUE);
    ops[3].flushRemoteWrites.flags = 1;
    SWCU_TEST_CHECK_RESULT(cu.cuStreamBatchMemOp(s, 1, &ops[3], 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(read32(p + 16) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "memory operations need an aligned address the device can use") {
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWriteValue32(nullptr, 0, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr p = device_words(2);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWriteValue32(s, p + 2, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitValue64(s, p + 4, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWriteValue64(s, p + 12, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitValue32(s, 0x1000, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitValue32(s, p + 16, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitValue32(s, p, 1, 4), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWriteValue32(s, p, 1, 2), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWaitValue32(reinterpret_cast<CUstream>(0x10), p, 1, 0),
                           CUDA_ERROR_INVALID_HANDLE);
    // "This function cannot be used with managed memory (cuMemAllocManaged)."
    CUdeviceptr managed = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&managed, 64, CU_MEM_ATTACH_GLOBAL));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWriteValue32(s, managed, 1, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(managed));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    CHECK(read64(p) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "the v1 exports and the per-thread default stream have the same semantics") {
    const CUcontext ctx = create_context();
    const CUdeviceptr p = device_words(2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue64_v1(nullptr, p + 8, 5, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitValue32_v1(nullptr, p, 0, CU_STREAM_WAIT_VALUE_EQ));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue32_ptsz(nullptr, p, 3, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitValue32_ptsz(nullptr, p, 3, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize_ptsz(nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    CHECK(read32(p) == 3);
    CHECK(read64(p + 8) == 5);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "fault rules apply to memory operations") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr p = device_words(1);
    REQUIRE(ctl.add_fault_rule("cuStreamWriteValue32:1:CUDA_ERROR_NOT_SUPPORTED") == 0);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamWriteValue32(s, p, 1, 0), CUDA_ERROR_NOT_SUPPORTED);
    REQUIRE(ctl.add_fault_rule("cuStreamBatchMemOp:1:CUDA_ERROR_LAUNCH_FAILED:async") == 0);
    CUstreamBatchMemOpParams op = write_op(CU_STREAM_MEM_OP_WRITE_VALUE_32, p, 9);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamBatchMemOp(s, 1, &op, 0));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
    CHECK(read32(p) == 0);  // the failed operation did not write
    ctl.clear_fault_rules();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}

TEST_SUITE("deferred") {
  // In deferred mode nothing runs until a call synchronizes; a synchronize blocked on a memory
  // wait runs the other streams' work, since any of it may write the value.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "deferred: a synchronize blocked on a memory wait runs other streams") {
    const CUcontext ctx = create_context();
    const CUstream waiting = create_stream();
    const CUstream other = create_stream();
    const CUdeviceptr flag = device_words(1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitValue32(waiting, flag, 1, CU_STREAM_WAIT_VALUE_EQ));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue32(other, flag, 1, 0));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(other), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(waiting));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamQuery(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(flag));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(waiting));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(other));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}

TEST_SUITE("env") {
  // On a GPU a wait that is never satisfied hangs its stream, and whoever synchronizes it,
  // forever. SWCUDA_STREAM_WAIT_TIMEOUT bounds it: the wait fails with
  // CUDA_ERROR_LAUNCH_TIMEOUT, reported by the synchronize (not sticky), and the stream goes on.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "SWCUDA_STREAM_WAIT_TIMEOUT ends a memory wait that never holds") {
    REQUIRE_MESSAGE(env("SWCUDA_STREAM_WAIT_TIMEOUT") == "0.1",
                    "run by CTest with the variable set");
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUdeviceptr p = device_words(2);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitValue32(s, p, 1, CU_STREAM_WAIT_VALUE_EQ));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWriteValue32(s, p + 4, 8, 0));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_TIMEOUT);
    CHECK(read32(p + 4) == 8);  // the work after the wait ran
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
