// The second process of the IPC tests (ipc_test.cpp). It loads the software driver by path, runs
// one scenario with handles the test process exported (given as hex on the command line) or
// exports its own, talks to the test over stdin and stdout (one word per line), and exits 0 when
// every check passed, else 1 with the failed checks on stderr.
//
//   ipc_helper memory <memory handle> <ints>  maps the memory (values i), adds 1 to each value,
//                                             and checks reference counts, ranges, contexts
//   ipc_helper fault <memory handle>          with SWCUDA_FAULTS failing the first open
//   ipc_helper event <event handle>           (SWCUDA_EXEC=deferred) the event is recorded but
//                                             not complete: prints "not-ready", waits for it,
//                                             prints "done"; then records it itself, prints
//                                             "recorded", and on "sync" runs the record and
//                                             prints "synced"
//   ipc_helper pool <fd> <pointer data> <ints>  imports the pool whose descriptor it inherited and
//                                             the allocation (values i), adds 1 to each value,
//                                             frees it and destroys the pool
//   ipc_helper host-pool <fd> <pointer data> <ints>  the same with a host NUMA pool: checks that
//                                             the import is pinned host memory, which it
//                                             reads and writes through its host pointer
//   ipc_helper serve <ints>                   (SWCUDA_EXEC=deferred) exports memory (values
//                                             3*i) and an event recorded after a memset of 0x77,
//                                             prints both handles, runs them on "go", checks
//                                             for 0x78 on "check" and prints "ok"
#include <cuda.h>
#include <dlfcn.h>
#include <swcuda/control.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

void* g_library = nullptr;
int g_failures = 0;
const swcu_control* g_control = nullptr;

