// Run-time linking with nvJitLink: PTX, cubins, LTO-IR, fatbins and libraries in, a cubin out.
#pragma once

#include <nvJitLink.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/rtc/error.hpp"
#include "cuwrap/rtc/program.hpp"

namespace cuwrap::detail {
/// How an rtc::linker owner destroys its handle (nvJitLinkDestroy); see unique_handle. It keeps
/// the names of its inputs beside the handle, for error messages.
struct rtc_linker_traits {
  using ref_type = handle_view<nvJitLinkHandle>;
  using state_type = std::vector<std::string>;
  static constexpr nvJitLinkHandle empty_handle() noexcept { return nullptr; }
  static void destroy(nvJitLinkHandle handle) noexcept {
    check_nothrow(nvJitLinkDestroy(&handle), "nvJitLinkDestroy");
  }
};
}  // namespace cuwrap::detail

namespace cuwrap::rtc {

/// The version of the nvJitLink library in use (nvJitLinkVersion). Needs no driver or GPU.
/// Throws cuwrap::error at `where`.
[[nodiscard]] version nvjitlink_version(
    std::source_location where = std::source_location::current());

/// What a linker input is (nvJitLinkInputType).
enum class input_type {
  cubin = NVJITLINK_INPUT_CUBIN,      ///< a cubin (ELF), compiled with -rdc=true to link
  ptx = NVJITLINK_INPUT_PTX,          ///< PTX text
  lto_ir = NVJITLINK_INPUT_LTOIR,     ///< LTO-IR (NVRTC -dlto); needs link_options::lto
  fatbin = NVJITLINK_INPUT_FATBIN,    ///< a fat binary
  object = NVJITLINK_INPUT_OBJECT,    ///< a host object with embedded device code (nvcc -rdc)
  library = NVJITLINK_INPUT_LIBRARY,  ///< a host library (.a) of such objects
  index = NVJITLINK_INPUT_INDEX,      ///< an index file of libraries
  any = NVJITLINK_INPUT_ANY,          ///< let nvJitLink tell the type from the content
};

/// nvJitLink options, typed. Each member becomes one of nvJitLink's flags (to_strings()).
/// Every member has an initializer, so designated initializers may leave any out.
struct link_options {
  std::string arch{};                            ///< "sm_90"; required (-arch=)
  bool lto = false;                              ///< link-time optimization of LTO-IR (-lto)
  std::optional<unsigned> optimization_level{};  ///< 0 or 3 (-O)
  bool generate_debug_info = false;              ///< device debug information (-g)
  bool generate_line_info = false;               ///< line numbers for profilers (-lineinfo)
  std::optional<unsigned> max_registers{};       ///< per thread (-maxrregcount=)
  std::vector<std::string> extra{};  ///< nvJitLink flags passed as they are, after the rest

  /// The flags nvJitLink receives, in the order above.
  [[nodiscard]] std::vector<std::string> to_strings() const;
};

/// A link in progress (nvJitLinkCreate; nvJitLinkDestroy in the destructor): add inputs,
/// then link() once. Move-only; a moved-from linker is empty. Needs no driver or GPU.
///
///     cuwrap::rtc::linker lk{{.arch = "sm_90", .lto = true}};
///     lk.add(a);  // compiled_programs, compiled with -dlto
///     lk.add(b);
///     auto mod = cuwrap::module::load(ctx, lk.link());
class linker : public detail::unique_handle<detail::rtc_linker_traits> {
 public:
  /// A linker with `options` (nvJitLinkCreate). Throws rtc_error with nvJitLink's error log
  /// for a missing arch or an unknown option.
  explicit linker(const link_options& options,
                  std::source_location where = std::source_location::current());
  /// A linker with nvJitLink flags given as they are: `{"-arch=sm_90", "-lto"}`.
  linker(std::initializer_list<std::string_view> options,
         std::source_location where = std::source_location::current());
  /// A linker with nvJitLink flags given as they are.
  explicit linker(std::span<const std::string> options,
                  std::source_location where = std::source_location::current());

  /// Takes ownership of `handle`.
  [[nodiscard]] static linker adopt(native_handle_type handle) noexcept { return linker{handle}; }

  /// Adds an input of `type` (nvJitLinkAddData; nvJitLink copies it). `name` appears in
  /// logs and errors. Throws rtc_error with the error log for input nvJitLink rejects (the
  /// wrong type, LTO-IR without link_options::lto).
  void add(input_type type, std::span<const std::byte> data, std::string_view name,
           std::source_location where = std::source_location::current());
  /// Adds a text input (PTX) of `type`.
  void add(input_type type, std::string_view text, std::string_view name,
           std::source_location where = std::source_location::current());
  /// Adds what `compiled` holds, named after its program: its LTO-IR if it has some, else its
  /// cubin, else its PTX.
  void add(const compiled_program& compiled,
           std::source_location where = std::source_location::current());
  /// Adds the file at `path` (nvJitLinkAddFile), for objects and libraries.
  void add_file(input_type type, const std::string& path,
                std::source_location where = std::source_location::current());

  /// Links the inputs (nvJitLinkComplete) and returns the cubin (nvJitLinkGetLinkedCubin).
  /// Throws rtc_error with the error log when the link fails (an undefined function, an
  /// architecture mismatch). Call it once.
  [[nodiscard]] std::vector<std::byte> link(
      std::source_location where = std::source_location::current());

  /// nvJitLink's info log (nvJitLinkGetInfoLog): with -verbose, what it did.
  [[nodiscard]] std::string info_log() const;
  /// nvJitLink's error log (nvJitLinkGetErrorLog).
  [[nodiscard]] std::string error_log() const;
  /// The error log, then the info log.
  [[nodiscard]] std::string log() const;

 private:
  explicit linker(native_handle_type handle) noexcept
      : unique_handle{detail::handle_view<nvJitLinkHandle>{handle}, {}} {}
  static native_handle_type create(std::span<const std::string> options,
                                   std::source_location where);
  [[noreturn]] void fail(nvJitLinkResult result, const char* api, std::string details,
                         std::source_location where) const;
};

static_assert(!std::is_copy_constructible_v<linker> &&
              std::is_nothrow_move_constructible_v<linker> &&
              std::is_nothrow_move_assignable_v<linker>);
static_assert(sizeof(linker) == sizeof(nvJitLinkHandle) + sizeof(std::vector<std::string>));

}  // namespace cuwrap::rtc
