// The second process of the VMM sharing test (vmm_share_test.cpp). It loads the software driver
// by path, imports the allocation whose POSIX descriptor it inherited, maps it, checks that it
// holds the values 5, 6, ... (count of them, 32-bit), adds 1 to each, and undoes everything. Exits
// 0 when every check passed, else 1 with the failed checks on stderr.
//
//   vmm_helper <fd> <count>
#include <cuda.h>
#include <dlfcn.h>
#include <swcuda/control.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void* g_library = nullptr;
int g_failures = 0;

template <class F>
F load(const char* name) {
  void* const f = dlsym(g_library, name);
  if (f == nullptr) {
    std::fprintf(stderr, "vmm_helper: the driver has no %s\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(f);
}

#define SWCU_TEST_FN(name, export_name) \
  const auto name = load<decltype(&::export_name)>(#export_name)

void expect(CUresult got, const char* what, int line) {
  if (got == CUDA_SUCCESS) return;
  ++g_failures;
  std::fprintf(stderr, "vmm_helper:%d: %s: got %d\n", line, what, static_cast<int>(got));
}

void check(bool ok, const char* what, int line) {
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "vmm_helper:%d: check failed: %s\n", line, what);
}

#define SWCU_TEST_EXPECT_SUCCESS(call) expect((call), #call, __LINE__)
#define SWCU_TEST_CHECK(condition) check((condition), #condition, __LINE__)

int run(int fd, std::size_t count) {
  SWCU_TEST_FN(primary_retain, cuDevicePrimaryCtxRetain);
  SWCU_TEST_FN(primary_release, cuDevicePrimaryCtxRelease_v2);
  SWCU_TEST_FN(set_current, cuCtxSetCurrent);
  SWCU_TEST_FN(import, cuMemImportFromShareableHandle);
  SWCU_TEST_FN(properties, cuMemGetAllocationPropertiesFromHandle);
  SWCU_TEST_FN(reserve, cuMemAddressReserve);
  SWCU_TEST_FN(address_free, cuMemAddressFree);
  SWCU_TEST_FN(map, cuMemMap);
  SWCU_TEST_FN(unmap, cuMemUnmap);
  SWCU_TEST_FN(set_access, cuMemSetAccess);
  SWCU_TEST_FN(release, cuMemRelease);
  SWCU_TEST_FN(to_host, cuMemcpyDtoH_v2);
  SWCU_TEST_FN(to_device, cuMemcpyHtoD_v2);

  CUcontext ctx = nullptr;
  SWCU_TEST_EXPECT_SUCCESS(primary_retain(&ctx, 0));
  SWCU_TEST_EXPECT_SUCCESS(set_current(ctx));
  CUmemGenericAllocationHandle h = 0;
  SWCU_TEST_EXPECT_SUCCESS(import(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  if (g_failures != 0) return 1;
  CUmemAllocationProp prop{};
  SWCU_TEST_EXPECT_SUCCESS(properties(&prop, h));
  SWCU_TEST_CHECK(prop.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  const std::size_t size = std::size_t{2} << 20;
  CUdeviceptr p = 0;
  SWCU_TEST_EXPECT_SUCCESS(reserve(&p, size, 0, 0, 0));
  SWCU_TEST_EXPECT_SUCCESS(map(p, size, 0, h, 0));
  CUmemAccessDesc rw{};
  rw.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  rw.location.id = 0;
  rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SWCU_TEST_EXPECT_SUCCESS(set_access(p, size, &rw, 1));
  std::vector<std::uint32_t> values(count);
  SWCU_TEST_EXPECT_SUCCESS(to_host(values.data(), p, count * 4));
  for (std::size_t i = 0; i < count; ++i) {
    SWCU_TEST_CHECK(values[i] == 5 + i);
    ++values[i];
  }
  SWCU_TEST_EXPECT_SUCCESS(to_device(p, values.data(), count * 4));
  SWCU_TEST_EXPECT_SUCCESS(unmap(p, size));
  SWCU_TEST_EXPECT_SUCCESS(address_free(p, size));
  SWCU_TEST_EXPECT_SUCCESS(release(h));
  SWCU_TEST_EXPECT_SUCCESS(set_current(nullptr));
  SWCU_TEST_EXPECT_SUCCESS(primary_release(0));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  g_library = dlopen(SWDRIVER_TEST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (g_library == nullptr) {
    std::fprintf(stderr, "vmm_helper: %s\n", dlerror());
    return 2;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: vmm_helper <fd> <count>\n");
    return 2;
  }
  SWCU_TEST_FN(init, cuInit);
  SWCU_TEST_FN(export_table, cuGetExportTable);
  if (init(0) != CUDA_SUCCESS) return 2;
  const void* table = nullptr;
  if (export_table(&table, &SWCU_CONTROL_TABLE_ID) != CUDA_SUCCESS) return 2;
  const auto* control = static_cast<const swcu_control*>(table);
  int status = run(std::atoi(argv[1]), std::strtoul(argv[2], nullptr, 10));
  if (status == 0 && control->live_handles_total() != 0) {
    std::fprintf(stderr, "vmm_helper: %zu live handles left\n", control->live_handles_total());
    status = 1;
  }
  return g_failures != 0 ? 1 : status;
}
