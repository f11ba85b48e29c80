// Loading modules and libraries, with JIT options and logs; kernel and global lookup.
#include "cuwrap/module.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "cuwrap/detail/driver.hpp"
#include "image_check.hpp"
#include "kernel_names.hpp"

namespace cuwrap {

image_kind detect_image_kind(std::span<const std::byte> image) noexcept {
  const auto starts_with = [image](std::uint32_t magic) {
    std::uint32_t word = 0;
    if (image.size() < sizeof(word)) {
      return false;
    }
    std::memcpy(&word, image.data(), sizeof(word));
    return word == magic;
  };
  if (starts_with(0x464c457fU)) {  // "\x7fELF", little-endian
    return image_kind::cubin;
  }
  if (starts_with(0x466243b1U) || starts_with(0xba55ed50U)) {  // fatbin wrapper / fatbin data
    return image_kind::fatbin;
  }
  if (starts_with(0x7f4e43edU)) {  // the LTO-IR container
    return image_kind::lto_ir;
  }
  return image_kind::ptx;
}

module_load_error::module_load_error(std::error_code code, const char* api,
                                     std::string_view details, std::string log,
                                     std::source_location where)
    : error{code, api, std::string{details} + (log.empty() ? "" : "; JIT log:\n" + log), where},
      log_{std::make_shared<const std::string>(std::move(log))} {}

namespace {

// The JIT options in the driver's form, with buffers for the two logs.
class jit_request {
 public:
  explicit jit_request(const jit_options& o)
      : info_(o.log_bytes + 1, '\0'), error_(o.log_bytes + 1, '\0') {
    add(CU_JIT_INFO_LOG_BUFFER, info_.data());
    add(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, o.log_bytes);
    add(CU_JIT_ERROR_LOG_BUFFER, error_.data());
    add(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, o.log_bytes);
    if (o.optimization_level) add(CU_JIT_OPTIMIZATION_LEVEL, *o.optimization_level);
    if (o.target) add(CU_JIT_TARGET, static_cast<unsigned>(*o.target));
    if (o.generate_debug_info) add(CU_JIT_GENERATE_DEBUG_INFO, 1);
    if (o.generate_line_info) add(CU_JIT_GENERATE_LINE_INFO, 1);
    if (o.max_registers) add(CU_JIT_MAX_REGISTERS, *o.max_registers);
  }
  unsigned count() const noexcept { return count_; }
  CUjit_option* options() noexcept { return options_.data(); }
  void** values() noexcept { return values_.data(); }
  std::string info_log() const { return info_.c_str(); }
  std::string error_log() const { return error_.c_str(); }

 private:
  void add(CUjit_option option, std::size_t value) {
    add(option, reinterpret_cast<void*>(static_cast<std::uintptr_t>(value)));  // by value
  }
  void add(CUjit_option option, void* value) {
    options_[count_] = option;
    values_[count_] = value;
    ++count_;
  }

