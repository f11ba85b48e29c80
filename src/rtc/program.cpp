// NVRTC programs: creation, compilation and the collection of its outputs.
#include "cuwrap/rtc/program.hpp"

#include <gsl/narrow>
#include <string>
#include <string_view>
#include <vector>

namespace cuwrap::rtc {
namespace {

// Reads one of NVRTC's outputs: `size` gives its length in bytes, `get` fills it.
template <class Container, class SizeFn, class GetFn>
Container read_output(nvrtcProgram handle, SizeFn size, const char* size_api, GetFn get,
                      const char* get_api, std::source_location where) {
  std::size_t bytes = 0;
  check(size(handle, &bytes), size_api, where);
  Container out(bytes, typename Container::value_type{});
  if (bytes != 0) {
    check(get(handle, reinterpret_cast<char*>(out.data())), get_api, where);
  }
  return out;
}

// NVRTC counts the terminating NUL of text outputs; an empty output is just that NUL.
std::string without_trailing_nul(std::string text) {
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  return text;
}

std::string program_log(nvrtcProgram handle, std::source_location where) {
  return without_trailing_nul(read_output<std::string>(handle, nvrtcGetProgramLogSize,
                                                       "nvrtcGetProgramLogSize", nvrtcGetProgramLog,
                                                       "nvrtcGetProgramLog", where));
}

// The value of the last -arch/--gpu-architecture flag, or "" when there is none.
std::string arch_of(std::span<const std::string> options) {
  std::string arch;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string_view flag = options[i];
    for (const std::string_view name : {"-arch", "--gpu-architecture"}) {
      if (flag == name && i + 1 < options.size()) {
        arch = options[i + 1];
      } else if (flag.starts_with(name) && flag.size() > name.size() && flag[name.size()] == '=') {
        arch = flag.substr(name.size() + 1);
      }
    }
  }
  return arch;
}

std::string quoted_list(const std::vector<std::pair<std::string, std::string>>& names) {
  std::string text;
  for (const auto& [expression, lowered] : names) {
    text.append(text.empty() ? "\"" : ", \"").append(expression).append("\"");
  }
  return text.empty() ? "none" : text;
}

}  // namespace

version nvrtc_version(std::source_location where) {
  version v;
  check(nvrtcVersion(&v.major, &v.minor), "nvrtcVersion", where);
  return v;
}

std::vector<int> supported_archs(std::source_location where) {
  int count = 0;
  check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs", where);
  std::vector<int> archs(gsl::narrow<std::size_t>(count));
  check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs", where);
  return archs;
}

std::string real_arch(compute_capability cc) {
  return "sm_" + std::to_string(cc.major * 10 + cc.minor);
}

std::string virtual_arch(compute_capability cc) {
  return "compute_" + std::to_string(cc.major * 10 + cc.minor);
}

std::vector<std::string> compile_options::to_strings() const {
  std::vector<std::string> flags;
  if (!arch.empty()) {
    flags.push_back("-arch=" + arch);
  }
  if (!standard.empty()) {
    flags.push_back("-std=" + standard);
  }
  if (generate_line_info) {
    flags.emplace_back("-lineinfo");
  }
  if (generate_debug_info) {
    flags.emplace_back("-G");
  }
  if (relocatable_device_code) {
    flags.emplace_back("-rdc=true");
  }
  if (lto) {
    flags.emplace_back("-dlto");
  }
  for (const auto& define : defines) {
    flags.push_back("-D" + define);
  }
  for (const auto& path : include_paths) {
    flags.push_back("-I" + path);
  }
  flags.insert(flags.end(), extra.begin(), extra.end());
  return flags;
}

const std::string& compiled_program::lowered_name(std::string_view expression,
                                                  std::source_location where) const {
  expect_usable("lowered_name", where);
  for (const auto& [added, lowered] : lowered_names_) {
    if (added == expression) {
      return lowered;
    }
  }
  const auto details = "\"" + std::string{expression} + "\" in program " + name_ +
                       ": not added with add_name_expression() before compile(); added: " +
                       quoted_list(lowered_names_);
  detail::throw_error(make_error_code(NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID), "nvrtcGetLoweredName",
                      details, where);
}

void compiled_program::missing_output(output kind, std::source_location where) const {
  const auto arch = arch_.empty() ? std::string{"NVRTC's default architecture"} : arch_;
  std::string details = "program " + name_ + " was compiled ";
  const char* api = "nvrtcGetPTX";
  switch (kind) {
    case output::ptx:
      details += "with -dlto to LTO-IR, so it has no PTX; compile without -dlto for PTX";
      break;
    case output::cubin:
      api = "nvrtcGetCUBIN";
      if (has_lto_ir()) {
        details += "with -dlto to LTO-IR, so it has no cubin; link the LTO-IR with rtc::linker";
      } else {
        details += "for " + arch +
                   ", a virtual architecture, so it has no cubin; compile for a real one such "
                   "as sm_90 (compile_options::arch)";
      }
      break;
    case output::lto_ir:
      api = "nvrtcGetLTOIR";
      details += "without -dlto, so it has no LTO-IR; compile with -dlto (compile_options::lto)";
      break;
  }
  detail::throw_error(make_error_code(NVRTC_ERROR_INVALID_INPUT), api, details, where);
}

