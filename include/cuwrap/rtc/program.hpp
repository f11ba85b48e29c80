// Run-time compilation with NVRTC: a CUDA C++ source in, PTX, a cubin or LTO-IR out.
#pragma once

#include <nvrtc.h>

#include <compare>
#include <cstddef>
#include <initializer_list>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuwrap/detail/unique_handle.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/rtc/error.hpp"

namespace cuwrap::rtc {

/// A library version such as 13.0.
struct version {
  int major = 0;  ///< major version (13 for CUDA 13.0)
  int minor = 0;  ///< minor version
  friend constexpr auto operator<=>(version, version) = default;
};

/// The version of the NVRTC library in use (nvrtcVersion). Needs no driver or GPU. Throws
/// cuwrap::error at `where`.
[[nodiscard]] version nvrtc_version(std::source_location where = std::source_location::current());
/// The real architectures NVRTC can compile for, as numbers such as 90 for sm_90
/// (nvrtcGetNumSupportedArchs, nvrtcGetSupportedArchs). Throws cuwrap::error at `where`.
[[nodiscard]] std::vector<int> supported_archs(
    std::source_location where = std::source_location::current());

/// The real architecture of a compute capability: "sm_90" for 9.0. A cubin for it runs on
/// devices of that capability.
[[nodiscard]] std::string real_arch(compute_capability cc);
/// The virtual architecture of a compute capability: "compute_90" for 9.0. PTX for it runs
/// on devices of that capability or newer, compiled by the driver when loaded.
[[nodiscard]] std::string virtual_arch(compute_capability cc);

/// A header that `#include "name"` finds without any file: its name and its text.
struct header {
  std::string_view name;      ///< the name the source includes it by ("params.h")
  std::string_view contents;  ///< the header's text
};

/// NVRTC options, typed. Each member becomes one or more of NVRTC's flags (to_strings()).
/// Every member has an initializer, so designated initializers may leave any out without a
/// -Wmissing-field-initializers warning: `{.arch = "sm_90", .lto = true}`.
struct compile_options {
  /// "sm_90" gives PTX and a cubin; "compute_90" gives PTX only (-arch=). Empty: NVRTC's
  /// default, a virtual architecture.
  std::string arch{};
  std::string standard{};                    ///< "c++17", "c++20" (-std=); empty: NVRTC's default
  bool generate_line_info = false;           ///< line numbers for profilers (-lineinfo)
  bool generate_debug_info = false;          ///< device debug information (-G)
  bool relocatable_device_code = false;      ///< separate compilation, for linking (-rdc=true)
  bool lto = false;                          ///< LTO-IR for rtc::linker, instead of PTX (-dlto)
  std::vector<std::string> defines{};        ///< "NAME" or "NAME=value" (-D)
  std::vector<std::string> include_paths{};  ///< directories searched for headers (-I)
  std::vector<std::string> extra{};          ///< NVRTC flags passed as they are, after the rest

  /// The flags NVRTC receives, in order: arch, standard, the switches, defines, include
  /// paths, extra.
  [[nodiscard]] std::vector<std::string> to_strings() const;
};

class program;

/// What a successful compilation produced: PTX, a cubin, or LTO-IR, the log, and the
/// lowered names of the name expressions. A value: copyable, and independent of the program
/// (it holds copies), so it may outlive it. Once moved from, every accessor throws
/// cuwrap::usage_error naming the operation (a copy of a moved-from one is moved from too);
/// has_ptx(), has_cubin() and has_lto_ir() say false.
class compiled_program {
 public:
  /// True once moved from: it holds nothing.
  [[nodiscard]] bool moved_from() const noexcept { return moved_.value; }

  /// The program's name, as given to program.
  [[nodiscard]] const std::string& name(
      std::source_location where = std::source_location::current()) const {
    expect_usable("name", where);
    return name_;
  }
  /// The architecture it was compiled for ("sm_90"), or "" for NVRTC's default.
  [[nodiscard]] const std::string& arch(
      std::source_location where = std::source_location::current()) const {
    expect_usable("arch", where);
    return arch_;
  }
  /// The compiler's log: warnings, or empty (nvrtcGetProgramLog).
  [[nodiscard]] const std::string& log(
      std::source_location where = std::source_location::current()) const {
    expect_usable("log", where);
    return log_;
  }