  std::string info_;
  std::string error_;
  std::array<CUjit_option, 9> options_{};
  std::array<void*, 9> values_{};
  unsigned count_ = 0;
};

// PTX must reach the driver NUL-terminated; binary images go as they are.
std::string terminated_copy(std::span<const std::byte> image) {
  std::string text(reinterpret_cast<const char*>(image.data()), image.size());
  text.push_back('\0');
  return text;
}

std::vector<std::byte> read_file(const std::string& path, const char* api,
                                 std::source_location where) {
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    detail::throw_error(make_error_code(CUDA_ERROR_FILE_NOT_FOUND), api,
                        "cannot read '" + path + "'", where);
  }
  std::vector<char> chars{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// What a load's messages call the image: "4096-byte image" or "'k.cubin' (4096 bytes)".
std::string image_origin(std::span<const std::byte> image) {
  return std::to_string(image.size()) + "-byte image";
}
std::string file_origin(const std::string& path, std::size_t bytes) {
  return "'" + path + "' (" + std::to_string(bytes) + " bytes)";
}

// The driver reads cubins and fatbins as far as their own headers say: check them against the
// size first (image_check.hpp), so a short or crafted image fails here, naming what is wrong.
void check_image(std::span<const std::byte> image, const char* api, const std::string& origin,
                 std::source_location where) {
  if (auto problem = detail::image_problem(image)) {
    throw module_load_error{
        make_error_code(CUDA_ERROR_INVALID_IMAGE), api, origin + ": " + *problem, {}, where};
  }
}

// The pointer the driver gets: PTX as a NUL-terminated copy in `ptx`, binary images as they are.
const void* driver_image(std::span<const std::byte> image, std::string& ptx) {
  if (detect_image_kind(image) != image_kind::ptx) return image.data();
  ptx = terminated_copy(image);
  return ptx.data();
}

// Loads a checked image into the current context; the handle and the JIT info log.
std::pair<CUmodule, std::string> load_module(const owning_context& ctx,
                                             std::span<const std::byte> image,
                                             const jit_options& options, const char* api,
                                             const std::string& origin,
                                             std::source_location where) {
  (void)ctx.lifetime_for("module", "load", where);  // a moved-from context throws here
  check_image(image, api, origin, where);
  std::string ptx;
  const void* data = driver_image(image, ptx);
  jit_request jit{options};
  const scoped_current_context current{ctx, where};
  CUmodule handle{};
  const CUresult r =
      detail::driver().cuModuleLoadDataEx(&handle, data, jit.count(), jit.options(), jit.values());
  if (r != CUDA_SUCCESS) {
    throw module_load_error{make_error_code(r), "cuModuleLoadDataEx", origin, jit.error_log(),
                            where};
  }
  return {handle, jit.info_log()};
}

std::pair<CUlibrary, std::string> load_library(std::span<const std::byte> image,
                                               const jit_options& options, const char* api,
                                               const std::string& origin,
                                               std::source_location where) {
  check_image(image, api, origin, where);
  std::string ptx;
  const void* data = driver_image(image, ptx);
  jit_request jit{options};
  CUlibrary handle{};
  const CUresult r = detail::driver().cuLibraryLoadData(&handle, data, jit.options(), jit.values(),
                                                        jit.count(), nullptr, nullptr, 0);
  if (r != CUDA_SUCCESS) {
    throw module_load_error{make_error_code(r), "cuLibraryLoadData", origin, jit.error_log(),
                            where};
  }
  return {handle, jit.info_log()};
}

std::span<const std::byte> as_bytes(std::string_view text) {
  return std::as_bytes(std::span{text.data(), text.size()});
}

// The parameter list a typed lookup wants, demangled; null for an untyped lookup.
std::unique_ptr<std::string> wanted_parameters(std::span<const char* const> types, bool typed) {
  return typed ? std::make_unique<std::string>(detail::demangled_parameters(types)) : nullptr;
}

// Looks a kernel up by `name` with `get(name)` (the driver call `api`, which fills the handle);
// when the driver does not know the name, as an unmangled C++ name among `kernels()`, demangled,
// the parameter types picking among overloads. Returns the name found; throws if none.
template <class Get, class Kernels>
std::string find_kernel_name(std::string_view name, std::span<const char* const> parameter_types,
                             bool typed, const char* api, Get get, Kernels kernels,
                             std::source_location where) {
  std::string n{name};
  CUresult r = get(n.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) {
    const auto parameters = wanted_parameters(parameter_types, typed);
    n = detail::match_kernel_name(name, kernels(), parameters.get(), api, where);
    r = get(n.c_str());
  }
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), api, "kernel '" + n + "'", where);
  }
  return n;
}

}  // namespace

struct module::state {
  CUmodule handle;
  std::shared_ptr<const detail::context_owner> context;
  std::string info_log;
  state(CUmodule h, std::shared_ptr<const detail::context_owner> ctx, std::string log) noexcept
      : handle{h}, context{std::move(ctx)}, info_log{std::move(log)} {}
  ~state() { check_nothrow(detail::driver().cuModuleUnload(handle), "cuModuleUnload"); }
  state(const state&) = delete;
  state& operator=(const state&) = delete;
};

module module::load(const owning_context& ctx, std::span<const std::byte> image,
                    const jit_options& options, std::source_location where) {
  auto [handle, log] =
      load_module(ctx, image, options, "cuwrap::module::load", image_origin(image), where);
  try {
    return module{std::make_shared<const state>(handle, ctx.lifetime(), std::move(log))};
  } catch (...) {
    check_nothrow(detail::driver().cuModuleUnload(handle), "cuModuleUnload");
    throw;
  }
}

module module::load(const owning_context& ctx, std::string_view image, const jit_options& options,
                    std::source_location where) {
  return load(ctx, as_bytes(image), options, where);
}

module module::load_file(const owning_context& ctx, const std::string& path,
                         const jit_options& options, std::source_location where) {
  const char* api = "cuwrap::module::load_file";
  const auto image = read_file(path, api, where);
  auto [handle, log] =
      load_module(ctx, image, options, api, file_origin(path, image.size()), where);
  try {
    return module{std::make_shared<const state>(handle, ctx.lifetime(), std::move(log))};
  } catch (...) {
    check_nothrow(detail::driver().cuModuleUnload(handle), "cuModuleUnload");
    throw;
  }
}

CUmodule module::get() const noexcept { return state_ ? state_->handle : nullptr; }

const std::string& module::info_log() const noexcept {
  static const std::string none;
  return state_ ? state_->info_log : none;
}

cuwrap::kernel module::kernel(std::string_view name, std::source_location where) const {
  return find_kernel(name, {}, false, where);
}

cuwrap::kernel module::find_kernel(std::string_view name,
                                   std::span<const char* const> parameter_types, bool typed,
                                   std::source_location where) const {
  detail::expect_not_moved_from(state_ != nullptr, "module", "kernel", where);
  CUfunction f{};
  const std::string n = find_kernel_name(
      name, parameter_types, typed, "cuModuleGetFunction",
      [&](const char* c) { return detail::driver().cuModuleGetFunction(&f, state_->handle, c); },
      [&] { return kernels(where); }, where);
  return cuwrap::kernel::from_function(f, n, state_, state_->context->handle, where);
}