program::program(std::string_view source, std::string_view name, std::span<const header> headers,
                 std::source_location where)
    : program{create(source, std::string{name}, headers, where), std::string{name}} {}

nvrtcProgram program::create(std::string_view source, const std::string& name,
                             std::span<const header> headers, std::source_location where) {
  // NVRTC wants NUL-terminated strings: copy them.
  const std::string source_text{source};
  std::vector<std::string> texts;
  std::vector<std::string> names;
  texts.reserve(headers.size());
  names.reserve(headers.size());
  for (const auto& h : headers) {
    texts.emplace_back(h.contents);
    names.emplace_back(h.name);
  }
  std::vector<const char*> text_pointers;
  std::vector<const char*> name_pointers;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    text_pointers.push_back(texts[i].c_str());
    name_pointers.push_back(names[i].c_str());
  }
  nvrtcProgram handle = nullptr;
  check(nvrtcCreateProgram(&handle, source_text.c_str(), name.c_str(),
                           gsl::narrow<int>(headers.size()), text_pointers.data(),
                           name_pointers.data()),
        "nvrtcCreateProgram", where);
  return handle;
}

void program::add_name_expression(std::string_view expression, std::source_location where) {
  detail::expect_not_moved_from(!empty(), "rtc::program", "add_name_expression", where);
  auto& expressions = state().name_expressions;
  expressions.emplace_back(expression);
  const auto result = nvrtcAddNameExpression(handle_, expressions.back().c_str());
  if (result != NVRTC_SUCCESS) [[unlikely]] {
    expressions.pop_back();
    detail::throw_error(make_error_code(result), "nvrtcAddNameExpression",
                        "\"" + std::string{expression} + "\" in program " + name(), where);
  }
}

compiled_program program::compile(const compile_options& options, std::source_location where) {
  return compile(std::span<const std::string>{options.to_strings()}, where);
}

compiled_program program::compile(std::initializer_list<std::string_view> options,
                                  std::source_location where) {
  const std::vector<std::string> flags(options.begin(), options.end());
  return compile(std::span<const std::string>{flags}, where);
}

compiled_program program::compile(std::span<const std::string> options,
                                  std::source_location where) {
  detail::expect_not_moved_from(!empty(), "rtc::program", "compile", where);
  const std::string& program_name = name();
  if (state().compiled) [[unlikely]] {
    // NVRTC keeps outputs of an earlier compilation that a later one does not replace (a
    // cubin survives recompiling for a virtual architecture): one compilation per program.
    detail::throw_error(make_error_code(NVRTC_ERROR_INVALID_PROGRAM), "nvrtcCompileProgram",
                        "program " + program_name +
                            " was already compiled; compile another program object for other "
                            "options",
                        where);
  }
  std::vector<const char*> flags;
  flags.reserve(options.size());
  for (const auto& option : options) {
    flags.push_back(option.c_str());
  }
  const auto result = nvrtcCompileProgram(handle_, gsl::narrow<int>(flags.size()), flags.data());
  auto log = program_log(handle_, where);
  if (result != NVRTC_SUCCESS) [[unlikely]] {
    detail::throw_rtc_error(make_error_code(result), "nvrtcCompileProgram",
                            "program " + program_name, std::move(log), where);
  }

  state().compiled = true;
  compiled_program out;
  out.name_ = program_name;
  out.arch_ = arch_of(options);
  out.log_ = std::move(log);
  out.ptx_ = without_trailing_nul(read_output<std::string>(
      handle_, nvrtcGetPTXSize, "nvrtcGetPTXSize", nvrtcGetPTX, "nvrtcGetPTX", where));
  out.cubin_ = read_output<std::vector<std::byte>>(handle_, nvrtcGetCUBINSize, "nvrtcGetCUBINSize",
                                                   nvrtcGetCUBIN, "nvrtcGetCUBIN", where);
  out.lto_ir_ = read_output<std::vector<std::byte>>(handle_, nvrtcGetLTOIRSize, "nvrtcGetLTOIRSize",
                                                    nvrtcGetLTOIR, "nvrtcGetLTOIR", where);
  const auto& expressions = state().name_expressions;
  out.lowered_names_.reserve(expressions.size());
  for (const auto& expression : expressions) {
    const char* lowered = nullptr;
    const auto lowered_result = nvrtcGetLoweredName(handle_, expression.c_str(), &lowered);
    if (lowered_result != NVRTC_SUCCESS) [[unlikely]] {
      detail::throw_error(make_error_code(lowered_result), "nvrtcGetLoweredName",
                          "\"" + expression + "\" in program " + program_name, where);
    }
    out.lowered_names_.emplace_back(expression, lowered);
  }
  return out;
}

}  // namespace cuwrap::rtc
