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

#include "cuwrap/device.hpp"
#include "cuwrap/rtc/error.hpp"

namespace cuwrap::rtc {

/// A library version such as 13.0.
struct version {
  int major = 0;  ///< major version (13 for CUDA 13.0)
  int minor = 0;  ///< minor version
  friend constexpr auto operator<=>(version, version) = default;
};

/// The version of the NVRTC library in use (nvrtcVersion). Needs no driver or GPU.
[[nodiscard]] version nvrtc_version();
/// The real architectures NVRTC can compile for, as numbers such as 90 for sm_90
/// (nvrtcGetNumSupportedArchs, nvrtcGetSupportedArchs).
[[nodiscard]] std::vector<int> supported_archs();

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
/// (it holds copies), so it may outlive it.
class compiled_program {
 public:
  /// The program's name, as given to program.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The architecture it was compiled for ("sm_90"), or "" for NVRTC's default.
  [[nodiscard]] const std::string& arch() const noexcept { return arch_; }
  /// The compiler's log: warnings, or empty (nvrtcGetProgramLog).
  [[nodiscard]] const std::string& log() const noexcept { return log_; }

  /// True if there is PTX (any compilation without -dlto).
  [[nodiscard]] bool has_ptx() const noexcept { return !ptx_.empty(); }
  /// True if there is a cubin (compiled for a real sm_ architecture, without -dlto).
  [[nodiscard]] bool has_cubin() const noexcept { return !cubin_.empty(); }
  /// True if there is LTO-IR (compiled with -dlto).
  [[nodiscard]] bool has_lto_ir() const noexcept { return !lto_ir_.empty(); }

  /// The PTX text (nvrtcGetPTX), NUL-terminated for cuModuleLoadData. Throws cuwrap::error
  /// (NVRTC_ERROR_INVALID_INPUT) saying why when there is none (compiled with -dlto).
  [[nodiscard]] const std::string& ptx(
      std::source_location where = std::source_location::current()) const {
    if (ptx_.empty()) [[unlikely]] {
      missing_output(output::ptx, where);
    }
    return ptx_;
  }
  /// The cubin, an ELF image (nvrtcGetCUBIN). Throws cuwrap::error (NVRTC_ERROR_INVALID_INPUT)
  /// saying why when there is none: compiled for a virtual architecture, or with -dlto.
  [[nodiscard]] std::span<const std::byte> cubin(
      std::source_location where = std::source_location::current()) const {
    if (cubin_.empty()) [[unlikely]] {
      missing_output(output::cubin, where);
    }
    return cubin_;
  }
  /// The LTO-IR (nvrtcGetLTOIR), for rtc::linker. Throws cuwrap::error
  /// (NVRTC_ERROR_INVALID_INPUT) when there is none (compiled without -dlto).
  [[nodiscard]] std::span<const std::byte> lto_ir(
      std::source_location where = std::source_location::current()) const {
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
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& lowered_names()
      const noexcept {
    return lowered_names_;
  }

 private:
  friend class program;
  enum class output { ptx, cubin, lto_ir };
  compiled_program() = default;
  [[noreturn]] void missing_output(output kind, std::source_location where) const;

  std::string name_;
  std::string arch_;
  std::string log_;
  std::string ptx_;
  std::vector<std::byte> cubin_;
  std::vector<std::byte> lto_ir_;
  std::vector<std::pair<std::string, std::string>> lowered_names_;
};

/// A CUDA C++ source to compile with NVRTC (nvrtcCreateProgram; nvrtcDestroyProgram in the
/// destructor). Move-only; a moved-from program is empty. Compiling needs no driver or GPU.
///
///     cuwrap::rtc::program prog{source, "saxpy.cu"};
///     auto out = prog.compile({.arch = "sm_90", .standard = "c++17"});
///     auto mod = cuwrap::module::load(ctx, out.cubin());
class program {
 public:
  using native_handle_type = nvrtcProgram;

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
  program(program&& other) noexcept
      : handle_{std::exchange(other.handle_, nullptr)},
        name_{std::move(other.name_)},
        name_expressions_{std::move(other.name_expressions_)},
        compiled_{other.compiled_} {}
  program& operator=(program&& other) noexcept {
    if (this != &other) {
      program old{std::move(*this)};  // destroys the previous program
      handle_ = std::exchange(other.handle_, nullptr);
      name_ = std::move(other.name_);
      name_expressions_ = std::move(other.name_expressions_);
      compiled_ = other.compiled_;
    }
    return *this;
  }
  ~program() {
    if (handle_ != nullptr) {
      check_nothrow(nvrtcDestroyProgram(&handle_), "nvrtcDestroyProgram");
    }
  }

  /// NVRTC's handle; nullptr when empty.
  [[nodiscard]] native_handle_type get() const noexcept { return handle_; }
  /// Gives up ownership: the caller must destroy the returned handle.
  [[nodiscard]] native_handle_type release() noexcept { return std::exchange(handle_, nullptr); }
  /// True for a moved-from or released program.
  [[nodiscard]] bool empty() const noexcept { return handle_ == nullptr; }
  /// The program's name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

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
      : handle_{handle}, name_{std::move(name)} {}

  native_handle_type handle_;
  std::string name_;
  std::vector<std::string> name_expressions_;
  bool compiled_ = false;
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
