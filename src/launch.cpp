// The cold paths of launches (launch_config is src/launch_config.cpp, occupancy
// src/occupancy.cpp).
#include "cuwrap/launch.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace cuwrap {
namespace {

std::string text(dims d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace

namespace detail {

void throw_launch_limit(const kernel& k, const launch_config& config, std::source_location where,
                        const char* api) {
  std::string details = "kernel " + k.name() + ": ";
  if (config.block().volume() > static_cast<unsigned long long>(k.max_threads_per_block())) {
    details += "block " + text(config.block()) + " has " + std::to_string(config.block().volume()) +
               " threads; the kernel allows " + std::to_string(k.max_threads_per_block());
  } else {
    details += std::to_string(config.dynamic_shared_bytes()) +
               " bytes of dynamic shared memory; the kernel allows " +
               std::to_string(k.max_dynamic_shared_bytes()) +
               " (raise it with set_max_dynamic_shared_memory)";
  }
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), api, details, where);
}

void throw_argument_mismatch(const kernel& k, std::size_t index, std::size_t given,
                             std::size_t expected, std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuLaunchKernel",
              "kernel " + k.name() + ": argument " + std::to_string(index) + " has " +
                  std::to_string(given) + " bytes; the parameter has " + std::to_string(expected),
              where);
}

void throw_argument_count(const kernel& k, std::size_t given, std::source_location where) {
  throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuLaunchKernel",
              "kernel " + k.name() + ": " + std::to_string(given) + " arguments given; it has " +
                  std::to_string(k.params().size()) + " parameters",
              where);
}

std::string context_mismatch(const kernel& k, CUcontext ctx) {
  if (k.context() == nullptr || ctx == nullptr || k.context() == ctx) {
    return {};
  }
  const auto describe = [](CUcontext c) {
    std::string text = std::to_string(reinterpret_cast<std::uintptr_t>(c));
    CUdevice device{};
    const auto& d = driver();
    if (d.cuCtxPushCurrent(c) == CUDA_SUCCESS) {
      if (d.cuCtxGetDevice(&device) == CUDA_SUCCESS) {
        text += " (device " + std::to_string(device) + ")";
      }
      CUcontext popped{};
      (void)d.cuCtxPopCurrent(&popped);
    }
    return text;
  };
  return "; the kernel is from context " + describe(k.context()) +
         ", the stream's (or graph's) context is " + describe(ctx) +
         ": load the module in that context, or use a library (cuwrap::library)";
}

void throw_launch_error(CUresult result, const char* api, const kernel& k, stream_ref s,
                        std::source_location where) {
  std::string details = "kernel " + k.name();
  if (result == CUDA_ERROR_INVALID_HANDLE || result == CUDA_ERROR_INVALID_CONTEXT) {
    CUcontext stream_context{};
    if (driver().cuStreamGetCtx(s.get(), &stream_context) == CUDA_SUCCESS) {
      details += context_mismatch(k, stream_context);
    }
  }
  throw_error(make_error_code(result), api, details, where);
}

}  // namespace detail

}  // namespace cuwrap
