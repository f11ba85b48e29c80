// Finding a C++ kernel by its unmangled name: the module's kernel names demangled with the C++
// ABI, matched by name and, for typed lookups, by parameter list.
#pragma once

#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cuwrap::detail {

/// `mangled` demangled with abi::__cxa_demangle, or `mangled` itself when it is not a C++ name.
[[nodiscard]] std::string demangle(const std::string& mangled);

/// The parameter list, as the demangler prints it ("float const*, float*, int"), of a function
/// whose parameters have the Itanium-mangled types `parameter_types` (typeid(P).name()).
[[nodiscard]] std::string demangled_parameters(std::span<const char* const> parameter_types);

/// The mangled name among `kernels` that `name` means: a demangled kernel whose whole
/// signature, qualified name, name without template arguments, or unqualified name is `name`,
/// and, when `parameters` is given, whose parameter list is it. Throws cuwrap::error
/// (CUDA_ERROR_NOT_FOUND) naming `api`, listing the kernels demangled, when no kernel or more than
/// one matches.
[[nodiscard]] std::string match_kernel_name(std::string_view name,
                                            const std::vector<std::string>& kernels,
                                            const std::string* parameters, const char* api,
                                            std::source_location where);

}  // namespace cuwrap::detail
