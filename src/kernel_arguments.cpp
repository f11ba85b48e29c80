// The cold path of kernel arguments (include/cuwrap/detail/kernel_arguments.hpp).
#include "cuwrap/detail/kernel_arguments.hpp"

#include <string>
#include <string_view>

#include "cuwrap/error.hpp"

namespace cuwrap::detail {

namespace {

// "cuwrap::<type>::<operation>: kernel argument <index> (a <owner>) ", or "(an ...)"
std::string argument_prefix(const char* type, const char* operation, std::size_t index,
                            const char* owner) {
  std::string text = "cuwrap::";
  if (type != nullptr) {
    text.append(type).append("::");
  }
  return text.append(operation)
      .append(": kernel argument ")
      .append(std::to_string(index))
      .append(std::string_view{"aeiou"}.find(owner[0]) == std::string_view::npos ? " (a " : " (an ")
      .append(owner)
      .append(") ");
}

}  // namespace

void throw_moved_from_kernel_argument(const char* type, const char* operation, std::size_t index,
                                      const char* owner, std::source_location where) {
  throw usage_error{argument_prefix(type, operation, index, owner) + "was moved from (or released)",
                    where};
}

void throw_write_combined_kernel_argument(const char* type, const char* operation,
                                          std::size_t index, std::source_location where) {
  throw usage_error{argument_prefix(type, operation, index, "pinned_buffer") +
                        "is write-combined, so its device address is not its host address; "
                        "allocate it with pinned_flags::device_mapped and pass .device()",
                    where};
}

}  // namespace cuwrap::detail
