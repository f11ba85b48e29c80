// Matching unmangled kernel names against a module's (mangled) kernel names.
#include "kernel_names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "cuwrap/error.hpp"

namespace cuwrap::detail {
namespace {

// A demangled signature taken apart: "void ns::scale<float>(float*)" gives the qualified name
// "ns::scale<float>" and the parameters "float*".
struct signature_parts {
  std::string name;
  std::string parameters;
  bool function = false;  // false: not a demangled function name (e.g. an extern "C" kernel)
};

signature_parts split(const std::string& demangled) {
  constexpr std::string_view anonymous = "(anonymous namespace)";
  int angles = 0;
  std::size_t open = std::string::npos;
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    if (demangled.compare(i, anonymous.size(), anonymous) == 0) {
      i += anonymous.size() - 1;
      continue;
    }
    const char c = demangled[i];
    if (c == '<') ++angles;
    if (c == '>') --angles;
    if (c == '(' && angles == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string::npos || demangled.back() != ')') {
    return {demangled, "", false};
  }
  std::string name = demangled.substr(0, open);
  // A template instantiation's return type comes first: "void scale<float>".
  angles = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, anonymous.size(), anonymous) == 0) {
      i += anonymous.size() - 1;
      continue;
    }
    if (name[i] == '<') ++angles;
    if (name[i] == '>') --angles;
    if (name[i] == ' ' && angles == 0) start = i + 1;
  }
  return {name.substr(start), demangled.substr(open + 1, demangled.size() - open - 2), true};
}

// `name` without template arguments at the end ("scale<float>" gives "scale").
std::string without_template_arguments(const std::string& name) {
  if (name.empty() || name.back() != '>') return name;
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == '>') ++depth;
    if (name[i] == '<' && --depth == 0) return name.substr(0, i);
  }
  return name;
}

// The last component of a qualified name ("ns::scale<float>" gives "scale<float>").
std::string unqualified(const std::string& name) {
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 1;) {
    if (name[i] == '>') ++depth;
    if (name[i] == '<') --depth;
    if (depth == 0 && name[i] == ':' && name[i - 1] == ':') return name.substr(i + 1);
  }
  return name;
}

bool names(std::string_view wanted, const std::string& demangled, const signature_parts& parts) {
  if (wanted == demangled) return true;
  if (!parts.function) return false;
  const std::string bare = without_template_arguments(parts.name);
  return wanted == parts.name || wanted == bare || wanted == unqualified(parts.name) ||
         wanted == unqualified(bare);
}

std::string listed(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return list.empty() ? "none" : list;
}

}  // namespace

std::string demangle(const std::string& mangled) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text{
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free};
  return status == 0 && text != nullptr ? std::string{text.get()} : mangled;
}

std::string demangled_parameters(std::span<const char* const> parameter_types) {
  std::string mangled = "_Z1f";
  for (const char* type : parameter_types) mangled += type;
  if (parameter_types.empty()) mangled += 'v';
  const std::string demangled = demangle(mangled);
  return demangled == mangled ? std::string{} : split(demangled).parameters;
}

std::string match_kernel_name(std::string_view name, const std::vector<std::string>& kernels,
                              const std::string* parameters, const char* api,
                              std::source_location where) {
  std::vector<std::string> all;
  std::vector<std::size_t> matches;
  std::vector<std::size_t> by_name;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string demangled = demangle(kernels[i]);
    const auto parts = split(demangled);
    all.push_back(demangled == kernels[i] ? demangled : demangled + " [" + kernels[i] + "]");
    if (!names(name, demangled, parts)) continue;
    by_name.push_back(i);
    if (parameters == nullptr || (parts.function && parts.parameters == *parameters)) {
      matches.push_back(i);
    }
  }
  if (matches.size() == 1) return kernels[matches.front()];
  std::string details = "kernel '" + std::string{name} + "'";
  if (matches.empty() && !by_name.empty() && parameters != nullptr) {
    details += " with parameters (" + *parameters + ") not found; kernels of that name: ";
    std::vector<std::string> named;
    for (const std::size_t i : by_name) named.push_back(all[i]);
    details += listed(named);
  } else if (matches.empty()) {
    details += " not found; it has: " + listed(all);
  } else {
    std::vector<std::string> named;
    for (const std::size_t i : matches) named.push_back(all[i]);
    details += " is ambiguous: " + listed(named) +
               "; give the mangled name, or the signature (a typed lookup)";
  }
  throw_error(make_error_code(CUDA_ERROR_NOT_FOUND), api, details, where);
}

}  // namespace cuwrap::detail