// The exported function `name`, as the type cuda.h declares for it.
template <class F>
F load(const char* name) {
  void* const f = dlsym(g_library, name);
  if (f == nullptr) {
    std::fprintf(stderr, "ipc_helper: the driver has no %s\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(f);
}

#define SWCU_TEST_FN(name, export_name) \
  const auto name = load<decltype(&::export_name)>(#export_name)

std::string name_of(CUresult r) {
  const char* text = nullptr;
  static const auto get_name = load<decltype(&::cuGetErrorName)>("cuGetErrorName");
  if (get_name(r, &text) != CUDA_SUCCESS || text == nullptr) return std::to_string(r);
  return text;
}

void expect(CUresult got, CUresult want, const char* what, int line) {
  if (got == want) return;
  ++g_failures;
  std::fprintf(stderr, "ipc_helper:%d: %s: got %s, expected %s\n", line, what, name_of(got).c_str(),
               name_of(want).c_str());
}

void check(bool ok, const char* what, int line) {
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "ipc_helper:%d: check failed: %s\n", line, what);
}

#define SWCU_TEST_EXPECT(call, want) expect((call), (want), #call, __LINE__)
#define SWCU_TEST_CHECK(condition) check((condition), #condition, __LINE__)

template <class Handle>
Handle from_hex(const std::string& hex) {
  Handle h{};
  if (hex.size() != sizeof h.reserved * 2) {
    std::fprintf(stderr, "ipc_helper: a handle has %zu hex digits\n", hex.size());
    std::exit(2);
  }
  for (std::size_t i = 0; i < sizeof h.reserved; ++i) {
    h.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return h;
}

template <class Handle>
std::string to_hex(const Handle& h) {
  std::string hex;
  char digits[3];
  for (const char c : h.reserved) {
    std::snprintf(digits, sizeof digits, "%02x",
                  static_cast<unsigned>(static_cast<unsigned char>(c)));
    hex += digits;
  }
  return hex;
}

void say(const char* word) {
  std::printf("%s\n", word);
  std::fflush(stdout);
}

// The next line from the test ("" at the end of input: the test is gone).
std::string hear() {
  std::string line;
  if (!std::getline(std::cin, line)) return "";
  return line;
}

int memory(const CUipcMemHandle& handle, std::size_t count) {
  SWCU_TEST_FN(primary_retain, cuDevicePrimaryCtxRetain);
  SWCU_TEST_FN(primary_release, cuDevicePrimaryCtxRelease_v2);
  SWCU_TEST_FN(set_current, cuCtxSetCurrent);
  SWCU_TEST_FN(ctx_create, cuCtxCreate_v4);
  SWCU_TEST_FN(ctx_destroy, cuCtxDestroy_v2);
  SWCU_TEST_FN(device_count, cuDeviceGetCount);
  SWCU_TEST_FN(can_access_peer, cuDeviceCanAccessPeer);
  SWCU_TEST_FN(open, cuIpcOpenMemHandle_v2);
  SWCU_TEST_FN(open_legacy, cuIpcOpenMemHandle);
  SWCU_TEST_FN(close, cuIpcCloseMemHandle);
  SWCU_TEST_FN(address_range, cuMemGetAddressRange_v2);
  SWCU_TEST_FN(pointer_attribute, cuPointerGetAttribute);
  SWCU_TEST_FN(mem_free, cuMemFree_v2);
  SWCU_TEST_FN(memset8, cuMemsetD8_v2);
  SWCU_TEST_FN(to_host, cuMemcpyDtoH_v2);
  SWCU_TEST_FN(to_device, cuMemcpyHtoD_v2);

  CUcontext ctx = nullptr;
  SWCU_TEST_EXPECT(primary_retain(&ctx, 0), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(ctx), CUDA_SUCCESS);
  CUdeviceptr p = 0, q = 0;
  SWCU_TEST_EXPECT(open(&p, handle, 0), CUDA_ERROR_INVALID_VALUE);  // the flag is required
  SWCU_TEST_EXPECT(open(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(open(&q, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  SWCU_TEST_CHECK(p != 0 && p == q);  // one mapping, two references
  SWCU_TEST_CHECK(g_control->live_handles(SWCU_IPC_MAPPING) == 1);
  const std::size_t bytes = count * sizeof(int);
  CUdeviceptr base = 0;
  std::size_t size = 0;
  SWCU_TEST_EXPECT(address_range(&base, &size, p + 4), CUDA_SUCCESS);
  SWCU_TEST_CHECK(base == p && size == bytes);
  unsigned type = 0;
  SWCU_TEST_EXPECT(pointer_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_SUCCESS);
  SWCU_TEST_CHECK(type == CU_MEMORYTYPE_DEVICE);
  CUcontext owner = nullptr;
  SWCU_TEST_EXPECT(pointer_attribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p), CUDA_SUCCESS);
  SWCU_TEST_CHECK(owner == ctx);
  SWCU_TEST_EXPECT(mem_free(p), CUDA_ERROR_INVALID_VALUE);  // not cuMemAlloc memory here
  SWCU_TEST_EXPECT(memset8(p + bytes, 0, 1), CUDA_ERROR_INVALID_VALUE);  // past its end

  std::vector<int> values(count);
  SWCU_TEST_EXPECT(to_host(values.data(), p, bytes), CUDA_SUCCESS);
  for (std::size_t i = 0; i < count; ++i) SWCU_TEST_CHECK(values[i] == static_cast<int>(i));
  for (int& v : values) ++v;
  SWCU_TEST_EXPECT(to_device(p, values.data(), bytes), CUDA_SUCCESS);

  // One context per device may open a handle.
  CUcontext other = nullptr;
  SWCU_TEST_EXPECT(ctx_create(&other, nullptr, 0, 0), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(open(&q, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                   CUDA_ERROR_INVALID_CONTEXT);
  SWCU_TEST_EXPECT(ctx_destroy(other), CUDA_SUCCESS);
  // A context of another device may, if it can access the exporter's device (device 0).
  int devices = 0;
  SWCU_TEST_EXPECT(device_count(&devices), CUDA_SUCCESS);
  if (devices > 1) {
    int peer = 0;
    SWCU_TEST_EXPECT(can_access_peer(&peer, 1, 0), CUDA_SUCCESS);
    SWCU_TEST_EXPECT(ctx_create(&other, nullptr, 0, 1), CUDA_SUCCESS);
    CUdeviceptr r = 0;
    SWCU_TEST_EXPECT(open(&r, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                     peer != 0 ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    if (peer != 0) {
      SWCU_TEST_CHECK(r != p);
      int first = 0;
      SWCU_TEST_EXPECT(to_host(&first, r, sizeof first), CUDA_SUCCESS);
      SWCU_TEST_CHECK(first == 1);  // the same memory
      SWCU_TEST_CHECK(g_control->live_handles(SWCU_IPC_MAPPING) == 2);
    }
    SWCU_TEST_EXPECT(ctx_destroy(other), CUDA_SUCCESS);  // unmaps what it opened
    SWCU_TEST_CHECK(g_control->live_handles(SWCU_IPC_MAPPING) == 1);
    SWCU_TEST_EXPECT(set_current(ctx), CUDA_SUCCESS);
  }

  SWCU_TEST_EXPECT(close(p), CUDA_SUCCESS);
  SWCU_TEST_CHECK(g_control->live_handles(SWCU_IPC_MAPPING) == 1);
  SWCU_TEST_EXPECT(close(p), CUDA_SUCCESS);
  SWCU_TEST_CHECK(g_control->live_handles(SWCU_IPC_MAPPING) == 0);
  SWCU_TEST_EXPECT(close(p), CUDA_ERROR_INVALID_VALUE);
  SWCU_TEST_EXPECT(to_host(values.data(), p, 4), CUDA_ERROR_INVALID_VALUE);  // unmapped
  SWCU_TEST_EXPECT(open_legacy(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(close(p), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(nullptr), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(close(p), CUDA_ERROR_INVALID_CONTEXT);
  SWCU_TEST_EXPECT(primary_release(0), CUDA_SUCCESS);
  return 0;
}

int fault(const CUipcMemHandle& handle) {
  SWCU_TEST_FN(primary_retain, cuDevicePrimaryCtxRetain);
  SWCU_TEST_FN(primary_release, cuDevicePrimaryCtxRelease_v2);
  SWCU_TEST_FN(set_current, cuCtxSetCurrent);
  SWCU_TEST_FN(open, cuIpcOpenMemHandle_v2);
  SWCU_TEST_FN(close, cuIpcCloseMemHandle);
  CUcontext ctx = nullptr;
  SWCU_TEST_EXPECT(primary_retain(&ctx, 0), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(ctx), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  SWCU_TEST_EXPECT(open(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_ERROR_MAP_FAILED);
  SWCU_TEST_CHECK(p == 0);  // untouched
  SWCU_TEST_CHECK(g_control->live_handles(SWCU_IPC_MAPPING) == 0);
  SWCU_TEST_EXPECT(open(&p, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(close(p), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(nullptr), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(primary_release(0), CUDA_SUCCESS);
  return 0;
}

int event(const CUipcEventHandle& handle) {
  SWCU_TEST_FN(primary_retain, cuDevicePrimaryCtxRetain);
  SWCU_TEST_FN(primary_release, cuDevicePrimaryCtxRelease_v2);
  SWCU_TEST_FN(set_current, cuCtxSetCurrent);
  SWCU_TEST_FN(open, cuIpcOpenEventHandle);
  SWCU_TEST_FN(get_handle, cuIpcGetEventHandle);
  SWCU_TEST_FN(query, cuEventQuery);
  SWCU_TEST_FN(synchronize, cuEventSynchronize);
  SWCU_TEST_FN(elapsed, cuEventElapsedTime_v2);
  SWCU_TEST_FN(destroy, cuEventDestroy_v2);
  SWCU_TEST_FN(record, cuEventRecord);
  SWCU_TEST_FN(stream_create, cuStreamCreate);
  SWCU_TEST_FN(stream_destroy, cuStreamDestroy_v2);
  SWCU_TEST_FN(stream_synchronize, cuStreamSynchronize);
  CUcontext ctx = nullptr;
  SWCU_TEST_EXPECT(primary_retain(&ctx, 0), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(ctx), CUDA_SUCCESS);
  CUevent e = nullptr;
  SWCU_TEST_EXPECT(open(&e, handle), CUDA_SUCCESS);
  SWCU_TEST_CHECK(g_control->live_handles(SWCU_EVENT) == 1);
  SWCU_TEST_EXPECT(query(e), CUDA_ERROR_NOT_READY);  // the test holds its stream back
  say("not-ready");
  SWCU_TEST_EXPECT(synchronize(e), CUDA_SUCCESS);  // until the test lets it run
  SWCU_TEST_EXPECT(query(e), CUDA_SUCCESS);
  say("done");
  float ms = 0;
  SWCU_TEST_EXPECT(elapsed(&ms, e, e), CUDA_ERROR_INVALID_HANDLE);  // as with DISABLE_TIMING
  CUipcEventHandle again{};
  SWCU_TEST_EXPECT(get_handle(&again, e), CUDA_SUCCESS);
  SWCU_TEST_CHECK(std::memcmp(&again, &handle, sizeof again) == 0);
  // Recorded here (deferred: it runs when the stream is synchronized), seen by the exporter.
  CUstream s = nullptr;
  SWCU_TEST_EXPECT(stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(record(e, s), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(query(e), CUDA_ERROR_NOT_READY);
  say("recorded");
  if (hear() != "sync") return 1;
  SWCU_TEST_EXPECT(stream_synchronize(s), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(query(e), CUDA_SUCCESS);
  say("synced");
  SWCU_TEST_EXPECT(stream_destroy(s), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(destroy(e), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(nullptr), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(primary_release(0), CUDA_SUCCESS);
  return 0;
}

CUmemPoolPtrExportData pointer_data(const std::string& hex) {
  CUmemPoolPtrExportData data{};
  if (hex.size() != 2 * sizeof data.reserved) {
    std::fprintf(stderr, "ipc_helper: pointer data has %zu hex digits\n", hex.size());
    std::exit(2);
  }
  for (std::size_t i = 0; i < sizeof data.reserved; ++i) {
    data.reserved[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return data;
}

int pool(int fd, const std::string& hex, std::size_t count) {
  SWCU_TEST_FN(primary_retain, cuDevicePrimaryCtxRetain);
  SWCU_TEST_FN(primary_release, cuDevicePrimaryCtxRelease_v2);
  SWCU_TEST_FN(set_current, cuCtxSetCurrent);
  SWCU_TEST_FN(import_pool, cuMemPoolImportFromShareableHandle);
  SWCU_TEST_FN(import_pointer, cuMemPoolImportPointer);
  SWCU_TEST_FN(alloc_from_pool, cuMemAllocFromPoolAsync);
  SWCU_TEST_FN(pool_destroy, cuMemPoolDestroy);
  SWCU_TEST_FN(mem_free, cuMemFree_v2);
  SWCU_TEST_FN(to_host, cuMemcpyDtoH_v2);
  SWCU_TEST_FN(to_device, cuMemcpyHtoD_v2);
  CUmemPoolPtrExportData data = pointer_data(hex);
  CUcontext ctx = nullptr;
  SWCU_TEST_EXPECT(primary_retain(&ctx, 0), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(ctx), CUDA_SUCCESS);
  CUmemoryPool imported = nullptr;
  SWCU_TEST_EXPECT(import_pool(&imported, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                   CUDA_SUCCESS);
  close(fd);  // the pool keeps its own descriptor
  CUdeviceptr p = 0;
  SWCU_TEST_EXPECT(import_pointer(&p, imported, &data), CUDA_SUCCESS);
  SWCU_TEST_CHECK(g_control->live_handles(SWCU_MEMORY_POOL) == 1);
  SWCU_TEST_CHECK(g_control->live_handles(SWCU_DEVICE_ALLOCATION) == 1);
  CUdeviceptr q = 0;
  SWCU_TEST_EXPECT(alloc_from_pool(&q, 64, imported, nullptr), CUDA_ERROR_INVALID_VALUE);
  const std::size_t bytes = count * sizeof(int);
  std::vector<int> values(count);
  SWCU_TEST_EXPECT(to_host(values.data(), p, bytes), CUDA_SUCCESS);
  for (std::size_t i = 0; i < count; ++i) SWCU_TEST_CHECK(values[i] == static_cast<int>(i));
  for (int& v : values) ++v;
  SWCU_TEST_EXPECT(to_device(p, values.data(), bytes), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(mem_free(p), CUDA_SUCCESS);  // before the exporter frees it
  SWCU_TEST_EXPECT(pool_destroy(imported), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(nullptr), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(primary_release(0), CUDA_SUCCESS);
  return 0;
}

int host_pool(int fd, const std::string& hex, std::size_t count) {
  SWCU_TEST_FN(primary_retain, cuDevicePrimaryCtxRetain);
  SWCU_TEST_FN(primary_release, cuDevicePrimaryCtxRelease_v2);
  SWCU_TEST_FN(set_current, cuCtxSetCurrent);
  SWCU_TEST_FN(import_pool, cuMemPoolImportFromShareableHandle);
  SWCU_TEST_FN(import_pointer, cuMemPoolImportPointer);
  SWCU_TEST_FN(pool_get_access, cuMemPoolGetAccess);
  SWCU_TEST_FN(pool_destroy, cuMemPoolDestroy);
  SWCU_TEST_FN(pointer_attribute, cuPointerGetAttribute);
  SWCU_TEST_FN(mem_free, cuMemFree_v2);
  SWCU_TEST_FN(to_host, cuMemcpyDtoH_v2);
  CUmemPoolPtrExportData data = pointer_data(hex);
  CUcontext ctx = nullptr;
  SWCU_TEST_EXPECT(primary_retain(&ctx, 0), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(ctx), CUDA_SUCCESS);
  CUmemoryPool imported = nullptr;
  SWCU_TEST_EXPECT(import_pool(&imported, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                   CUDA_SUCCESS);
  close(fd);
  // The host CPU's pool: read-write for the host, as cuMemPoolCreate made it in the exporter.
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_MAX;
  CUmemLocation host{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
  SWCU_TEST_EXPECT(pool_get_access(&flags, imported, &host), CUDA_SUCCESS);
  SWCU_TEST_CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CUdeviceptr p = 0;
  SWCU_TEST_EXPECT(import_pointer(&p, imported, &data), CUDA_SUCCESS);
  unsigned type = 0;
  SWCU_TEST_EXPECT(pointer_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p), CUDA_SUCCESS);
  SWCU_TEST_CHECK(type == CU_MEMORYTYPE_HOST);
  CUmemoryPool owner = nullptr;
  SWCU_TEST_EXPECT(pointer_attribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p), CUDA_SUCCESS);
  SWCU_TEST_CHECK(owner == imported);
  void* address = nullptr;
  SWCU_TEST_EXPECT(pointer_attribute(&address, CU_POINTER_ATTRIBUTE_HOST_POINTER, p), CUDA_SUCCESS);
  SWCU_TEST_CHECK(address == reinterpret_cast<void*>(p));
  auto* const values = static_cast<int*>(address);
  for (std::size_t i = 0; i < count; ++i) SWCU_TEST_CHECK(values[i] == static_cast<int>(i));
  for (std::size_t i = 0; i < count; ++i) ++values[i];
  int last = 0;  // a copy sees what the CPU wrote
  SWCU_TEST_EXPECT(to_host(&last, p + (count - 1) * sizeof(int), sizeof last), CUDA_SUCCESS);
  SWCU_TEST_CHECK(last == static_cast<int>(count));
  SWCU_TEST_EXPECT(mem_free(p), CUDA_SUCCESS);  // before the exporter frees it
  SWCU_TEST_EXPECT(pool_destroy(imported), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(set_current(nullptr), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(primary_release(0), CUDA_SUCCESS);
  return 0;
}

int serve(std::size_t count) {
  SWCU_TEST_FN(ctx_create, cuCtxCreate_v4);
  SWCU_TEST_FN(ctx_destroy, cuCtxDestroy_v2);
  SWCU_TEST_FN(alloc, cuMemAlloc_v2);
  SWCU_TEST_FN(mem_free, cuMemFree_v2);
  SWCU_TEST_FN(to_device, cuMemcpyHtoD_v2);
  SWCU_TEST_FN(to_host, cuMemcpyDtoH_v2);
  SWCU_TEST_FN(memset32_async, cuMemsetD32Async);
  SWCU_TEST_FN(stream_create, cuStreamCreate);
  SWCU_TEST_FN(stream_destroy, cuStreamDestroy_v2);
  SWCU_TEST_FN(stream_synchronize, cuStreamSynchronize);
  SWCU_TEST_FN(event_create, cuEventCreate);
  SWCU_TEST_FN(event_destroy, cuEventDestroy_v2);
  SWCU_TEST_FN(record, cuEventRecord);
  SWCU_TEST_FN(get_memory_handle, cuIpcGetMemHandle);
  SWCU_TEST_FN(get_event_handle, cuIpcGetEventHandle);
  CUcontext ctx = nullptr;
  SWCU_TEST_EXPECT(ctx_create(&ctx, nullptr, 0, 0), CUDA_SUCCESS);
  const std::size_t bytes = count * sizeof(int);
  CUdeviceptr d = 0;
  SWCU_TEST_EXPECT(alloc(&d, bytes), CUDA_SUCCESS);
  std::vector<int> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<int>(3 * i);
  SWCU_TEST_EXPECT(to_device(d, values.data(), bytes), CUDA_SUCCESS);
  CUstream s = nullptr;
  SWCU_TEST_EXPECT(stream_create(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent e = nullptr;
  SWCU_TEST_EXPECT(event_create(&e, CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS), CUDA_SUCCESS);
  // Deferred: neither runs until the stream is synchronized.
  SWCU_TEST_EXPECT(memset32_async(d, 0x77, count, s), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(record(e, s), CUDA_SUCCESS);
  CUipcMemHandle memory_handle{};
  CUipcEventHandle event_handle{};
  SWCU_TEST_EXPECT(get_memory_handle(&memory_handle, d), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(get_event_handle(&event_handle, e), CUDA_SUCCESS);
  std::printf("%s %s\n", to_hex(memory_handle).c_str(), to_hex(event_handle).c_str());
  std::fflush(stdout);
  if (hear() != "go") return 1;
  SWCU_TEST_EXPECT(stream_synchronize(s), CUDA_SUCCESS);
  if (hear() != "check") return 1;
  SWCU_TEST_EXPECT(to_host(values.data(), d, bytes), CUDA_SUCCESS);
  for (const int v : values) SWCU_TEST_CHECK(v == 0x78);
  say("ok");
  SWCU_TEST_EXPECT(event_destroy(e), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(stream_destroy(s), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(mem_free(d), CUDA_SUCCESS);
  SWCU_TEST_EXPECT(ctx_destroy(ctx), CUDA_SUCCESS);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  g_library = dlopen(SWDRIVER_TEST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (g_library == nullptr) {
    std::fprintf(stderr, "ipc_helper: %s\n", dlerror());
    return 2;
  }
  SWCU_TEST_FN(init, cuInit);
  SWCU_TEST_FN(export_table, cuGetExportTable);
  if (init(0) != CUDA_SUCCESS) {
    std::fprintf(stderr, "ipc_helper: cuInit failed\n");
    return 2;
  }
  const void* table = nullptr;
  if (export_table(&table, &SWCU_CONTROL_TABLE_ID) != CUDA_SUCCESS) return 2;
  g_control = static_cast<const swcu_control*>(table);

  const std::string scenario = argc > 1 ? argv[1] : "";
  int status = 2;
  if (scenario == "memory" && argc == 4) {
    status = memory(from_hex<CUipcMemHandle>(argv[2]), std::stoul(argv[3]));
  } else if (scenario == "fault" && argc == 3) {
    status = fault(from_hex<CUipcMemHandle>(argv[2]));
  } else if (scenario == "event" && argc == 3) {
    status = event(from_hex<CUipcEventHandle>(argv[2]));
  } else if (scenario == "pool" && argc == 5) {
    status = pool(std::stoi(argv[2]), argv[3], std::stoul(argv[4]));
  } else if (scenario == "host-pool" && argc == 5) {
    status = host_pool(std::stoi(argv[2]), argv[3], std::stoul(argv[4]));
  } else if (scenario == "serve" && argc == 3) {
    status = serve(std::stoul(argv[2]));
  } else {
    std::fprintf(stderr, "usage: ipc_helper memory|fault|event|pool|host-pool|serve ...\n");
  }
  if (status == 0 && g_control->live_handles_total() != 0) {
    std::fprintf(stderr, "ipc_helper: %zu live handles left\n", g_control->live_handles_total());
    status = 1;
  }
  return g_failures != 0 ? 1 : status;
}
