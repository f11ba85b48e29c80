// The CUresult table generated from cuda.h and libcudart (names and short messages).
#pragma once

#include <span>
#include <string_view>

namespace swcu {

struct ErrorInfo {
  int value;
  std::string_view name;  ///< e.g. "CUDA_ERROR_INVALID_VALUE" (NUL-terminated)
  std::string_view
      description;  ///< the driver's short message, "invalid argument" (NUL-terminated)
};

[[nodiscard]] std::span<const ErrorInfo> errors() noexcept;
[[nodiscard]] const ErrorInfo* find_error(int value) noexcept;
[[nodiscard]] const ErrorInfo* find_error(std::string_view name) noexcept;

}  // namespace swcu
