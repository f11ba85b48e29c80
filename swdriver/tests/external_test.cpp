// External memory and semaphores (cuImportExternalMemory, cuExternalMemoryGetMappedBuffer,
// cuImportExternalSemaphore, cuSignal/WaitExternalSemaphoresAsync, the destroys): a memfd
// imported as OPAQUE_FD memory is mapped for real (kernels and copies reach the file's bytes),
// the descriptor becomes the driver's, semaphores order streams, and what the Linux driver
// refuses is refused.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "graph_support.hpp"
#include "module_support.hpp"
#include "sched_support.hpp"

namespace {

using swcu::test::create_stream;
using swcu::test::mod;

// A memfd of `bytes` bytes (the test's stand-in for a Vulkan allocation's exported fd).
int memfd(std::size_t bytes) {
  const int fd = memfd_create("swcuda-external-test", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  return fd;
}

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

CUDA_EXTERNAL_MEMORY_HANDLE_DESC memory_desc(int fd, unsigned long long size) {
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
  d.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  d.size = size;
  return d;
}

CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC semaphore_desc(int fd, CUexternalSemaphoreHandleType type) {
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d{};
  d.type = type;
  d.handle.fd = fd;
  return d;
}

// A timeline semaphore imported from a memfd whose 64-bit payload the test maps (`word`);
// destroyed, unmapped and closed with the object.
struct TimelineSemaphore {
  TimelineSemaphore() {
    fd = memfd(8);
    word = static_cast<std::uint64_t*>(mmap(nullptr, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    REQUIRE(word != MAP_FAILED);
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d =
        semaphore_desc(dup(fd), CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD);
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::api().cuImportExternalSemaphore(&sem, &d));
  }
  ~TimelineSemaphore() {
    CHECK(swcu::test::api().cuDestroyExternalSemaphore(sem) == CUDA_SUCCESS);
    munmap(word, 8);
    close(fd);
  }
  TimelineSemaphore(const TimelineSemaphore&) = delete;
  TimelineSemaphore& operator=(const TimelineSemaphore&) = delete;

  int fd = -1;
  std::uint64_t* word = nullptr;
  CUexternalSemaphore sem = nullptr;
};

struct ExternalTest : swcu::test::ModuleTest {
  CUresult map(CUdeviceptr* p, CUexternalMemory m, unsigned long long offset,
               unsigned long long size, unsigned flags = 0) {
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
    b.offset = offset;
    b.size = size;
    b.flags = flags;
    return cu.cuExternalMemoryGetMappedBuffer(p, m, &b);
  }
  CUresult signal(CUexternalSemaphore sem, std::uint64_t value, CUstream stream) {
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p{};
    p.params.fence.value = value;
    return cu.cuSignalExternalSemaphoresAsync(&sem, &p, 1, stream);
  }
  CUresult wait(CUexternalSemaphore sem, std::uint64_t value, CUstream stream) {
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p{};
    p.params.fence.value = value;
    return cu.cuWaitExternalSemaphoresAsync(&sem, &p, 1, stream);
  }
  // Checks that graph node `node` signals `sem` alone, with `value`.
  static void expect_signal_node(CUgraphNode node, CUexternalSemaphore sem, std::uint64_t value) {
    CUDA_EXT_SEM_SIGNAL_NODE_PARAMS got{};
    SWCU_TEST_REQUIRE_SUCCESS(swcu::test::gr().ext_signal_params(node, &got));
    REQUIRE(got.numExtSems == 1);
    CHECK(got.extSemArray[0] == sem);
    CHECK(got.paramsArray[0].params.fence.value == value);
  }
};

}  // namespace

TEST_SUITE("external memory and semaphores") {
  TEST_CASE_FIXTURE(ExternalTest, "an imported memfd is device memory over the file's bytes") {
    constexpr std::size_t n = 1024;
    const std::size_t bytes = 2 * n * sizeof(float) + 4096;
    const int fd = memfd(bytes);
    // The host's own view of the file, as another API (or process) would have.
    auto* const host =
        static_cast<float*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    REQUIRE(host != MAP_FAILED);
    const int imported = dup(fd);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = memory_desc(imported, bytes);
    d.flags = CUDA_EXTERNAL_MEMORY_DEDICATED;
    CUexternalMemory m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalMemory(&m, &d));
    CHECK(ctl.live_handles(SWCU_EXTERNAL_MEMORY) == 1);

    // x at offset 4096 (the second page), y right after: an offset that is not page-aligned.
    for (std::size_t i = 0; i < n; ++i) {
      host[1024 + i] = static_cast<float>(i);
      host[1024 + n + i] = 1.0f;
    }
    CUdeviceptr x = 0, y = 0;
    SWCU_TEST_REQUIRE_SUCCESS(map(&x, m, 4096, n * sizeof(float)));
    SWCU_TEST_REQUIRE_SUCCESS(map(&y, m, 4096 + n * sizeof(float), n * sizeof(float)));
    // Device memory to the pointer queries, like cuMemAlloc's.
    unsigned type = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, y));
    CHECK(type == CU_MEMORYTYPE_DEVICE);
    CUcontext owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, y));
    CHECK(owner == ctx);

    // A kernel computes in place; the host's mapping of the file sees the result.
    const CUmodule mod_ = load(swcu::test::read_bytes(swcu::test::kernel_file("sw_kernels.ptx")));
    const CUfunction saxpy = function(mod_, "saxpy");
    float a = 2.0f;
    int count = static_cast<int>(n);
    void* params[] = {&a, &x, &y, &count};
    SWCU_TEST_REQUIRE_SUCCESS(
        mod().cuLaunchKernel(saxpy, n / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(host[1024 + n + i] == 2.0f * static_cast<float>(i) + 1.0f);
    }
    // Copies reach it too, both ways.
    const float seven = 7.0f;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(x, &seven, sizeof seven));
    CHECK(host[1024] == 7.0f);
    host[1025] = 9.0f;
    float back = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&back, x + 4, sizeof back));
    CHECK(back == 9.0f);

    // cuda.h: the mapped buffers stay until cuMemFree, whatever happens to the object; the
    // descriptor, the driver's since the import, is closed with it.
    CHECK(is_open(imported));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDestroyExternalMemory(m));
    CHECK_FALSE(is_open(imported));
    CHECK(ctl.live_handles(SWCU_EXTERNAL_MEMORY) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&back, y, sizeof back));
    CHECK(back == 1.0f);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(x));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(y));
    SWCU_TEST_CHECK_RESULT(cu.cuDestroyExternalMemory(m), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(mod().cuModuleUnload(mod_));
    munmap(host, bytes);
    close(fd);
  }

  TEST_CASE_FIXTURE(ExternalTest,
                    "bad imports and mappings are refused, the fd stays the caller's") {
    const int fd = memfd(8192);
    CUexternalMemory m = nullptr;
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = memory_desc(fd, 8192);
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(nullptr, &d), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(&m, nullptr), CUDA_ERROR_INVALID_VALUE);
    d.size = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
    d.size = 8192;
    d.flags = 2;  // only CUDA_EXTERNAL_MEMORY_DEDICATED exists
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
    d.flags = 0;
    {
      swcu::test::StderrCapture err;
      d.size = 8193;  // more than the file holds
      SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_VALUE);
      CHECK(err.finish().find("larger than the file descriptor's object") != std::string::npos);
    }
    d.size = 8192;
    d.handle.fd = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(&m, &d), CUDA_ERROR_INVALID_HANDLE);
    // Windows, Direct3D, NvSciBuf and (off Tegra) dma_buf handles: not on this platform.
    for (const auto type :
         {CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32,
          CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE, CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF,
          CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD}) {
      swcu::test::StderrCapture err;
      CUDA_EXTERNAL_MEMORY_HANDLE_DESC other = memory_desc(fd, 8192);
      other.type = type;
      SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(&m, &other), CUDA_ERROR_NOT_SUPPORTED);
      CHECK(err.finish().find("cuImportExternalMemory: handle type") != std::string::npos);
    }
    CHECK(is_open(fd));  // every failure left it to the caller
    CHECK(ctl.live_handles(SWCU_EXTERNAL_MEMORY) == 0);

    d = memory_desc(fd, 8192);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalMemory(&m, &d));
    CUdeviceptr p = 0;
    SWCU_TEST_CHECK_RESULT(map(&p, m, 0, 8193), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(map(&p, m, 4096, 4097), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(map(&p, m, 8192, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(map(&p, m, 0, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(map(&p, m, 0, 16, 1), CUDA_ERROR_INVALID_VALUE);  // "flags must be zero"
    SWCU_TEST_CHECK_RESULT(map(nullptr, m, 0, 16), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(map(&p, reinterpret_cast<CUexternalMemory>(&d), 0, 16),
                           CUDA_ERROR_INVALID_HANDLE);
    // A mipmapped array must fit the imported memory from its offset on, with at least a level.
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC array{};
    array.arrayDesc.Width = 64;
    array.arrayDesc.Height = 32;
    array.arrayDesc.Format = CU_AD_FORMAT_FLOAT;
    array.arrayDesc.NumChannels = 1;
    array.numLevels = 1;
    CUmipmappedArray mip = nullptr;
    array.offset = 1024;  // 8 KiB of level 0 from 1 KiB on: past the 8192 imported bytes
    {
      swcu::test::StderrCapture err;
      SWCU_TEST_CHECK_RESULT(cu.cuExternalMemoryGetMappedMipmappedArray(&mip, m, &array),
                             CUDA_ERROR_INVALID_VALUE);
      CHECK(err.finish().find("do not fit the 8192 imported bytes") != std::string::npos);
    }
    array.offset = 0;
    array.numLevels = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuExternalMemoryGetMappedMipmappedArray(&mip, m, &array),
                           CUDA_ERROR_INVALID_VALUE);
    array.numLevels = 1;
    array.arrayDesc.NumChannels = 3;  // as cuMipmappedArrayCreate: 1, 2 or 4 channels
    SWCU_TEST_CHECK_RESULT(cu.cuExternalMemoryGetMappedMipmappedArray(&mip, m, &array),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(ctl.live_handles(SWCU_MIPMAPPED_ARRAY) == 0);
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDestroyExternalMemory(m));
    SWCU_TEST_CHECK_RESULT(cu.cuDestroyExternalMemory(nullptr), CUDA_ERROR_INVALID_HANDLE);
  }

  // cuExternalMemoryGetMappedMipmappedArray: the array's levels are the imported memory's bytes
  // (from the offset on; in this driver level after level, each 512-byte aligned), so what a
  // copy writes into a level shows in the file, and what the file holds reads from the level.
  TEST_CASE_FIXTURE(ExternalTest, "a mipmapped array mapped from external memory is its bytes") {
    constexpr std::size_t kBytes = 3 * 4096;
    const int fd = memfd(kBytes);
    auto* const file =
        static_cast<float*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    REQUIRE(file != MAP_FAILED);
    for (std::size_t i = 0; i < kBytes / 4; ++i) file[i] = static_cast<float>(i);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = memory_desc(dup(fd), kBytes);
    CUexternalMemory m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalMemory(&m, &d));
    CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC desc{};
    desc.offset = 512;
    desc.arrayDesc.Width = 32;
    desc.arrayDesc.Height = 16;
    desc.arrayDesc.Format = CU_AD_FORMAT_FLOAT;
    desc.arrayDesc.NumChannels = 1;
    desc.numLevels = 3;  // 32 x 16, 16 x 8, 8 x 4 floats: 2048 + 512 + 128 bytes
    CUmipmappedArray mip = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuExternalMemoryGetMappedMipmappedArray(&mip, m, &desc));
    CHECK(ctl.live_handles(SWCU_MIPMAPPED_ARRAY) == 1);
    CHECK(ctl.live_handles(SWCU_ARRAY) == 3);
    CUarray level0 = nullptr, level1 = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level0, mip, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayGetLevel(&level1, mip, 1));
    CUDA_ARRAY3D_DESCRIPTOR got{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuArray3DGetDescriptor_v2(&got, level1));
    CHECK(got.Width == 16);
    CHECK(got.Height == 8);
    // Level 0 starts at byte 512: element (x, 0) is file float 128 + x.
    std::vector<float> row(16);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyAtoH_v2(row.data(), level0, 8 * 4, 16 * 4));
    for (std::size_t x = 0; x < 16; ++x) CHECK(row[x] == static_cast<float>(128 + 8 + x));
    // Level 1 follows at 512 + 2048: a write into it lands in the file.
    const std::vector<float> ones(8, -1.0f);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoA_v2(level1, 4 * 4, ones.data(), 8 * 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    const std::size_t first = (512 + 2048) / 4 + 4;
    CHECK(file[first - 1] == static_cast<float>(first - 1));
    for (std::size_t x = 0; x < 8; ++x) CHECK(file[first + x] == -1.0f);
    CHECK(file[first + 8] == static_cast<float>(first + 8));
    // The levels are the external object's memory: destroying the array frees no device memory
    // it charged, and the memory object may be destroyed before or after it.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDestroyExternalMemory(m));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMipmappedArrayDestroy(mip));
    CHECK(ctl.live_handles(SWCU_ARRAY) == 0);
    munmap(file, kBytes);
    close(fd);
  }

  TEST_CASE_FIXTURE(ExternalTest, "a timeline wait blocks its stream until the value is reached") {
    const int fd = memfd(8);
    auto* const word =
        static_cast<std::uint64_t*>(mmap(nullptr, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    REQUIRE(word != MAP_FAILED);
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d =
        semaphore_desc(dup(fd), CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD);
    CUexternalSemaphore sem = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalSemaphore(&sem, &d));
    CHECK(ctl.live_handles(SWCU_EXTERNAL_SEMAPHORE) == 1);

    const CUstream waiter = create_stream();
    const CUstream signaler = create_stream();
    swcu::test::Log log;
    SWCU_TEST_REQUIRE_SUCCESS(wait(sem, 5, waiter));
    REQUIRE(log.enqueue(waiter, 1) == CUDA_SUCCESS);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(waiter), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(signal(sem, 3, signaler));  // not enough
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(signaler));
    CHECK(*word == 3);
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(waiter), CUDA_ERROR_NOT_READY);
    CHECK(log.order().empty());
    SWCU_TEST_REQUIRE_SUCCESS(signal(sem, 6, signaler));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(waiter));
    CHECK(log.order() == std::vector<int>{1});

    // A host thread that writes the payload signals too (another process would, through its
    // own mapping of the file): the synchronizing call polls until then.
    SWCU_TEST_REQUIRE_SUCCESS(wait(sem, 10, waiter));
    std::thread host([word] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::atomic_ref<std::uint64_t>(*word).store(10, std::memory_order_release);
    });
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(waiter));
    host.join();

    // cuda.h: ownership of the descriptor moved to the driver; destroying closes it. A wait
    // already enqueued keeps its payload.
    SWCU_TEST_REQUIRE_SUCCESS(wait(sem, 11, waiter));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDestroyExternalSemaphore(sem));
    CHECK_FALSE(is_open(d.handle.fd));
    std::atomic_ref<std::uint64_t>(*word).store(11, std::memory_order_release);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(waiter));
    SWCU_TEST_CHECK_RESULT(signal(sem, 1, signaler), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(waiter));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(signaler));
    munmap(word, 8);
    close(fd);
  }

  TEST_CASE_FIXTURE(ExternalTest, "a binary semaphore: a wait takes the signal") {
    const int fd = memfd(8);
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d =
        semaphore_desc(fd, CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD);
    CUexternalSemaphore sem = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalSemaphore(&sem, &d));
    const CUstream a = create_stream();
    const CUstream b = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(signal(sem, 0, a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(a));
    SWCU_TEST_REQUIRE_SUCCESS(wait(sem, 0, b));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(b));  // signaled: runs, and unsignals
    SWCU_TEST_REQUIRE_SUCCESS(wait(sem, 0, b));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(b), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(signal(sem, 0, a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(b));
    // A batch: one call, every semaphore in order (the _ptsz export too).
    CUexternalSemaphore both[] = {sem, sem};
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp[2]{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuSignalExternalSemaphoresAsync_ptsz(both, sp, 2, nullptr));
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp[1]{};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuWaitExternalSemaphoresAsync_ptsz(both, wp, 1, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDestroyExternalSemaphore(sem));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(a));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(b));
  }

  TEST_CASE_FIXTURE(ExternalTest, "bad semaphore imports, signals and waits are refused") {
    const int fd = memfd(8);
    CUexternalSemaphore sem = nullptr;
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d =
        semaphore_desc(fd, CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD);
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalSemaphore(nullptr, &d), CUDA_ERROR_INVALID_VALUE);
    d.flags = 1;
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalSemaphore(&sem, &d), CUDA_ERROR_INVALID_VALUE);
    d.flags = 0;
    d.handle.fd = -1;
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalSemaphore(&sem, &d), CUDA_ERROR_INVALID_HANDLE);
    {
      swcu::test::StderrCapture err;
      const int small = memfd(4);  // no room for the 64-bit payload
      d.handle.fd = small;
      SWCU_TEST_CHECK_RESULT(cu.cuImportExternalSemaphore(&sem, &d), CUDA_ERROR_INVALID_VALUE);
      CHECK(err.finish().find("first 8 bytes") != std::string::npos);
      close(small);
    }
    for (const auto type : {CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32,
                            CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE,
                            CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC,
                            CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX,
                            CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32}) {
      swcu::test::StderrCapture err;
      const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC other = semaphore_desc(fd, type);
      SWCU_TEST_CHECK_RESULT(cu.cuImportExternalSemaphore(&sem, &other), CUDA_ERROR_NOT_SUPPORTED);
      CHECK(err.finish().find("cuImportExternalSemaphore: handle type") != std::string::npos);
    }
    CHECK(is_open(fd));
    d.handle.fd = fd;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalSemaphore(&sem, &d));
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
    sp.flags = 4;  // only CUDA_EXTERNAL_SEMAPHORE_SIGNAL_SKIP_NVSCIBUF_MEMSYNC exists
    SWCU_TEST_CHECK_RESULT(cu.cuSignalExternalSemaphoresAsync(&sem, &sp, 1, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuSignalExternalSemaphoresAsync(nullptr, &sp, 1, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp{};
    wp.flags = 1;  // only CUDA_EXTERNAL_SEMAPHORE_WAIT_SKIP_NVSCIBUF_MEMSYNC (2) exists
    SWCU_TEST_CHECK_RESULT(cu.cuWaitExternalSemaphoresAsync(&sem, &wp, 1, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    CUexternalSemaphore stale = reinterpret_cast<CUexternalSemaphore>(&wp);
    wp.flags = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuWaitExternalSemaphoresAsync(&stale, &wp, 1, nullptr),
                           CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(
        cu.cuWaitExternalSemaphoresAsync(&sem, &wp, 1, reinterpret_cast<CUstream>(&wp)),
        CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDestroyExternalSemaphore(sem));
  }

  TEST_CASE_FIXTURE(ExternalTest, "a destroyed context takes its external objects with it") {
    const CUcontext other = swcu::test::create_context();
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC md = memory_desc(memfd(4096), 4096);
    CUexternalMemory m = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalMemory(&m, &md));
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(map(&p, m, 0, 4096));
    CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC sd =
        semaphore_desc(memfd(8), CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD);
    CUexternalSemaphore sem = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalSemaphore(&sem, &sd));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(other));
    CHECK(ctl.live_handles(SWCU_EXTERNAL_MEMORY) == 0);
    CHECK(ctl.live_handles(SWCU_EXTERNAL_SEMAPHORE) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_EXTERNAL_MEMORY) >= 1);
    CHECK_FALSE(is_open(md.handle.fd));
    CHECK_FALSE(is_open(sd.handle.fd));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSetCurrent(ctx));
  }

  TEST_CASE_FIXTURE(ExternalTest, "fault injection fails an import and leaves nothing behind") {
    const int fd = memfd(4096);
    REQUIRE(ctl.add_fault_rule("cuImportExternalMemory:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC d = memory_desc(fd, 4096);
    CUexternalMemory m = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuImportExternalMemory(&m, &d), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(is_open(fd));
    CHECK(ctl.live_handles(SWCU_EXTERNAL_MEMORY) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuImportExternalMemory(&m, &d));  // rule 1: the first call
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDestroyExternalMemory(m));
    ctl.clear_fault_rules();
  }

  TEST_CASE_FIXTURE(ExternalTest, "graph nodes signal and wait for external semaphores") {
    const auto& g = swcu::test::gr();
    const TimelineSemaphore timeline;
    std::uint64_t* const word = timeline.word;
    CUexternalSemaphore sem = timeline.sem;

    // A graph: wait for 1, then signal 5.
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphCreate(&graph, 0));
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp{};
    wp.params.fence.value = 1;
    CUDA_EXT_SEM_WAIT_NODE_PARAMS wait{&sem, &wp, 1};
    CUgraphNode wait_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.add_ext_wait(&wait_node, graph, nullptr, 0, &wait));
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
    sp.params.fence.value = 5;
    CUDA_EXT_SEM_SIGNAL_NODE_PARAMS signal{&sem, &sp, 1};
    CUgraphNode signal_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.add_ext_signal(&signal_node, graph, &wait_node, 1, &signal));
    CUgraphNodeType type{};
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphNodeGetType(signal_node, &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
    expect_signal_node(signal_node, sem, 5);
    // Bad parameters: none, a stale semaphore, a getter on another kind.
    CUDA_EXT_SEM_SIGNAL_NODE_PARAMS got{};
    CUgraphNode bad = nullptr;
    CUDA_EXT_SEM_WAIT_NODE_PARAMS empty{&sem, &wp, 0};
    SWCU_TEST_CHECK_RESULT(g.add_ext_wait(&bad, graph, nullptr, 0, &empty),
                           CUDA_ERROR_INVALID_VALUE);
    CUexternalSemaphore stale = reinterpret_cast<CUexternalSemaphore>(&wp);
    CUDA_EXT_SEM_WAIT_NODE_PARAMS stale_wait{&stale, &wp, 1};
    SWCU_TEST_CHECK_RESULT(g.add_ext_wait(&bad, graph, nullptr, 0, &stale_wait),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.ext_signal_params(wait_node, &got), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(g.add_ext_wait(&bad, graph, nullptr, 0, nullptr),
                           CUDA_ERROR_INVALID_VALUE);

    CUgraphExec exec = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphInstantiate(&exec, graph, 0));
    const CUstream stream = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(stream), CUDA_ERROR_NOT_READY);  // waits for 1
    CHECK(*word == 0);
    std::atomic_ref<std::uint64_t>(*word).store(1, std::memory_order_release);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    CHECK(*word == 5);  // the signal node ran after the wait

    // Updating the executable graph's signal value: the next launch signals 9 (the wait for
    // 1 holds at once now).
    sp.params.fence.value = 9;
    SWCU_TEST_REQUIRE_SUCCESS(g.exec_set_ext_signal(exec, signal_node, &signal));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    CHECK(*word == 9);
    // The graph's own node kept 5 (the executable copy changed, not the graph).
    expect_signal_node(signal_node, sem, 5);
    // Setting the wait node of the graph: a re-instantiated graph waits for 20.
    wp.params.fence.value = 20;
    SWCU_TEST_REQUIRE_SUCCESS(g.set_ext_wait(wait_node, &wait));
    CUDA_EXT_SEM_WAIT_NODE_PARAMS wait_got{};
    SWCU_TEST_REQUIRE_SUCCESS(g.ext_wait_params(wait_node, &wait_got));
    CHECK(wait_got.paramsArray[0].params.fence.value == 20);

    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
  }

  // On a GPU only the nodes after a wait node wait: a graph may signal a semaphore and then
  // wait for that signal itself, and what comes before the wait runs while it waits.
  TEST_CASE_FIXTURE(ExternalTest, "an external semaphore wait node holds back only what follows") {
    const auto& g = swcu::test::gr();
    const TimelineSemaphore timeline;
    std::uint64_t* const word = timeline.word;
    CUexternalSemaphore sem = timeline.sem;
    CUdeviceptr out = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&out, 8));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(out, 0, 2));

    // signal 3 -> wait 3 -> memset word 0; and a memset of word 1 -> wait 7.
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphCreate(&graph, 0));
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
    sp.params.fence.value = 3;
    CUDA_EXT_SEM_SIGNAL_NODE_PARAMS signal{&sem, &sp, 1};
    CUgraphNode signal_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.add_ext_signal(&signal_node, graph, nullptr, 0, &signal));
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp{};
    wp.params.fence.value = 3;
    CUDA_EXT_SEM_WAIT_NODE_PARAMS wait{&sem, &wp, 1};
    CUgraphNode own_wait = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.add_ext_wait(&own_wait, graph, &signal_node, 1, &wait));
    (void)swcu::test::add_fill32(graph, out, 0xaa, 1, ctx, {own_wait});
    const CUgraphNode second = swcu::test::add_fill32(graph, out + 4, 0xbb, 1, ctx);
    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS later{};
    later.params.fence.value = 7;
    CUDA_EXT_SEM_WAIT_NODE_PARAMS wait_later{&sem, &later, 1};
    CUgraphNode later_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.add_ext_wait(&later_node, graph, &second, 1, &wait_later));
    CUgraphExec exec = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphInstantiate(&exec, graph, 0));
    const CUstream stream = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(stream), CUDA_ERROR_NOT_READY);  // waits for 7
    std::uint32_t words[2] = {};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(words, out, 8));
    CHECK(words[0] == 0xaa);  // its own signal released the first wait
    CHECK(words[1] == 0xbb);
    CHECK(*word == 3);
    std::atomic_ref<std::uint64_t>(*word).store(7, std::memory_order_release);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));

    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(out));
  }

  TEST_CASE_FIXTURE(ExternalTest,
                    "cuGraphAddNode, cuGraphNodeSetParams and cuGraphExecNodeSetParams take "
                    "external semaphore nodes") {
    // The generic node functions accept the extSemSignal and extSemWait members of
    // CUgraphNodeParams with the rules of the dedicated functions.
    const auto& g = swcu::test::gr();
    const TimelineSemaphore timeline;
    std::uint64_t* const word = timeline.word;
    CUexternalSemaphore sem = timeline.sem;
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphCreate(&graph, 0));

    CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp{};
    wp.params.fence.value = 2;
    CUgraphNodeParams wait{};
    wait.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT;
    wait.extSemWait = {&sem, &wp, 1};
    CUgraphNode wait_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphAddNode(&wait_node, graph, nullptr, nullptr, 0, &wait));
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
    sp.params.fence.value = 4;
    CUgraphNodeParams signal{};
    signal.type = CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL;
    signal.extSemSignal = {&sem, &sp, 1};
    CUgraphNode signal_node = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        g.cuGraphAddNode(&signal_node, graph, &wait_node, nullptr, 1, &signal));
    CUgraphNodeType type{};
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphNodeGetType(wait_node, &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
    expect_signal_node(signal_node, sem, 4);

    // Bad parameters are refused as the dedicated functions refuse them, and add nothing.
    CUgraphNode bad = nullptr;
    CUgraphNodeParams none = signal;
    none.extSemSignal.numExtSems = 0;
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddNode(&bad, graph, nullptr, nullptr, 0, &none),
                           CUDA_ERROR_INVALID_VALUE);
    CUexternalSemaphore stale = reinterpret_cast<CUexternalSemaphore>(&wp);
    CUgraphNodeParams stale_wait = wait;
    stale_wait.extSemWait.extSemArray = &stale;
    SWCU_TEST_CHECK_RESULT(g.cuGraphAddNode(&bad, graph, nullptr, nullptr, 0, &stale_wait),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(swcu::test::nodes_of(graph).size() == 2);
    SWCU_TEST_CHECK_RESULT(g.cuGraphNodeSetParams(signal_node, &stale_wait),
                           CUDA_ERROR_INVALID_VALUE);  // a wait's parameters on a signal node

    // cuGraphNodeSetParams: the graph now signals 6.
    sp.params.fence.value = 6;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphNodeSetParams(signal_node, &signal));
    expect_signal_node(signal_node, sem, 6);

    CUgraphExec exec = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphInstantiate(&exec, graph, 0));
    const CUstream stream = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(stream), CUDA_ERROR_NOT_READY);  // waits for 2
    std::atomic_ref<std::uint64_t>(*word).store(2, std::memory_order_release);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    CHECK(*word == 6);

    // cuGraphExecNodeSetParams: the executable graph waits for 8 and signals 11.
    wp.params.fence.value = 8;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecNodeSetParams(exec, wait_node, &wait));
    sp.params.fence.value = 11;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecNodeSetParams(exec, signal_node, &signal));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(stream), CUDA_ERROR_NOT_READY);  // 6 < 8
    std::atomic_ref<std::uint64_t>(*word).store(8, std::memory_order_release);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    CHECK(*word == 11);
    SWCU_TEST_CHECK_RESULT(g.cuGraphExecNodeSetParams(exec, signal_node, &none),
                           CUDA_ERROR_INVALID_VALUE);

    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
  }

  TEST_CASE_FIXTURE(ExternalTest, "a capture records semaphore signals and waits as graph nodes") {
    // A capturing stream records cuWaitExternalSemaphoresAsync and
    // cuSignalExternalSemaphoresAsync as CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT and _SIGNAL nodes
    // (one node per call, with every semaphore of the call), as the driver does, instead of
    // running them: nothing is signalled until the graph is launched.
    const auto& g = swcu::test::gr();
    const TimelineSemaphore timeline;
    std::uint64_t* const word = timeline.word;
    CUexternalSemaphore sem = timeline.sem;
    const CUstream stream = create_stream();

    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(wait(sem, 1, stream));
    SWCU_TEST_REQUIRE_SUCCESS(signal(sem, 5, stream));
    CUgraph graph = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuStreamEndCapture(stream, &graph));
    CHECK(*word == 0);  // recorded, not run
    const auto nodes = swcu::test::nodes_of(graph);
    REQUIRE(nodes.size() == 2);
    CUgraphNodeType type{};
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphNodeGetType(nodes[0], &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphNodeGetType(nodes[1], &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
    CUgraphNode dep = nullptr;
    std::size_t count = 1;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphNodeGetDependencies(nodes[1], &dep, nullptr, &count));
    CHECK(count == 1);
    CHECK(dep == nodes[0]);
    expect_signal_node(nodes[1], sem, 5);
    CUDA_EXT_SEM_WAIT_NODE_PARAMS wait_got{};
    SWCU_TEST_REQUIRE_SUCCESS(g.ext_wait_params(nodes[0], &wait_got));
    CHECK(wait_got.paramsArray[0].params.fence.value == 1);

    // The launch waits for 1, then signals 5; after an update of the executable graph, 9.
    CUgraphExec exec = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphInstantiate(&exec, graph, 0));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(stream), CUDA_ERROR_NOT_READY);
    CHECK(*word == 0);
    std::atomic_ref<std::uint64_t>(*word).store(1, std::memory_order_release);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    CHECK(*word == 5);
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
    sp.params.fence.value = 9;
    CUDA_EXT_SEM_SIGNAL_NODE_PARAMS nine{&sem, &sp, 1};
    SWCU_TEST_REQUIRE_SUCCESS(g.exec_set_ext_signal(exec, nodes[1], &nine));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphLaunch(exec, stream));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(stream));
    CHECK(*word == 9);

    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphExecDestroy(exec));
    SWCU_TEST_REQUIRE_SUCCESS(g.cuGraphDestroy(graph));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(stream));
  }
}