std::vector<std::string> module::kernels(std::source_location where) const {
  detail::expect_not_moved_from(state_ != nullptr, "module", "kernels", where);
  const auto& d = detail::driver();
  unsigned count = 0;
  check(d.cuModuleGetFunctionCount(&count, state_->handle), "cuModuleGetFunctionCount", where);
  if (count == 0) return {};  // the driver refuses a null array, even for no entries
  std::vector<CUfunction> handles(count);
  check(d.cuModuleEnumerateFunctions(handles.data(), count, state_->handle),
        "cuModuleEnumerateFunctions", where);
  std::vector<std::string> names;
  for (CUfunction f : handles) {
    const char* name = nullptr;
    check(d.cuFuncGetName(&name, f), "cuFuncGetName", where);
    names.emplace_back(name);
  }
  return names;
}

module::global_info module::global_bytes(std::string_view name, std::source_location where) const {
  detail::expect_not_moved_from(state_ != nullptr, "module", "global", where);
  const std::string n{name};
  global_info info{};
  const CUresult r =
      detail::driver().cuModuleGetGlobal(&info.address, &info.bytes, state_->handle, n.c_str());
  if (r != CUDA_SUCCESS) {
    detail::throw_error(make_error_code(r), "cuModuleGetGlobal", "global '" + n + "'", where);
  }
  return info;
}

void module::check_global_size(std::string_view name, std::size_t bytes, std::size_t element,
                               std::source_location where) {
  if (bytes % element != 0) {
    detail::throw_error(make_error_code(CUDA_ERROR_INVALID_VALUE), "cuModuleGetGlobal",
                        "global '" + std::string{name} + "' has " + std::to_string(bytes) +
                            " bytes, not a multiple of the element size " + std::to_string(element),
                        where);
  }
}

struct library::state {
  CUlibrary handle;
  std::string info_log;
  state(CUlibrary h, std::string log) noexcept : handle{h}, info_log{std::move(log)} {}
  ~state() { check_nothrow(detail::driver().cuLibraryUnload(handle), "cuLibraryUnload"); }
  state(const state&) = delete;
  state& operator=(const state&) = delete;
};

library library::load(std::span<const std::byte> image, const jit_options& options,
                      std::source_location where) {
  auto [handle, log] =
      load_library(image, options, "cuwrap::library::load", image_origin(image), where);
  try {
    return library{std::make_shared<const state>(handle, std::move(log))};
  } catch (...) {
    check_nothrow(detail::driver().cuLibraryUnload(handle), "cuLibraryUnload");
    throw;
  }
}

library library::load(std::string_view image, const jit_options& options,
                      std::source_location where) {
  return load(as_bytes(image), options, where);
}

library library::load_file(const std::string& path, const jit_options& options,
                           std::source_location where) {
  const char* api = "cuwrap::library::load_file";
  const auto image = read_file(path, api, where);
  auto [handle, log] = load_library(image, options, api, file_origin(path, image.size()), where);
  try {
    return library{std::make_shared<const state>(handle, std::move(log))};
  } catch (...) {
    check_nothrow(detail::driver().cuLibraryUnload(handle), "cuLibraryUnload");
    throw;
  }
}

CUlibrary library::get() const noexcept { return state_ ? state_->handle : nullptr; }

cuwrap::kernel library::kernel(std::string_view name, std::source_location where) const {
  return find_kernel(name, {}, false, where);
}

cuwrap::kernel library::find_kernel(std::string_view name,
                                    std::span<const char* const> parameter_types, bool typed,
                                    std::source_location where) const {
  detail::expect_not_moved_from(state_ != nullptr, "library", "kernel", where);
  CUkernel k{};
  const std::string n = find_kernel_name(
      name, parameter_types, typed, "cuLibraryGetKernel",
      [&](const char* c) { return detail::driver().cuLibraryGetKernel(&k, state_->handle, c); },
      [&] { return kernels(where); }, where);
  return cuwrap::kernel::from_library_kernel(k, n, state_, where);
}

std::vector<std::string> library::kernels(std::source_location where) const {
  detail::expect_not_moved_from(state_ != nullptr, "library", "kernels", where);
  const auto& d = detail::driver();
  unsigned count = 0;
  check(d.cuLibraryGetKernelCount(&count, state_->handle), "cuLibraryGetKernelCount", where);
  if (count == 0) return {};  // the driver refuses a null array, even for no entries
  std::vector<CUkernel> handles(count);
  check(d.cuLibraryEnumerateKernels(handles.data(), count, state_->handle),
        "cuLibraryEnumerateKernels", where);
  std::vector<std::string> names;
  for (CUkernel k : handles) {
    const char* name = nullptr;
    check(d.cuKernelGetName(&name, k), "cuKernelGetName", where);
    names.emplace_back(name);
  }
  return names;
}

}  // namespace cuwrap
