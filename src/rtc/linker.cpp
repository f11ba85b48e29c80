// nvJitLink: creation, inputs, the link, and errors that carry the error log.
#include "cuwrap/rtc/linker.hpp"

#include <cstdint>
#include <gsl/narrow>
#include <string>
#include <string_view>
#include <vector>

namespace cuwrap::rtc {
namespace {

// nvJitLink counts the terminating NUL of its logs.
template <class SizeFn, class GetFn>
std::string read_log(nvJitLinkHandle handle, SizeFn size, GetFn get) noexcept {
  try {
    std::size_t bytes = 0;
    if (handle == nullptr || size(handle, &bytes) != NVJITLINK_SUCCESS || bytes == 0) {
      return {};
    }
    std::string text(bytes, '\0');
    if (get(handle, text.data()) != NVJITLINK_SUCCESS) {
      return {};
    }
    while (!text.empty() && text.back() == '\0') {
      text.pop_back();
    }
    return text;
  } catch (...) {
    return {};  // out of memory while reading a log: report the failure without it
  }
}

const char* type_name(input_type type) noexcept {
  switch (type) {
    case input_type::cubin: return "cubin";
    case input_type::ptx: return "PTX";
    case input_type::lto_ir: return "LTO-IR";
    case input_type::fatbin: return "fatbin";
    case input_type::object: return "object";
    case input_type::library: return "library";
    case input_type::index: return "index";
    case input_type::any: return "input";
  }
  return "input";
}

std::string joined(std::span<const std::string> words, std::string_view none) {
  std::string text;
  for (const auto& word : words) {
    text.append(text.empty() ? "" : " ").append(word);
  }
  return text.empty() ? std::string{none} : text;
}

}  // namespace

version nvjitlink_version(std::source_location where) {
  unsigned major = 0;
  unsigned minor = 0;
  check(nvJitLinkVersion(&major, &minor), "nvJitLinkVersion", where);
  return {gsl::narrow<int>(major), gsl::narrow<int>(minor)};
}

std::vector<std::string> link_options::to_strings() const {
  std::vector<std::string> flags;
  if (!arch.empty()) {
    flags.push_back("-arch=" + arch);
  }
  if (lto) {
    flags.emplace_back("-lto");
  }
  if (optimization_level) {
    flags.push_back("-O" + std::to_string(*optimization_level));
  }
  if (generate_debug_info) {
    flags.emplace_back("-g");
  }
  if (generate_line_info) {
    flags.emplace_back("-lineinfo");
  }
  if (max_registers) {
    flags.push_back("-maxrregcount=" + std::to_string(*max_registers));
  }
  flags.insert(flags.end(), extra.begin(), extra.end());
  return flags;
}

linker::linker(const link_options& options, std::source_location where)
    : linker{create(options.to_strings(), where)} {}

linker::linker(std::initializer_list<std::string_view> options, std::source_location where)
    : linker{create(std::vector<std::string>(options.begin(), options.end()), where)} {}

linker::linker(std::span<const std::string> options, std::source_location where)
    : linker{create(options, where)} {}

nvJitLinkHandle linker::create(std::span<const std::string> options, std::source_location where) {
  std::vector<const char*> flags;
  flags.reserve(options.size());
  for (const auto& option : options) {
    flags.push_back(option.c_str());
  }
  const char* no_flag = nullptr;  // nvJitLink rejects a null array even of no options
  nvJitLinkHandle handle = nullptr;
  const auto result = nvJitLinkCreate(&handle, gsl::narrow<std::uint32_t>(flags.size()),
                                      flags.empty() ? &no_flag : flags.data());
  if (result == NVJITLINK_SUCCESS) [[likely]] {
    return handle;
  }
  // A failed create can still leave a handle, holding the error log: read it, then destroy it.
  auto log = read_log(handle, nvJitLinkGetErrorLogSize, nvJitLinkGetErrorLog);
  if (handle != nullptr) {
    check_nothrow(nvJitLinkDestroy(&handle), "nvJitLinkDestroy");
  }
  detail::throw_rtc_error(make_error_code(result), "nvJitLinkCreate",
                          "options " + joined(options, "none"), std::move(log), where);
}

void linker::add(input_type type, std::span<const std::byte> data, std::string_view name,
                 std::source_location where) {
  detail::expect_not_moved_from(!empty(), "rtc::linker", "add", where);
  const std::string input_name{name};
  const auto result = nvJitLinkAddData(handle_, static_cast<nvJitLinkInputType>(type), data.data(),
                                       data.size(), input_name.c_str());
  if (result != NVJITLINK_SUCCESS) [[unlikely]] {
    fail(result, "nvJitLinkAddData", std::string{type_name(type)} + " " + input_name, where);
  }
  state().push_back(input_name);
}

void linker::add(input_type type, std::string_view text, std::string_view name,
                 std::source_location where) {
  add(type, std::as_bytes(std::span{text.data(), text.size()}), name, where);
}

void linker::add(const compiled_program& compiled, std::source_location where) {
  detail::expect_not_moved_from(!empty(), "rtc::linker", "add", where);
  detail::expect_argument_not_moved_from(!compiled.moved_from(), "rtc::linker", "add",
                                         "compiled_program", where);
  if (compiled.has_lto_ir()) {
    add(input_type::lto_ir, compiled.lto_ir(where), compiled.name(where), where);
  } else if (compiled.has_cubin()) {
    add(input_type::cubin, compiled.cubin(where), compiled.name(where), where);
  } else {
    add(input_type::ptx, std::string_view{compiled.ptx(where)}, compiled.name(where), where);
  }
}

void linker::add_file(input_type type, const std::string& path, std::source_location where) {
  detail::expect_not_moved_from(!empty(), "rtc::linker", "add_file", where);
  const auto result =
      nvJitLinkAddFile(handle_, static_cast<nvJitLinkInputType>(type), path.c_str());
  if (result != NVJITLINK_SUCCESS) [[unlikely]] {
    fail(result, "nvJitLinkAddFile", std::string{type_name(type)} + " " + path, where);
  }
  state().push_back(path);
}

std::vector<std::byte> linker::link(std::source_location where) {
  detail::expect_not_moved_from(!empty(), "rtc::linker", "link", where);
  const auto result = nvJitLinkComplete(handle_);
  if (result != NVJITLINK_SUCCESS) [[unlikely]] {
    fail(result, "nvJitLinkComplete", "linking " + joined(state(), "no inputs"), where);
  }
  std::size_t bytes = 0;
  check(nvJitLinkGetLinkedCubinSize(handle_, &bytes), "nvJitLinkGetLinkedCubinSize", where);
  std::vector<std::byte> cubin(bytes);
  check(nvJitLinkGetLinkedCubin(handle_, cubin.data()), "nvJitLinkGetLinkedCubin", where);
  return cubin;
}

std::string linker::info_log() const {
  return read_log(handle_, nvJitLinkGetInfoLogSize, nvJitLinkGetInfoLog);
}

std::string linker::error_log() const {
  return read_log(handle_, nvJitLinkGetErrorLogSize, nvJitLinkGetErrorLog);
}

std::string linker::log() const {
  auto text = error_log();
  const auto info = info_log();
  if (!text.empty() && !info.empty() && text.back() != '\n') {
    text.push_back('\n');
  }
  return text + info;
}

void linker::fail(nvJitLinkResult result, const char* api, std::string details,
                  std::source_location where) const {
  detail::throw_rtc_error(make_error_code(result), api, details, error_log(), where);
}

}  // namespace cuwrap::rtc
