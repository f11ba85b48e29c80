// Interop with the CUDA runtime API (cudart): error checking, kernels compiled into the
// program, and cuwrap streams and events in runtime calls. Link cuwrap::runtime; the core
// library never needs cudart.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <source_location>
#include <string>
#include <system_error>

#include "cuwrap/error.hpp"
#include "cuwrap/kernel.hpp"

namespace cuwrap {

/// A runtime status as a std::error_code in runtime_category().
[[nodiscard]] inline std::error_code make_error_code(cudaError_t r) noexcept {
  return {static_cast<int>(r), runtime_category()};
}

/// Throws cuwrap::error if `result` is not cudaSuccess. `api` names the runtime function.
inline void check(cudaError_t result, const char* api,
                  std::source_location where = std::source_location::current()) {
  if (result != cudaSuccess) [[unlikely]] {
    detail::throw_error(make_error_code(result), api, {}, where);
  }
}

namespace runtime {

/// After a `kernel<<<grid, block, shared, stream>>>(...)` launch: throws cuwrap::error for a
/// launch error (bad configuration, missing kernel image) and clears it (cudaGetLastError).
/// Errors that happen while the kernel runs surface at the next synchronization.
inline void check_last_launch(std::source_location where = std::source_location::current()) {
  check(cudaGetLastError(), "cudaGetLastError", where);
}

namespace detail {
/// The driver function behind a __global__ function of this program (cudaGetFuncBySymbol),
/// with its name (cuFuncGetName).
cuwrap::kernel kernel_from_symbol(const void* symbol, std::source_location where);
}  // namespace detail

/// The driver-API kernel behind `fn`, a __global__ function compiled into this program, typed
/// by its own signature: launch it with cuwrap (stream.launch) like any loaded kernel. Needs
/// the runtime to have initialized the device (any runtime call, or a primary_context, does).
template <class... Params>
[[nodiscard]] typed_kernel<void(Params...)> kernel_of(
    void (*fn)(Params...), std::source_location where = std::source_location::current()) {
  return typed_kernel<void(Params...)>{
      detail::kernel_from_symbol(reinterpret_cast<const void*>(fn), where)};
}

}  // namespace runtime
}  // namespace cuwrap
