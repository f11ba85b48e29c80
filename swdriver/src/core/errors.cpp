// cuGetErrorName and cuGetErrorString, from the generated table.
#include "core/errors.hpp"

#include <algorithm>

#include "core/api.hpp"

namespace swcu {
namespace {

constexpr ErrorInfo kErrors[] = {
#define SWCU_ERROR(value, name, description) {value, #name, description},
#include "core/generated/errors.inc"
#undef SWCU_ERROR
};

// Both lookups return CUDA_ERROR_INVALID_VALUE and store NULL for a code cuda.h does not know.
CUresult describe(Sym sym, int error, const char** out, bool name) {
  if (const CUresult fault = prologue(sym)) return fault;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorInfo* info = find_error(error);
  if (info == nullptr) {
    *out = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = name ? info->name.data() : info->description.data();
  return CUDA_SUCCESS;
}

}  // namespace

std::span<const ErrorInfo> errors() noexcept { return kErrors; }

const ErrorInfo* find_error(int value) noexcept {
  const auto it = std::find_if(std::begin(kErrors), std::end(kErrors),
                               [value](const ErrorInfo& e) { return e.value == value; });
  return it == std::end(kErrors) ? nullptr : it;
}

const ErrorInfo* find_error(std::string_view name) noexcept {
  const auto it = std::find_if(std::begin(kErrors), std::end(kErrors),
                               [name](const ErrorInfo& e) { return e.name == name; });
  return it == std::end(kErrors) ? nullptr : it;
}

}  // namespace swcu

extern "C" {

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  return swcu::describe(swcu::Sym::cuGetErrorName, swcu::raw(error), pStr, true);
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  return swcu::describe(swcu::Sym::cuGetErrorString, swcu::raw(error), pStr, false);
}

}  // extern "C"
