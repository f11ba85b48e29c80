// IPC: memory and events exported to another process (ipc_helper.cpp, started with posix_spawn:
// it loads the driver fresh), and what one process may and may not do with its own handles.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sched_support.hpp"
#include "swdriver_test.hpp"

extern char** environ;

namespace {

using swcu::test::create_context;
using swcu::test::create_event;
using swcu::test::create_stream;

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

template <class Handle>
Handle from_hex(const std::string& hex) {
  Handle h{};
  REQUIRE(hex.size() == sizeof h.reserved * 2);
  for (std::size_t i = 0; i < sizeof h.reserved; ++i) {
    h.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return h;
}

/// The helper process, with pipes to its stdin and from its stdout (its stderr is ours).
class Helper {
 public:
  Helper(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}) {
    int in[2], out[2];
    REQUIRE(pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    std::vector<std::string> argv_strings{SWDRIVER_IPC_HELPER};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    const int spawned =
        posix_spawn(&pid_, SWDRIVER_IPC_HELPER, &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = fdopen(out[0], "r");
    REQUIRE(spawned == 0);
    REQUIRE(from_ != nullptr);
  }
  ~Helper() {
    if (to_ >= 0) close(to_);  // a helper waiting for a word ends at the end of its input
    if (from_ != nullptr) std::fclose(from_);
    if (pid_ > 0 && !waited_) waitpid(pid_, nullptr, 0);
  }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  /// The next line it printed, without the newline ("" when it closed its output).
  std::string hear() {
    char buffer[512];
    if (std::fgets(buffer, sizeof buffer, from_) == nullptr) return "";
    std::string line = buffer;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return line;
  }
  void say(const std::string& word) {
    const std::string line = word + "\n";
    REQUIRE(write(to_, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  }
  /// Its exit status (-1 when it did not exit normally).
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
  bool waited_ = false;
};

struct IpcApi {
  PFN_cuIpcGetMemHandle_v4010 get_memory =
      swcu::test::proc<PFN_cuIpcGetMemHandle_v4010>("cuIpcGetMemHandle", 4010);
  PFN_cuIpcOpenMemHandle_v11000 open_memory =
      swcu::test::proc<PFN_cuIpcOpenMemHandle_v11000>("cuIpcOpenMemHandle", 11000);
  // The legacy cuIpcOpenMemHandle (same prototype; cudaTypedefs.h has no type of its own).
  PFN_cuIpcOpenMemHandle_v11000 open_memory_v1 =
      swcu::test::proc<PFN_cuIpcOpenMemHandle_v11000>("cuIpcOpenMemHandle", 4010);
  PFN_cuIpcCloseMemHandle_v4010 close_memory =
      swcu::test::proc<PFN_cuIpcCloseMemHandle_v4010>("cuIpcCloseMemHandle", 4010);
  PFN_cuIpcGetEventHandle_v4010 get_event =
      swcu::test::proc<PFN_cuIpcGetEventHandle_v4010>("cuIpcGetEventHandle", 4010);
  PFN_cuIpcOpenEventHandle_v4010 open_event =
      swcu::test::proc<PFN_cuIpcOpenEventHandle_v4010>("cuIpcOpenEventHandle", 4010);
};

const IpcApi& ipc() {
  static const IpcApi functions;
  return functions;
}

struct PoolIpcApi {
  PFN_cuMemPoolExportToShareableHandle_v11020 export_pool =
      swcu::test::proc<PFN_cuMemPoolExportToShareableHandle_v11020>(
          "cuMemPoolExportToShareableHandle", 11020);
  PFN_cuMemPoolImportFromShareableHandle_v11020 import_pool =
      swcu::test::proc<PFN_cuMemPoolImportFromShareableHandle_v11020>(
          "cuMemPoolImportFromShareableHandle", 11020);
  PFN_cuMemPoolExportPointer_v11020 export_pointer =
      swcu::test::proc<PFN_cuMemPoolExportPointer_v11020>("cuMemPoolExportPointer", 11020);
  PFN_cuMemPoolImportPointer_v11020 import_pointer =
      swcu::test::proc<PFN_cuMemPoolImportPointer_v11020>("cuMemPoolImportPointer", 11020);
};

const PoolIpcApi& pools() {
  static const PoolIpcApi functions;
  return functions;
}

// A pinned pool of device 0 with `handle_types`.
CUmemoryPool create_pool(CUmemAllocationHandleType handle_types) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = handle_types;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUmemoryPool pool = nullptr;
  REQUIRE(swcu::test::api().cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
  return pool;
}

// A pinned pool of host NUMA node 0 (the only one), shareable as a POSIX descriptor.
CUmemoryPool create_host_numa_pool() {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  props.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  props.location.id = 0;
  CUmemoryPool pool = nullptr;
  REQUIRE(swcu::test::api().cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
  return pool;
}

std::string to_hex_bytes(const unsigned char (&bytes)[64]) {
  std::string hex;
  char digits[3];
  for (const unsigned char c : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned>(c));
    hex += digits;
  }
  return hex;
}

constexpr CUmemAllocationHandleType kPosixFd = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
constexpr CUmemPoolPtrExportData kNoPointerData{};
constexpr unsigned kLazy = CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS;
constexpr CUipcMemHandle kNoMemoryHandle{};
constexpr CUipcEventHandle kNoEventHandle{};
constexpr unsigned kInterprocess = CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;

}  // namespace

TEST_SUITE("ipc") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "only cuMemAlloc memory can be exported") {
    const CUcontext ctx = create_context();
    CUdeviceptr d = 0, pitched = 0, managed = 0, ordered = 0;
    std::size_t pitch = 0;
    void* host = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 1000));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocPitch_v2(&pitched, &pitch, 100, 4, 4));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocManaged(&managed, 64, CU_MEM_ATTACH_GLOBAL));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemHostAlloc(&host, 64, 0));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocAsync(&ordered, 64, nullptr));
    CUipcMemHandle h{}, again{}, inside{};
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&h, d));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&again, d));
    CHECK(std::memcmp(&h, &again, sizeof h) == 0);                  // lightweight, repeatable
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&inside, d + 500));  // names the whole allocation
    CHECK(std::memcmp(&h, &inside, sizeof h) == 0);
    SWCU_TEST_CHECK_RESULT(ipc().get_memory(&again, pitched), CUDA_SUCCESS);
    CUipcMemHandle untouched{};
    for (const CUdeviceptr p :
         {managed, ordered, CUdeviceptr(reinterpret_cast<std::uintptr_t>(host)), CUdeviceptr(0),
          d + 1000}) {
      SWCU_TEST_CHECK_RESULT(ipc().get_memory(&untouched, p), CUDA_ERROR_INVALID_VALUE);
    }
    CHECK(std::memcmp(&untouched, &kNoMemoryHandle, sizeof untouched) == 0);
    SWCU_TEST_CHECK_RESULT(ipc().get_memory(nullptr, d), CUDA_ERROR_INVALID_VALUE);
    // A new allocation (even at the same address) has a new handle.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_CHECK_RESULT(ipc().get_memory(&again, d), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 1000));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&again, d));
    CHECK(std::memcmp(&h, &again, sizeof h) != 0);
    // No current context is needed: the pointer says which allocation.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(ctx));
    CUcontext popped = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPopCurrent_v2(&popped));
    SWCU_TEST_CHECK_RESULT(ipc().get_memory(&again, d), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxPushCurrent_v2(ctx));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(ordered, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));  // frees the rest
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a process cannot open its own memory handle") {
    const CUcontext ctx = create_context();
    CUdeviceptr d = 0, p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 256));
    CUipcMemHandle h{};
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&h, d));
    // The real driver answers "invalid device context" (cuda.h does not say).
    SWCU_TEST_CHECK_RESULT(ipc().open_memory(&p, h, kLazy), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(ipc().open_memory_v1(&p, h, kLazy), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(ipc().open_memory(&p, h, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(ipc().open_memory(nullptr, h, kLazy), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(ipc().open_memory(&p, kNoMemoryHandle, kLazy), CUDA_ERROR_INVALID_VALUE);
    CHECK(p == 0);
    SWCU_TEST_CHECK_RESULT(ipc().close_memory(d), CUDA_ERROR_INVALID_VALUE);  // not a mapping
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    SWCU_TEST_CHECK_RESULT(ipc().open_memory(&p, h, kLazy),
                           CUDA_ERROR_INVALID_CONTEXT);  // none current
    SWCU_TEST_CHECK_RESULT(ipc().close_memory(d), CUDA_ERROR_INVALID_CONTEXT);
    CHECK(ctl.live_handles(SWCU_IPC_MAPPING) == 0);
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "only interprocess events have handles") {
    const CUcontext ctx = create_context();
    const CUevent plain = create_event(CU_EVENT_DISABLE_TIMING);
    const CUevent shared = create_event(kInterprocess);
    CUevent e = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuEventCreate(&e, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
    CUipcEventHandle h{}, again{};
    SWCU_TEST_CHECK_RESULT(ipc().get_event(&h, plain), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_CHECK_RESULT(ipc().get_event(nullptr, shared), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_event(&h, shared));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_event(&again, shared));
    CHECK(std::memcmp(&h, &again, sizeof h) == 0);
    // The real driver refuses its own handles ("invalid device context").
    SWCU_TEST_CHECK_RESULT(ipc().open_event(&e, h), CUDA_ERROR_INVALID_CONTEXT);
    SWCU_TEST_CHECK_RESULT(ipc().open_event(&e, kNoEventHandle), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(ipc().open_event(nullptr, h), CUDA_ERROR_INVALID_VALUE);
    CHECK(e == nullptr);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(shared));
    SWCU_TEST_CHECK_RESULT(ipc().get_event(&h, shared), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(plain));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an interprocess event works as usual in its own process") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUstream t = create_stream();
    const CUevent e = create_event(kInterprocess);
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);  // never recorded
    swcu::test::Gate gate;
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(t, e, 0));  // a dependency, not a blocking wait
    SWCU_TEST_CHECK_RESULT(cu.cuStreamQuery(t), CUDA_ERROR_NOT_READY);
    gate.finish();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(t));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    for (const CUstream x : {s, t}) SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(x));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "fault rules apply to exporting") {
    const CUcontext ctx = create_context();
    CUdeviceptr d = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 64));
    const CUevent e = create_event(kInterprocess);
    REQUIRE(ctl.add_fault_rule("cuIpcGetMemHandle:1:CUDA_ERROR_OUT_OF_MEMORY;"
                               "cuIpcGetEventHandle:1:CUDA_ERROR_MAP_FAILED") == 0);
    CUipcMemHandle h{};
    CUipcEventHandle eh{};
    SWCU_TEST_CHECK_RESULT(ipc().get_memory(&h, d), CUDA_ERROR_OUT_OF_MEMORY);
    SWCU_TEST_CHECK_RESULT(ipc().get_event(&eh, e), CUDA_ERROR_MAP_FAILED);
    CHECK(std::memcmp(&h, &kNoMemoryHandle, sizeof h) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&h, d));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_event(&eh, e));
    // A sticky error of the owning context is reported.
    REQUIRE(ctl.add_fault_rule("cuCtxGetFlags:1:CUDA_ERROR_LAUNCH_FAILED:sticky") == 0);
    unsigned flags = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuCtxGetFlags(&flags), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(ipc().get_memory(&h, d), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_CHECK_RESULT(ipc().get_event(&eh, e), CUDA_ERROR_LAUNCH_FAILED);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "pools are exported and imported with the documented codes") {
    const CUcontext ctx = create_context();
    const CUmemoryPool shared = create_pool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    const CUmemoryPool plain = create_pool(CU_MEM_HANDLE_TYPE_NONE);
    CUmemoryPool default_pool = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuDeviceGetDefaultMemPool(&default_pool, 0));
    // Exporting: only a pool created with the handle type, as that type, with flags 0.
    int fd = -1;
    SWCU_TEST_CHECK_RESULT(pools().export_pool(nullptr, shared, kPosixFd, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().export_pool(&fd, shared, kPosixFd, 1), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().export_pool(&fd, shared, CU_MEM_HANDLE_TYPE_FABRIC, 0),
                           CUDA_ERROR_INVALID_VALUE);
    for (const CUmemoryPool p : {plain, default_pool, CUmemoryPool{}}) {
      SWCU_TEST_CHECK_RESULT(pools().export_pool(&fd, p, kPosixFd, 0), CUDA_ERROR_INVALID_VALUE);
    }
    CHECK(fd == -1);
    REQUIRE(ctl.add_fault_rule("cuMemPoolExportToShareableHandle:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    SWCU_TEST_CHECK_RESULT(pools().export_pool(&fd, shared, kPosixFd, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(fd == -1);
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pool(&fd, shared, kPosixFd, 0));
    REQUIRE(fd >= 0);
    CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    int again = -1;
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pool(&again, shared, kPosixFd, 0));
    CHECK(again != fd);  // each export is a descriptor of its own
    close(again);
    // Importing: the descriptor as a pointer-sized number; the caller keeps it.
    CUmemoryPool imported = nullptr;
    void* const handle = reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd));
    SWCU_TEST_CHECK_RESULT(pools().import_pool(nullptr, handle, kPosixFd, 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().import_pool(&imported, handle, kPosixFd, 1),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().import_pool(&imported, handle, CU_MEM_HANDLE_TYPE_NONE, 0),
                           CUDA_ERROR_INVALID_VALUE);
    int ends[2];
    REQUIRE(pipe2(ends, O_CLOEXEC) == 0);
    for (const int not_a_pool : {ends[0], -1, 12345}) {
      SWCU_TEST_CHECK_RESULT(
          pools().import_pool(&imported,
                              reinterpret_cast<void*>(static_cast<std::intptr_t>(not_a_pool)),
                              kPosixFd, 0),
          CUDA_ERROR_INVALID_VALUE);
    }
    close(ends[0]);
    close(ends[1]);
    CHECK(imported == nullptr);
    const std::size_t live = ctl.live_handles(SWCU_MEMORY_POOL);
    SWCU_TEST_REQUIRE_SUCCESS(pools().import_pool(&imported, handle, kPosixFd, 0));
    CHECK(ctl.live_handles(SWCU_MEMORY_POOL) == live + 1);
    close(fd);  // the imported pool holds its own
    // An imported pool allocates nothing and is not exported again.
    CUdeviceptr q = 0;
    SWCU_TEST_CHECK_RESULT(cu.cuMemAllocFromPoolAsync(&q, 64, imported, nullptr),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuDeviceSetMemPool(0, imported), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().export_pool(&fd, imported, kPosixFd, 0),
                           CUDA_ERROR_INVALID_VALUE);

    // Pointers: the base of a live allocation of a shareable pool.
    constexpr std::size_t count = 2000;  // more than a page
    CUdeviceptr p = 0, unshared = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, count * sizeof(int), shared, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&unshared, 64, plain, nullptr));
    std::vector<int> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<int>(i);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(p, values.data(), count * sizeof(int)));
    CUmemPoolPtrExportData data{}, untouched{};
    for (const CUdeviceptr not_exportable : {p + 4, unshared, CUdeviceptr{}}) {
      SWCU_TEST_CHECK_RESULT(pools().export_pointer(&untouched, not_exportable),
                             CUDA_ERROR_INVALID_VALUE);
    }
    SWCU_TEST_CHECK_RESULT(pools().export_pointer(nullptr, p), CUDA_ERROR_INVALID_VALUE);
    CHECK(std::memcmp(&untouched, &kNoPointerData, sizeof untouched) == 0);
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pointer(&data, p));
    // Imported only into an imported pool, from data of the pool it imports.
    SWCU_TEST_CHECK_RESULT(pools().import_pointer(&q, shared, &data), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().import_pointer(&q, plain, &data), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().import_pointer(nullptr, imported, &data),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(pools().import_pointer(&q, imported, nullptr), CUDA_ERROR_INVALID_VALUE);
    CUmemPoolPtrExportData garbage{};
    std::memset(garbage.reserved, 0x5a, sizeof garbage.reserved);
    SWCU_TEST_CHECK_RESULT(pools().import_pointer(&q, imported, &garbage),
                           CUDA_ERROR_INVALID_VALUE);
    const CUmemoryPool other = create_pool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUdeviceptr elsewhere = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&elsewhere, 64, other, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pointer(&garbage, elsewhere));  // another pool's data
    SWCU_TEST_CHECK_RESULT(pools().import_pointer(&q, imported, &garbage),
                           CUDA_ERROR_INVALID_VALUE);
    CHECK(q == 0);
    const std::size_t allocations = ctl.live_handles(SWCU_DEVICE_ALLOCATION);
    SWCU_TEST_REQUIRE_SUCCESS(pools().import_pointer(&q, imported, &data));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == allocations + 1);
    CHECK(q != p);  // another mapping of the same memory
    std::vector<int> seen(count);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(seen.data(), q, count * sizeof(int)));
    CHECK(seen == values);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(q + 4 * (count - 1), 0x7f, 1));
    int last = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(&last, p + 4 * (count - 1), sizeof last));
    CHECK(last == 0x7f);
    CUmemoryPool owner = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, q));
    CHECK(owner == imported);
    SWCU_TEST_CHECK_RESULT(pools().export_pointer(&garbage, q),
                           CUDA_ERROR_INVALID_VALUE);  // imported
    // The importer frees first (cuMemFree unmaps), then the exporter.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(q));
    CHECK(ctl.live_handles(SWCU_DEVICE_ALLOCATION) == allocations);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(unshared, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(elsewhere, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    SWCU_TEST_CHECK_RESULT(pools().export_pointer(&data, p), CUDA_ERROR_INVALID_VALUE);  // freed
    for (const CUmemoryPool x : {imported, shared, plain, other}) {
      SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(x));
    }
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "fault rules apply to pool import and pointer export and import") {
    const CUcontext ctx = create_context();
    const CUmemoryPool shared = create_pool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    int fd = -1;
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pool(&fd, shared, kPosixFd, 0));
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, 256, shared, nullptr));
    REQUIRE(ctl.add_fault_rule("cuMemPoolImportFromShareableHandle:1:CUDA_ERROR_OUT_OF_MEMORY;"
                               "cuMemPoolExportPointer:1:CUDA_ERROR_OUT_OF_MEMORY;"
                               "cuMemPoolImportPointer:1:CUDA_ERROR_OUT_OF_MEMORY") == 0);
    void* const handle = reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd));
    CUmemoryPool imported = nullptr;
    const std::size_t live = ctl.live_handles_total();
    SWCU_TEST_CHECK_RESULT(pools().import_pool(&imported, handle, kPosixFd, 0),
                           CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(imported == nullptr);
    CUmemPoolPtrExportData data{};
    SWCU_TEST_CHECK_RESULT(pools().export_pointer(&data, p), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(std::memcmp(&data, &kNoPointerData, sizeof data) == 0);
    CHECK(ctl.live_handles_total() == live);
    SWCU_TEST_REQUIRE_SUCCESS(pools().import_pool(&imported, handle, kPosixFd, 0));
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pointer(&data, p));
    CUdeviceptr q = 0;
    SWCU_TEST_CHECK_RESULT(pools().import_pointer(&q, imported, &data), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(q == 0);
    CHECK(ctl.live_handles_total() == live + 1);  // the imported pool
    SWCU_TEST_REQUIRE_SUCCESS(pools().import_pointer(&q, imported, &data));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(q));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(imported));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(shared));
    close(fd);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "another process imports a pool and its allocation and writes to it") {
    const CUcontext ctx = create_context();
    const CUmemoryPool shared = create_pool(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    constexpr std::size_t count = 3000;  // more than a page
    CUdeviceptr first = 0, p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuMemAllocFromPoolAsync(&first, 100, shared, nullptr));  // an offset
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, count * sizeof(int), shared, nullptr));
    std::vector<int> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<int>(i);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(p, values.data(), count * sizeof(int)));
    int fd = -1;
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pool(&fd, shared, kPosixFd, 0));
    REQUIRE(fcntl(fd, F_SETFD, 0) == 0);  // inherited across exec: a descriptor is not bytes
    CUmemPoolPtrExportData data{};
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pointer(&data, p));
    Helper helper({"pool", std::to_string(fd), to_hex_bytes(data.reserved), std::to_string(count)});
    close(fd);
    REQUIRE(helper.wait() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(values.data(), p, count * sizeof(int)));
    for (std::size_t i = 0; i < count; ++i) REQUIRE(values[i] == static_cast<int>(i) + 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(first, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(shared));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // A pool of pinned host memory (CU_MEM_LOCATION_TYPE_HOST_NUMA; HOST pools "are not IPC
  // capable") is shared like a device pool, and its import is the same kind of pool: pinned host
  // memory the host CPU reads and writes at its address, with the host CPU's access.
  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "a host NUMA pool is imported, here and in another process, as host memory") {
    const CUcontext ctx = create_context();
    const CUmemoryPool shared = create_host_numa_pool();
    constexpr std::size_t count = 3000;  // more than a page
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAllocFromPoolAsync(&p, count * sizeof(int), shared, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxSynchronize());
    auto* const host = reinterpret_cast<int*>(p);  // pinned host memory: the CPU writes it
    for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<int>(i);
    int fd = -1;
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pool(&fd, shared, kPosixFd, 0));
    CUmemPoolPtrExportData data{};
    SWCU_TEST_REQUIRE_SUCCESS(pools().export_pointer(&data, p));

    // Imported in this process: another mapping of the same host memory.
    CUmemoryPool imported = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(pools().import_pool(
        &imported, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)), kPosixFd, 0));
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_MAX;
    CUmemLocation where{CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolGetAccess(&flags, imported, &where));
    CHECK(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);  // "accessibility ... from the host CPU"
    CUdeviceptr q = 0;
    SWCU_TEST_REQUIRE_SUCCESS(pools().import_pointer(&q, imported, &data));
    unsigned type = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, q));
    CHECK(type == CU_MEMORYTYPE_HOST);
    void* host_pointer = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(
        cu.cuPointerGetAttribute(&host_pointer, CU_POINTER_ATTRIBUTE_HOST_POINTER, q));
    CHECK(host_pointer == reinterpret_cast<void*>(q));
    CHECK(reinterpret_cast<const int*>(q)[count - 1] == static_cast<int>(count - 1));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(q));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(imported));

    // Imported by another process, which adds 1 to each value through its host pointer.
    REQUIRE(fcntl(fd, F_SETFD, 0) == 0);  // inherited across exec
    Helper helper(
        {"host-pool", std::to_string(fd), to_hex_bytes(data.reserved), std::to_string(count)});
    close(fd);
    REQUIRE(helper.wait() == 0);
    for (std::size_t i = 0; i < count; ++i) REQUIRE(host[i] == static_cast<int>(i) + 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFreeAsync(p, nullptr));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemPoolDestroy(shared));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "another process maps exported memory and writes to it") {
    // Also run with two devices, with and without a peer link (CMakeLists.txt): the helper
    // opens the handle from a context of device 1 too.
    const CUcontext ctx = create_context();
    constexpr std::size_t count = 3000;  // more than a page
    CUdeviceptr d = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, count * sizeof(int)));
    std::vector<int> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<int>(i);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyHtoD_v2(d, values.data(), count * sizeof(int)));
    CUipcMemHandle h{};
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&h, d));
    Helper helper({"memory", to_hex(h), std::to_string(count)});
    REQUIRE(helper.wait() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(values.data(), d, count * sizeof(int)));
    for (std::size_t i = 0; i < count; ++i) REQUIRE(values[i] == static_cast<int>(i) + 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemFree_v2(d));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a fault rule fails an open in the other process") {
    const CUcontext ctx = create_context();
    CUdeviceptr d = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemAlloc_v2(&d, 64));
    CUipcMemHandle h{};
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_memory(&h, d));
    Helper helper({"fault", to_hex(h)},
                  {"SWCUDA_FAULTS=cuIpcOpenMemHandle:1:CUDA_ERROR_MAP_FAILED"});
    CHECK(helper.wait() == 0);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest,
                    "an exported event is waited for and recorded by another process") {
    const CUcontext ctx = create_context();
    const CUstream s = create_stream();
    const CUevent e = create_event(kInterprocess);
    swcu::test::Gate gate;
    gate.start(ctx, s);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s));  // pending behind the gate
    CUipcEventHandle h{};
    SWCU_TEST_REQUIRE_SUCCESS(ipc().get_event(&h, e));
    Helper helper({"event", to_hex(h)}, {"SWCUDA_EXEC=deferred"});
    CHECK(helper.hear() == "not-ready");
    gate.finish();  // the record runs: the helper's cuEventSynchronize returns
    CHECK(helper.hear() == "done");
    // Now the helper records it, and runs the record when told to.
    REQUIRE(helper.hear() == "recorded");
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
    helper.say("sync");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));  // until the helper's record ran
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    CHECK(helper.hear() == "synced");
    CHECK(helper.wait() == 0);
    // Recorded here again: local rules again.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventRecord(e, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "memory and an event exported by another process") {
    constexpr std::size_t count = 100;
    Helper helper({"serve", std::to_string(count)}, {"SWCUDA_EXEC=deferred"});
    const std::string line = helper.hear();
    REQUIRE(line.size() == 2 * 2 * CU_IPC_HANDLE_SIZE + 1);
    const auto mh = from_hex<CUipcMemHandle>(line.substr(0, 2 * CU_IPC_HANDLE_SIZE));
    const auto eh = from_hex<CUipcEventHandle>(line.substr(2 * CU_IPC_HANDLE_SIZE + 1));
    const CUcontext ctx = create_context();
    CUdeviceptr p = 0;
    SWCU_TEST_REQUIRE_SUCCESS(ipc().open_memory(&p, mh, kLazy));
    std::vector<int> values(count);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(values.data(), p, count * sizeof(int)));
    for (std::size_t i = 0; i < count; ++i) CHECK(values[i] == static_cast<int>(3 * i));
    CUevent e = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(ipc().open_event(&e, eh));
    // Recorded by the helper, which runs nothing until it synchronizes (deferred mode).
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_ERROR_NOT_READY);
    helper.say("go");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));  // blocks until the helper ran its memset
    SWCU_TEST_CHECK_RESULT(cu.cuEventQuery(e), CUDA_SUCCESS);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemcpyDtoH_v2(values.data(), p, count * sizeof(int)));
    for (const int v : values) CHECK(v == 0x77);
    const CUstream s = create_stream();
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamWaitEvent(s, e, 0));  // complete: nothing to wait for
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32Async(p, 0x78, count, s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamSynchronize(s));
    helper.say("check");
    CHECK(helper.hear() == "ok");
    CHECK(helper.wait() == 0);
    // The exporter is gone. What was mapped stays mapped until closed, and opening it again
    // in this context is one more reference.
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(p, 1, count));
    CUdeviceptr q = 0;
    SWCU_TEST_REQUIRE_SUCCESS(ipc().open_memory(&q, mh, kLazy));
    CHECK(q == p);
    SWCU_TEST_REQUIRE_SUCCESS(ipc().close_memory(q));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().close_memory(p));
    // Otherwise its handles name nothing.
    SWCU_TEST_CHECK_RESULT(ipc().open_memory(&q, mh, kLazy), CUDA_ERROR_INVALID_HANDLE);
    CUevent f = nullptr;
    SWCU_TEST_CHECK_RESULT(ipc().open_event(&f, eh), CUDA_ERROR_INVALID_HANDLE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuStreamDestroy_v2(s));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "imported memory and events go with their context") {
    constexpr std::size_t count = 16;
    Helper helper({"serve", std::to_string(count)}, {"SWCUDA_EXEC=deferred"});
    const std::string line = helper.hear();
    REQUIRE(line.size() == 2 * 2 * CU_IPC_HANDLE_SIZE + 1);
    const auto mh = from_hex<CUipcMemHandle>(line.substr(0, 2 * CU_IPC_HANDLE_SIZE));
    const auto eh = from_hex<CUipcEventHandle>(line.substr(2 * CU_IPC_HANDLE_SIZE + 1));
    const CUcontext ctx = create_context();
    CUdeviceptr p = 0;
    CUevent e = nullptr;
    SWCU_TEST_REQUIRE_SUCCESS(ipc().open_memory(&p, mh, kLazy));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().open_event(&e, eh));
    CHECK(ctl.live_handles(SWCU_IPC_MAPPING) == 1);
    const std::size_t mappings = ctl.reclaimed_handles(SWCU_IPC_MAPPING);
    const std::size_t events = ctl.reclaimed_handles(SWCU_EVENT);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
    CHECK(ctl.live_handles(SWCU_IPC_MAPPING) == 0);
    CHECK(ctl.reclaimed_handles(SWCU_IPC_MAPPING) == mappings + 1);
    CHECK(ctl.reclaimed_handles(SWCU_EVENT) == events + 1);
    const CUcontext again = create_context();  // opens anew
    SWCU_TEST_REQUIRE_SUCCESS(ipc().open_memory(&p, mh, kLazy));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().open_event(&e, eh));
    helper.say("go");
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventSynchronize(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuMemsetD32_v2(p, 0x78, count));
    SWCU_TEST_REQUIRE_SUCCESS(ipc().close_memory(p));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuEventDestroy_v2(e));
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(again));
    helper.say("check");
    CHECK(helper.hear() == "ok");
    CHECK(helper.wait() == 0);
  }
}
