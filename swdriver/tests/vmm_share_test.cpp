// Virtual memory management seen by kernels and by other processes: a PTX kernel writing through
// a mapping (and faulting without access or without a mapping), and allocations shared as POSIX
// file descriptors, in one process and with a second one (vmm_helper.cpp).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "vmm_support.hpp"

extern char** environ;

namespace {

using swcu::test::device_prop;
using swcu::test::iota;
using swcu::test::kTwoMiB;
using swcu::test::mod;
using swcu::test::read_write;
using swcu::test::VmmTest;

// fill(p): p[tid] = tid, for every thread of one block.
const std::string kFill = swcu::test::ptx(R"(
.visible .entry fill(.param .u64 p)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)");

struct KernelTest : VmmTest {
  /// Launches fill(p) on one block of `threads` and synchronizes: what cuCtxSynchronize returns.
  CUresult fill(CUdeviceptr p, unsigned threads) {
    const CUmodule m = load(kFill);
    const CUfunction f = function(m, "fill");
    void* params[] = {&p};
    swcu::test::StderrCapture capture;  // a fault is reported on stderr too
    const CUresult launched =
        mod().cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr);
    const CUresult synced = launched == CUDA_SUCCESS ? cu.cuCtxSynchronize() : launched;
    err = capture.finish();
    return synced;
  }
  std::string err;
};

TEST_CASE_FIXTURE(KernelTest, "vmm: a kernel writes through mappings, across their seam") {
  const CUmemGenericAllocationHandle h1 = create(kTwoMiB);
  const CUmemGenericAllocationHandle h2 = create(kTwoMiB);
  const CUdeviceptr p = reserve(2 * kTwoMiB);
  map_rw(p, kTwoMiB, h1);
  map_rw(p + kTwoMiB, kTwoMiB, h2);
  const CUdeviceptr seam = p + kTwoMiB - 128;  // 32 values in each mapping
  SWCU_TEST_REQUIRE_SUCCESS(fill(seam, 64));
  CHECK(get(seam, 64) == iota(64));
  // The second allocation holds the upper half, wherever it is mapped.
  const CUdeviceptr q = reserve(kTwoMiB);
  map_rw(q, kTwoMiB, h2);
  CHECK(get(q, 32) == iota(32, 32));
  for (const auto& [ptr, size] : {std::pair{p, 2 * kTwoMiB}, std::pair{q, kTwoMiB}}) {
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(ptr, size));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(ptr, size));
  }
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h1));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h2));
}