  /// True if there is PTX (any compilation without -dlto).
  [[nodiscard]] bool has_ptx() const noexcept { return !moved_from() && !ptx_.empty(); }
  /// True if there is a cubin (compiled for a real sm_ architecture, without -dlto).
  [[nodiscard]] bool has_cubin() const noexcept { return !moved_from() && !cubin_.empty(); }
  /// True if there is LTO-IR (compiled with -dlto).
  [[nodiscard]] bool has_lto_ir() const noexcept { return !moved_from() && !lto_ir_.empty(); }

  /// The PTX text (nvrtcGetPTX), NUL-terminated for cuModuleLoadData. Throws cuwrap::error
  /// (NVRTC_ERROR_INVALID_INPUT) saying why when there is none (compiled with -dlto).
  [[nodiscard]] const std::string& ptx(
      std::source_location where = std::source_location::current()) const {
    expect_usable("ptx", where);
    if (ptx_.empty()) [[unlikely]] {
      missing_output(output::ptx, where);
    }
    return ptx_;
  }
  /// The cubin, an ELF image (nvrtcGetCUBIN). Throws cuwrap::error (NVRTC_ERROR_INVALID_INPUT)
  /// saying why when there is none: compiled for a virtual architecture, or with -dlto.
  [[nodiscard]] std::span<const std::byte> cubin(
      std::source_location where = std::source_location::current()) const {
    expect_usable("cubin", where);
    if (cubin_.empty()) [[unlikely]] {
      missing_output(output::cubin, where);
    }
    return cubin_;
  }
  /// The LTO-IR (nvrtcGetLTOIR), for rtc::linker. Throws cuwrap::error
  /// (NVRTC_ERROR_INVALID_INPUT) when there is none (compiled without -dlto).
  [[nodiscard]] std::span<const std::byte> lto_ir(
      std::source_location where = std::source_location::current()) const {
    expect_usable("lto_ir", where);
    if (lto_ir_.empty()) [[unlikely]] {
      missing_output(output::lto_ir, where);
    }
    return lto_ir_;
  }

  /// The mangled name of `expression` ("_Z4fillIiEvPT_" for "fill<int>"), to look the kernel
  /// up in a module (nvrtcGetLoweredName). Throws cuwrap::error
  /// (NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID) naming the expression when it was not added
  /// with program::add_name_expression() before compiling.
  [[nodiscard]] const std::string& lowered_name(
      std::string_view expression,
      std::source_location where = std::source_location::current()) const;
  /// Every name expression and its lowered name, in the order they were added.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& lowered_names(
      std::source_location where = std::source_location::current()) const {
    expect_usable("lowered_names", where);
    return lowered_names_;
  }

 private:
  friend class program;
  enum class output { ptx, cubin, lto_ir };
  compiled_program() = default;
  [[noreturn]] void missing_output(output kind, std::source_location where) const;
  void expect_usable(const char* operation, std::source_location where) const {
    detail::expect_not_moved_from(!moved_from(), "rtc::compiled_program", operation, where);
  }

  // True in a moved-from object. Moving sets it in the source; copying copies it.
  struct moved_from_flag {
    bool value = false;
    moved_from_flag() = default;
    moved_from_flag(const moved_from_flag&) = default;
    moved_from_flag& operator=(const moved_from_flag&) = default;
    moved_from_flag(moved_from_flag&& other) noexcept : value{std::exchange(other.value, true)} {}
    moved_from_flag& operator=(moved_from_flag&& other) noexcept {
      value = std::exchange(other.value, true);  // self-move keeps the value
      return *this;
    }
    ~moved_from_flag() = default;
  };

  std::string name_;
  std::string arch_;
  std::string log_;
  std::string ptx_;
  std::vector<std::byte> cubin_;
  std::vector<std::byte> lto_ir_;
  std::vector<std::pair<std::string, std::string>> lowered_names_;
  moved_from_flag moved_;
};

}  // namespace cuwrap::rtc

