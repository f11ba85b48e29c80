// The cold path of kernel arguments (include/cuwrap/detail/kernel_arguments.hpp).
#include "cuwrap/detail/kernel_arguments.hpp"

#include <string>

#include "cuwrap/error.hpp"

namespace cuwrap::detail {

void throw_moved_from_kernel_argument(const char* type, const char* operation, std::size_t index,
                                      const char* owner, std::source_location where) {
  std::string text = "cuwrap::";
  if (type != nullptr) {
    text.append(type).append("::");
  }
  text.append(operation)
      .append(": kernel argument ")
      .append(std::to_string(index))
      .append(" (a ")
      .append(owner)
      .append(") was moved from (or released)");
  throw usage_error{text, where};
}

}  // namespace cuwrap::detail
