// A minimal NVTX injection library for the tests (NVTX_INJECTION64_PATH): it records the NVTX
// calls cuwrap/nvtx.hpp makes as lines of text, which the test reads through
// cuwrap_nvtx_recorded().
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <sstream>
#include <string>

namespace {

std::mutex mutex;
std::string recorded;  // one line per call

void add(const std::string& line) {
  const std::lock_guard lock(mutex);
  recorded += line;
  recorded += '\n';
}

template <class Handle>
std::string text(Handle h) {
  std::ostringstream out;
  out << h;
  return out.str();
}

void NVTX_API mark(const char* message) { add(std::string{"mark "} + message); }
int NVTX_API push(const char* message) {
  add(std::string{"push "} + message);
  return 0;
}
int NVTX_API pop() {
  add("pop");
  return 0;
}
void NVTX_API name_device(CUdevice d, const char* name) {
  add("device " + std::to_string(d) + " " + name);
}
void NVTX_API name_context(CUcontext c, const char* name) {
  add("context " + text(static_cast<const void*>(c)) + " " + name);
}
void NVTX_API name_stream(CUstream s, const char* name) {
  add("stream " + text(static_cast<const void*>(s)) + " " + name);
}
void NVTX_API name_event(CUevent e, const char* name) {
  add("event " + text(static_cast<const void*>(e)) + " " + name);
}

template <class Fn>
void install(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) {
  if (id < size && table[id] != nullptr) {
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

}  // namespace

extern "C" {

/// What the injection recorded so far.
__attribute__((visibility("default"))) const char* cuwrap_nvtx_recorded() {
  const std::lock_guard lock(mutex);
  static std::string copy;
  copy = recorded;
  return copy.c_str();
}

/// Called by NVTX on its first call in the process.
__attribute__((visibility("default"))) int NVTX_API
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) == 0) return 0;
  install(table, size, NVTX_CBID_CORE_MarkA, &mark);
  install(table, size, NVTX_CBID_CORE_RangePushA, &push);
  install(table, size, NVTX_CBID_CORE_RangePop, &pop);
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CUDA, &table, &size) == 0) return 0;
  install(table, size, NVTX_CBID_CUDA_NameCuDeviceA, &name_device);
  install(table, size, NVTX_CBID_CUDA_NameCuContextA, &name_context);
  install(table, size, NVTX_CBID_CUDA_NameCuStreamA, &name_stream);
  install(table, size, NVTX_CBID_CUDA_NameCuEventA, &name_event);
  return 1;
}

}  // extern "C"