TEST_CASE_FIXTURE(KernelTest, "vmm: a kernel faults on a mapping without access, as on a GPU") {
  const CUmemGenericAllocationHandle h = create(kTwoMiB);
  const CUdeviceptr p = reserve(2 * kTwoMiB);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemMap(p, kTwoMiB, 0, h, 0));  // no cuMemSetAccess
  // An illegal address is sticky: the context is broken from then on.
  SWCU_TEST_CHECK_RESULT(fill(p, 32), CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK(err.find("illegal address") != std::string::npos);
  SWCU_TEST_CHECK_RESULT(cu.cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 2 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

TEST_CASE_FIXTURE(KernelTest, "vmm: a kernel faults on the unmapped part of a reservation") {
  const CUmemGenericAllocationHandle h = create(kTwoMiB);
  const CUdeviceptr p = reserve(2 * kTwoMiB);
  map_rw(p, kTwoMiB, h);
  // The last 16 threads store past the mapping, into the reservation's unmapped half.
  SWCU_TEST_CHECK_RESULT(fill(p + kTwoMiB - 64, 32), CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK(err.find("illegal address") != std::string::npos);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, 2 * kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

TEST_CASE_FIXTURE(VmmTest,
                  "vmm: an exported descriptor imports as a new handle to the same memory") {
  const CUmemGenericAllocationHandle h = create(kTwoMiB, device_prop(0, 1));
  const CUdeviceptr a = reserve(kTwoMiB);
  map_rw(a, kTwoMiB, h);
  put(a, iota(32, 900));
  int fd = -1;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  REQUIRE(fd >= 0);
  CUmemGenericAllocationHandle imported = 0;
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemImportFromShareableHandle(
      &imported, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CHECK(close(fd) == 0);  // the caller's descriptor; the import keeps its own
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 2);
  CUmemAllocationProp prop{};
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemGetAllocationPropertiesFromHandle(&prop, imported));
  CHECK(prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE);
  CHECK(prop.location.id == 0);
  CHECK(prop.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  // "Once a recipient process obtains a shareable memory handle from
  // cuMemImportFromShareableHandle, the process must use cuMemMap to map the memory into its
  // address ranges before setting accessibility with cuMemSetAccess."
  const CUdeviceptr b = reserve(kTwoMiB);
  map_rw(b, kTwoMiB, imported);
  CHECK(get(b, 32) == iota(32, 900));
  put(b + 4096, {77});
  CHECK(get(a + 4096, 1) == std::vector<std::uint32_t>{77});
  // The exporter's handle may go first: the memory lives while the import holds it.
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(a, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
  CHECK(get(b, 2) == iota(2, 900));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(b, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(imported));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(a, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(b, kTwoMiB));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: export and import refuse what they must") {
  const CUmemGenericAllocationHandle plain = create(kTwoMiB);
  const CUmemGenericAllocationHandle shareable = create(kTwoMiB, device_prop(0, 1));
  const auto fd_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  int fd = -1;
  SWCU_TEST_CHECK_RESULT(cu.cuMemExportToShareableHandle(nullptr, shareable, fd_type, 0),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemExportToShareableHandle(&fd, shareable, fd_type, 1),
                         CUDA_ERROR_INVALID_VALUE);  // "flags - Reserved, must be zero"
  SWCU_TEST_CHECK_RESULT(cu.cuMemExportToShareableHandle(&fd, shareable + 8, fd_type, 0),
                         CUDA_ERROR_INVALID_VALUE);
  // Only the handle types requested at cuMemCreate can be exported.
  SWCU_TEST_CHECK_RESULT(cu.cuMemExportToShareableHandle(&fd, plain, fd_type, 0),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(
      cu.cuMemExportToShareableHandle(&fd, shareable, CU_MEM_HANDLE_TYPE_FABRIC, 0),
      CUDA_ERROR_NOT_SUPPORTED);
  SWCU_TEST_CHECK_RESULT(
      cu.cuMemExportToShareableHandle(&fd, shareable, CU_MEM_HANDLE_TYPE_NONE, 0),
      CUDA_ERROR_INVALID_VALUE);
  CHECK(fd == -1);

  CUmemGenericAllocationHandle h = 0;
  const auto as_handle = [](int d) {
    return reinterpret_cast<void*>(static_cast<std::intptr_t>(d));
  };
  SWCU_TEST_CHECK_RESULT(cu.cuMemImportFromShareableHandle(nullptr, as_handle(0), fd_type),
                         CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_CHECK_RESULT(cu.cuMemImportFromShareableHandle(&h, as_handle(-1), fd_type),
                         CUDA_ERROR_INVALID_VALUE);
  // A descriptor of something this driver did not export.
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(null_fd >= 0);
  SWCU_TEST_CHECK_RESULT(cu.cuMemImportFromShareableHandle(&h, as_handle(null_fd), fd_type),
                         CUDA_ERROR_INVALID_VALUE);
  close(null_fd);
  SWCU_TEST_CHECK_RESULT(
      cu.cuMemImportFromShareableHandle(&h, as_handle(0), CU_MEM_HANDLE_TYPE_FABRIC),
      CUDA_ERROR_NOT_SUPPORTED);
  SWCU_TEST_CHECK_RESULT(
      cu.cuMemImportFromShareableHandle(&h, as_handle(0),
                                        swcu::test::invalid_enum<CUmemAllocationHandleType>(64)),
      CUDA_ERROR_INVALID_VALUE);
  CHECK(ctl.live_handles(SWCU_VMM_ALLOCATION) == 2);
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(plain));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(shareable));
}

TEST_CASE_FIXTURE(VmmTest, "vmm: another process maps an allocation from its descriptor") {
  constexpr std::size_t kCount = 1000;
  const CUmemGenericAllocationHandle h = create(kTwoMiB, device_prop(0, 1));
  const CUdeviceptr p = reserve(kTwoMiB);
  map_rw(p, kTwoMiB, h);
  put(p, iota(kCount, 5));
  int fd = -1;
  SWCU_TEST_REQUIRE_SUCCESS(
      cu.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  REQUIRE(fcntl(fd, F_SETFD, 0) == 0);  // inherited across exec: a descriptor is not bytes
  // vmm_helper imports it, checks the values and adds 1 to each.
  std::string helper = SWDRIVER_VMM_HELPER;
  std::string fd_text = std::to_string(fd);
  std::string count_text = std::to_string(kCount);
  char* argv[] = {helper.data(), fd_text.data(), count_text.data(), nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, SWDRIVER_VMM_HELPER, nullptr, nullptr, argv, environ) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  close(fd);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(get(p, kCount) == iota(kCount, 6));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemUnmap(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAddressFree(p, kTwoMiB));
  SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemRelease(h));
}

}  // namespace