namespace cuwrap::detail {
/// What an rtc::program keeps beside its handle.
struct rtc_program_state {
  std::string name;                           ///< the program's name
  std::vector<std::string> name_expressions;  ///< added with add_name_expression()
  bool compiled = false;                      ///< compile() succeeded once
};
/// How an rtc::program owner destroys its handle (nvrtcDestroyProgram); see unique_handle.
struct rtc_program_traits {
  using ref_type = handle_view<nvrtcProgram>;
  using state_type = rtc_program_state;
  static constexpr nvrtcProgram empty_handle() noexcept { return nullptr; }
  static void destroy(nvrtcProgram handle) noexcept {
    check_nothrow(nvrtcDestroyProgram(&handle), "nvrtcDestroyProgram");
  }
};
}  // namespace cuwrap::detail

namespace cuwrap::rtc {

/// A CUDA C++ source to compile with NVRTC (nvrtcCreateProgram; nvrtcDestroyProgram in the
/// destructor). Move-only; a moved-from program is empty. Compiling needs no driver or GPU.
///
///     cuwrap::rtc::program prog{source, "saxpy.cu"};
///     auto out = prog.compile({.arch = "sm_90", .standard = "c++17"});
///     auto mod = cuwrap::module::load(ctx, out.cubin());
class program : public detail::unique_handle<detail::rtc_program_traits> {
 public:
  /// A program named `name` (the name NVRTC's log uses) from `source`, with `headers` that
  /// `#include` finds by name (nvrtcCreateProgram; NVRTC copies the texts). Throws
  /// cuwrap::error.
  program(std::string_view source, std::string_view name, std::span<const header> headers = {},
          std::source_location where = std::source_location::current());
  /// The same, with the headers in braces: `{{"params.h", "#define N 4"}}`.
  program(std::string_view source, std::string_view name, std::initializer_list<header> headers,
          std::source_location where = std::source_location::current())
      : program{source, name, std::span<const header>{headers.begin(), headers.size()}, where} {}

  /// Takes ownership of `handle`, a program named `name`. Name expressions added to it
  /// elsewhere are not known here, so compile() does not collect their lowered names.
  [[nodiscard]] static program adopt(native_handle_type handle, std::string name) noexcept {
    return program{handle, std::move(name)};
  }

  /// The program's name ("" once moved from or released).
  [[nodiscard]] const std::string& name() const noexcept { return state().name; }

  /// Asks for the lowered (mangled) name of `expression`, such as "fill<int>" or "&table",
  /// which also instantiates templates (nvrtcAddNameExpression). Must come before compile();
  /// after it throws cuwrap::error (NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION).
  void add_name_expression(std::string_view expression,
                           std::source_location where = std::source_location::current());

  /// Compiles (nvrtcCompileProgram) and collects the PTX, cubin, LTO-IR, log and lowered
  /// names. Throws rtc_error with the compiler's log when compilation fails (a syntax error,
  /// an unknown option); a failed compilation may be retried with other options. A program
  /// compiles successfully once: NVRTC would mix the outputs of two compilations, so a second
  /// compile() throws cuwrap::error (NVRTC_ERROR_INVALID_PROGRAM).
  [[nodiscard]] compiled_program compile(
      const compile_options& options = {},
      std::source_location where = std::source_location::current());
  /// Compiles with NVRTC flags given as they are: `{"-arch=sm_90", "-std=c++17"}`.
  [[nodiscard]] compiled_program compile(
      std::initializer_list<std::string_view> options,
      std::source_location where = std::source_location::current());
  /// Compiles with NVRTC flags given as they are.
  [[nodiscard]] compiled_program compile(
      std::span<const std::string> options,
      std::source_location where = std::source_location::current());

 private:
  program(native_handle_type handle, std::string name) noexcept
      : unique_handle{detail::handle_view<nvrtcProgram>{handle},
                      detail::rtc_program_state{std::move(name), {}, false}} {}
  static native_handle_type create(std::string_view source, const std::string& name,
                                   std::span<const header> headers, std::source_location where);
};

static_assert(!std::is_copy_constructible_v<program> &&
              std::is_nothrow_move_constructible_v<program> &&
              std::is_nothrow_move_assignable_v<program>);
// The handle, the name, the name expressions, and the compiled flag (padded to a pointer).
static_assert(sizeof(program) == sizeof(nvrtcProgram) + sizeof(std::string) +
                                     sizeof(std::vector<std::string>) + sizeof(void*));
static_assert(std::is_copy_constructible_v<compiled_program> &&
              std::is_nothrow_move_constructible_v<compiled_program>);

}  // namespace cuwrap::rtc
