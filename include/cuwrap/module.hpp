// Modules (cuModuleLoadDataEx) and libraries (cuLibraryLoadData): loaded cubin, PTX or fatbin
// images, with typed JIT options and the JIT logs captured.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "cuwrap/context.hpp"
#include "cuwrap/device_span.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/kernel.hpp"

namespace cuwrap {

namespace detail {
/// The Itanium-mangled names of Params (typeid(P).name()), for matching a typed lookup's
/// signature against the demangled names of a module's kernels.
template <class Signature>
struct signature_types;
template <class... Params>
struct signature_types<void(Params...)> {
  static std::span<const char* const> names() {
    static const char* const types[] = {typeid(Params).name()..., nullptr};
    return {types, sizeof...(Params)};
  }
};
}  // namespace detail

/// What an image is, judged by its content.
enum class image_kind {
  cubin,   ///< an ELF file ("\x7fELF")
  fatbin,  ///< a fat binary (magic 0xBA55ED50, or a wrapper 0x466243B1)
  ptx,     ///< PTX text
  lto_ir,  ///< LTO-IR, NVVM IR from nvcc or NVRTC -dlto (magic 0x7F4E43ED)
};

/// The kind of `image`: ELF, fatbin or LTO-IR magic, otherwise PTX text.
[[nodiscard]] image_kind detect_image_kind(std::span<const std::byte> image) noexcept;

/// Options for the JIT compiler when PTX is loaded (CUjit_option). Logs are always captured.
struct jit_options {
  std::optional<unsigned> optimization_level{};  ///< 0 to 4 (CU_JIT_OPTIMIZATION_LEVEL)
  std::optional<CUjit_target> target{};          ///< compile for this target, not the context's
  bool generate_debug_info = false;              ///< -G (CU_JIT_GENERATE_DEBUG_INFO)
  bool generate_line_info = false;               ///< -lineinfo (CU_JIT_GENERATE_LINE_INFO)
  std::optional<unsigned> max_registers{};       ///< per thread (CU_JIT_MAX_REGISTERS)
  std::size_t log_bytes = 16384;                 ///< room for each of the info and error logs
};

/// A load that failed; log() is the JIT compiler's error log.
class [[gnu::visibility("default")]] module_load_error : public error {
 public:
  module_load_error(std::error_code code, const char* api, std::string_view details,
                    std::string log, std::source_location where);
  /// The JIT error log (may be empty for non-PTX images).
  [[nodiscard]] const std::string& log() const noexcept { return *log_; }

 private:
  std::shared_ptr<const std::string> log_;  // shared: copying an exception never throws
};

/// A module loaded into a context (cuModuleLoadDataEx; unloaded with cuModuleUnload when the
/// last module object or kernel from it goes). Keeps its context alive. Copying shares it. A
/// moved-from module is empty (get() is null): kernel(), kernels() and global() throw
/// cuwrap::usage_error.
class module {
 public:
  using native_handle_type = CUmodule;

  /// Loads a cubin, fatbin or PTX image (detected by content) into `ctx`, made current for the
  /// call only if it is not. Throws module_load_error with the JIT error log.
  [[nodiscard]] static module load(const owning_context& ctx, std::span<const std::byte> image,
                                   const jit_options& options = {},
                                   std::source_location where = std::source_location::current());
  /// Loads PTX (or any image) given as text.
  [[nodiscard]] static module load(const owning_context& ctx, std::string_view image,
                                   const jit_options& options = {},
                                   std::source_location where = std::source_location::current());
  /// Reads `path` and loads it. Throws cuwrap::error naming the file if it cannot be read.
  [[nodiscard]] static module load_file(
      const owning_context& ctx, const std::string& path, const jit_options& options = {},
      std::source_location where = std::source_location::current());

  /// The driver's handle.
  [[nodiscard]] native_handle_type get() const noexcept;
  /// The JIT info log of the load (empty for cubins).
  [[nodiscard]] const std::string& info_log() const noexcept;

