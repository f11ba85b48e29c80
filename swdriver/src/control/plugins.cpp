// SWCUDA_KERNELS: shared libraries that register host functions for kernels, loaded by the
// first cuInit. Each exports `extern "C" int swcu_register_kernels(const swcu_control*)`, which
// returns 0 on success; it runs like a host function (driver calls from it are refused).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "control/control.hpp"
#include "core/config.hpp"
#include "core/prologue.hpp"
#include "exec/launch.hpp"

namespace swcu {
namespace {

using RegisterFn = int (*)(const swcu_control*);

// Loads one plug-in; CUDA_SUCCESS or the error, with the message for stderr.
CUresult load_plugin(const std::string& path, std::string& message) {
  void* const lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: its
  if (lib == nullptr) {                                           // functions stay registered
    const char* const error = dlerror();
    const std::string why = error != nullptr ? error : "unknown error";
    // dlerror() usually names the file already
    message = "cannot load " + (why.find(path) != std::string::npos ? why : path + ": " + why);
    return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
  }
  const auto fn = reinterpret_cast<RegisterFn>(dlsym(lib, "swcu_register_kernels"));
  if (fn == nullptr) {
    message = path + " does not export swcu_register_kernels";
    return CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
  }
  struct HostScope {  // driver calls from the registration are refused, as from a host function
    HostScope() noexcept : was(in_host_function()) { in_host_function() = true; }
    ~HostScope() { in_host_function() = was; }
    HostScope(const HostScope&) = delete;
    HostScope& operator=(const HostScope&) = delete;
    const bool was;
  };
  int result = 0;
  {
    const HostScope scope;
    result = fn(control_table());
  }
  if (result != 0) {
    message = "swcu_register_kernels of " + path + " returned " + std::to_string(result);
    return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
  }
  return CUDA_SUCCESS;
}

CUresult load_all(std::string& message) {
  const std::optional<std::string> env = setting("SWCUDA_KERNELS");  // trimmed; empty is unset
  if (!env) return CUDA_SUCCESS;
  std::string_view rest(*env);
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string path(trim_blanks(rest.substr(0, colon)));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (path.empty()) continue;
    if (const CUresult r = load_plugin(path, message)) return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace

CUresult load_kernel_plugins() noexcept {
  static std::once_flag once;
  static CUresult result = CUDA_SUCCESS;
  try {
    std::call_once(once, [] {
      std::string message;
      result = load_all(message);
      if (result != CUDA_SUCCESS) {
        std::fprintf(stderr, "swcuda: SWCUDA_KERNELS: %s\n", message.c_str());
      }
    });
  } catch (...) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return result;
}

}  // namespace swcu