  /// The kernel `name` (cuModuleGetFunction), with its parameter layout and limits. `name` is
  /// the exact (mangled) name, or a C++ kernel's unmangled name ("scale_chunk", "ns::scale",
  /// "scale<float>", or the whole demangled signature) when exactly one kernel has it. A
  /// missing or ambiguous name throws errc::not_found listing the kernels, demangled.
  [[nodiscard]] cuwrap::kernel kernel(
      std::string_view name, std::source_location where = std::source_location::current()) const;
  /// The kernel `name`, typed: an unmangled name picks the overload or template instantiation
  /// whose parameters are Signature's. Its layout must match Signature (see typed_kernel).
  template <class Signature>
  [[nodiscard]] typed_kernel<Signature> kernel(
      std::string_view name, std::source_location where = std::source_location::current()) const {
    return typed_kernel<Signature>{
        find_kernel(name, detail::signature_types<Signature>::names(), true, where), where};
  }
  /// The names of all kernels in the module, as the driver has them (mangled for C++ kernels;
  /// cuModuleEnumerateFunctions, cuFuncGetName).
  [[nodiscard]] std::vector<std::string> kernels(
      std::source_location where = std::source_location::current()) const;

  /// The global variable `name` as a span of T (cuModuleGetGlobal). Throws errc::not_found
  /// naming the global, or invalid_value if its size is not a multiple of sizeof(T).
  template <class T>
  [[nodiscard]] device_span<T> global(
      std::string_view name, std::source_location where = std::source_location::current()) const {
    const auto [address, bytes] = global_bytes(name, where);
    check_global_size(name, bytes, sizeof(T), where);
    return device_span<T>::from_address(address, bytes / sizeof(T));
  }

  struct state;  ///< the shared owner: CUmodule, the context's lifetime, the JIT info log

 private:
  explicit module(std::shared_ptr<const state> shared) noexcept : state_{std::move(shared)} {}
  struct global_info {
    CUdeviceptr address;
    std::size_t bytes;
  };
  [[nodiscard]] global_info global_bytes(std::string_view name, std::source_location where) const;
  [[nodiscard]] cuwrap::kernel find_kernel(std::string_view name,
                                           std::span<const char* const> parameter_types, bool typed,
                                           std::source_location where) const;
  static void check_global_size(std::string_view name, std::size_t bytes, std::size_t element,
                                std::source_location where);

  std::shared_ptr<const state> state_;
};

/// A context-independent library (cuLibraryLoadData; cuLibraryUnload when the last library
/// object or kernel from it goes): its kernels work in every context. Copying shares it. A
/// moved-from library is empty (get() is null): kernel() and kernels() throw
/// cuwrap::usage_error.
class library {
 public:
  using native_handle_type = CUlibrary;

  /// Loads a cubin, fatbin or PTX image. Throws module_load_error with the JIT error log.
  [[nodiscard]] static library load(std::span<const std::byte> image,
                                    const jit_options& options = {},
                                    std::source_location where = std::source_location::current());
  /// Loads an image given as text (PTX).
  [[nodiscard]] static library load(std::string_view image, const jit_options& options = {},
                                    std::source_location where = std::source_location::current());
  /// Reads `path` and loads it.
  [[nodiscard]] static library load_file(
      const std::string& path, const jit_options& options = {},
      std::source_location where = std::source_location::current());

  /// The driver's handle.
  [[nodiscard]] native_handle_type get() const noexcept;
  /// The kernel `name` (cuLibraryGetKernel): the exact name or an unmangled one, as for
  /// module::kernel(). A missing or ambiguous name throws listing the kernels, demangled.
  [[nodiscard]] cuwrap::kernel kernel(
      std::string_view name, std::source_location where = std::source_location::current()) const;
  /// The kernel `name`, typed; an unmangled name picks the overload whose parameters are
  /// Signature's.
  template <class Signature>
  [[nodiscard]] typed_kernel<Signature> kernel(
      std::string_view name, std::source_location where = std::source_location::current()) const {
    return typed_kernel<Signature>{
        find_kernel(name, detail::signature_types<Signature>::names(), true, where), where};
  }
  /// The names of all kernels, as the driver has them (cuLibraryEnumerateKernels,
  /// cuKernelGetName).
  [[nodiscard]] std::vector<std::string> kernels(
      std::source_location where = std::source_location::current()) const;

  struct state;  ///< the shared owner: CUlibrary and the JIT info log

 private:
  explicit library(std::shared_ptr<const state> shared) noexcept : state_{std::move(shared)} {}
  [[nodiscard]] cuwrap::kernel find_kernel(std::string_view name,
                                           std::span<const char* const> parameter_types, bool typed,
                                           std::source_location where) const;
  std::shared_ptr<const state> state_;
};

}  // namespace cuwrap
