// Error categories with compiled-in name tables, and the out-of-line throw paths.
#include "cuwrap/error.hpp"

#include <atomic>
#include <cstdio>
#include <span>
#include <string>

namespace cuwrap {
namespace {

struct error_table_row {
  int value;
  const char* name;
  const char* text;
};

#include "generated/error_tables.inc"

const error_table_row* find_row(std::span<const error_table_row> table, int value) noexcept {
  for (const auto& row : table) {
    if (row.value == value) {
      return &row;
    }
  }
  return nullptr;
}

bool is_sticky_value(int value) noexcept {
  // Same numbers in CUresult and cudaError_t: ECC uncorrectable, assert, launch timeout,
  // hardware stack error, illegal instruction, misaligned/invalid address, invalid PC,
  // illegal address, launch failure.
  switch (value) {
    case 214:
    case 700:
    case 702:
    case 710:
    case 714:
    case 715:
    case 716:
    case 717:
    case 718:
    case 719: return true;
    default: return false;
  }
}

// Maps the numbers shared by CUresult and cudaError_t (they agree on these) to errc.
std::error_condition cuda_condition(int value, const std::error_category& category) noexcept {
  if (is_sticky_value(value)) {
    return errc::launch_failure;
  }
  switch (value) {
    case 1: return errc::invalid_value;
    case 2: return errc::out_of_memory;
    case 3: return errc::not_initialized;
    case 34:
    case 35: return errc::driver_unavailable;
    case 100: return errc::no_device;
    case 101: return errc::invalid_device;
    case 200:
    case 209:
    case 218:
    case 222:
    case 300: return errc::invalid_image;
    case 217: return errc::peer_access_unsupported;
    case 400: return errc::invalid_handle;
    case 500: return errc::not_found;
    case 600: return errc::not_ready;
    case 800: return errc::not_permitted;
    case 801: return errc::not_supported;
    case 900:
    case 901:
    case 902:
    case 903:
    case 904:
    case 905:
    case 906:
    case 907:
    case 908: return errc::stream_capture;
    default: return {value, category};
  }
}

class table_category : public std::error_category {
 public:
  table_category(const char* name, std::span<const error_table_row> table, const char* unknown)
      : name_{name}, table_{table}, unknown_{unknown} {}
  const char* name() const noexcept override { return name_; }
  std::string message(int value) const override {
    if (const auto* row = find_row(table_, value)) {
      return std::string{row->text} + " (" + row->name + ")";
    }
    return std::string{unknown_} + " " + std::to_string(value);
  }
  const error_table_row* row(int value) const noexcept { return find_row(table_, value); }

 private:
  const char* name_;
  std::span<const error_table_row> table_;
  const char* unknown_;
};

class driver_category_impl final : public table_category {
 public:
  driver_category_impl() : table_category{"cuda_driver", driver_errors, "CUresult"} {}
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (value) {                         // driver-only meanings of these numbers
      case 4: return errc::not_initialized;  // deinitialized
      case 201:
      case 202:
      case 709: return errc::invalid_context;
      case 36:  // CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER: a driver older than cuwrap's minimum
      case 302:
      case 303:
      case 803:
      case 804: return errc::driver_unavailable;
      default: return cuda_condition(value, *this);
    }
  }
};

class runtime_category_impl final : public table_category {
 public:
  runtime_category_impl() : table_category{"cuda_runtime", runtime_errors, "cudaError_t"} {}
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (value) {
      case 201: return errc::invalid_context;  // cudaErrorDeviceUninitialized
      case 98: return errc::invalid_value;     // cudaErrorInvalidDeviceFunction
      default: return cuda_condition(value, *this);
    }
  }
};

class nvrtc_category_impl final : public table_category {
 public:
  nvrtc_category_impl() : table_category{"nvrtc", nvrtc_errors, "nvrtcResult"} {}
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (value) {
      case 1: return errc::out_of_memory;
      case 3:
      case 4:
      case 5:
      case 10: return errc::invalid_value;
      case 6: return errc::compilation_failed;
      default: return {value, *this};
    }
  }
};

class nvjitlink_category_impl final : public table_category {
 public:
  nvjitlink_category_impl() : table_category{"nvjitlink", nvjitlink_errors, "nvJitLinkResult"} {}
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (value) {
      case 1:
      case 2:
      case 3:
      case 7:
      case 9:
      case 10:
      case 11:
      case 12:
      case 15:
      case 16:
      case 18: return errc::invalid_value;
      case 4:
      case 5:
      case 8:
      case 13:
      case 14: return errc::compilation_failed;
      default: return {value, *this};
    }
  }
};

class errc_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "cuwrap"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::out_of_memory: return "out of memory";
      case errc::invalid_value: return "invalid value";
      case errc::invalid_handle: return "invalid handle";
      case errc::invalid_context: return "invalid context";
      case errc::invalid_device: return "invalid device";
      case errc::not_ready: return "not ready";
      case errc::not_initialized: return "driver not initialized";
      case errc::no_device: return "no CUDA device";
      case errc::driver_unavailable: return "no usable CUDA driver";
      case errc::not_supported: return "not supported";
      case errc::not_permitted: return "not permitted";
      case errc::not_found: return "not found";
      case errc::invalid_image: return "invalid module image";
      case errc::launch_failure: return "kernel fault (context unusable)";
      case errc::peer_access_unsupported: return "peer access unsupported";
      case errc::compilation_failed: return "compilation failed";
      case errc::stream_capture: return "invalid during stream capture";
    }
    return "cuwrap condition " + std::to_string(value);
  }
};

std::string_view file_name_only(const char* path) {
  std::string_view p{path};
  const auto slash = p.find_last_of('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

std::string describe(std::error_code code, const char* api, std::string_view details,
                     const std::source_location& where) {
  std::string text{api};
  if (!details.empty()) {
    text.append("(").append(details).append(")");
  }
  text.append(": ").append(code.message());
  if (where.line() != 0) {
    text.append(" at ").append(file_name_only(where.file_name()));
    text.append(":").append(std::to_string(where.line()));
  }
  return text;
}

void default_nothrow_handler(std::error_code code, const char* api) noexcept {
  std::fprintf(stderr, "cuwrap: %s failed in a destructor: %s\n", api, code.message().c_str());
}

std::atomic<nothrow_error_handler> nothrow_handler{&default_nothrow_handler};

}  // namespace

const std::error_category& driver_category() noexcept {
  static const driver_category_impl category;
  return category;
}
const std::error_category& runtime_category() noexcept {
  static const runtime_category_impl category;
  return category;
}
const std::error_category& nvrtc_category() noexcept {
  static const nvrtc_category_impl category;
  return category;
}
const std::error_category& nvjitlink_category() noexcept {
  static const nvjitlink_category_impl category;
  return category;
}
const std::error_category& errc_category() noexcept {
  static const errc_category_impl category;
  return category;
}

std::string_view error_name(std::error_code code) noexcept {
  const auto& category = code.category();
  for (const auto* known :
       {&driver_category(), &runtime_category(), &nvrtc_category(), &nvjitlink_category()}) {
    if (category == *known) {
      const auto* row = static_cast<const table_category*>(known)->row(code.value());
      return row != nullptr ? row->name : "";
    }
  }
  return "";
}

bool is_sticky(std::error_code code) noexcept {
  const auto& category = code.category();
  return (category == driver_category() || category == runtime_category()) &&
         is_sticky_value(code.value());
}

error::error(std::error_code code, const char* api, std::string_view details,
             std::source_location where)
    : std::system_error{code, api},
      text_{describe(code, api, details, where)},
      api_{api},
      where_{where} {}

namespace {
std::string with_location(std::string_view message, const std::source_location& where) {
  std::string text{message};
  if (where.line() != 0) {
    text.append(" at ").append(file_name_only(where.file_name()));
    text.append(":").append(std::to_string(where.line()));
  }
  return text;
}

std::string operation_name(const char* type, const char* operation) {
  std::string text{"cuwrap::"};
  if (type != nullptr) {
    text.append(type).append("::");
  }
  return text.append(operation);
}
}  // namespace

usage_error::usage_error(std::string_view message, std::source_location where)
    : std::logic_error{with_location(message, where)}, where_{where} {}

nothrow_error_handler set_nothrow_error_handler(nothrow_error_handler handler) noexcept {
  return nothrow_handler.exchange(handler != nullptr ? handler : &default_nothrow_handler);
}

namespace detail {

namespace {
std::atomic<std::string (*)()> error_log_source{nullptr};
}  // namespace

void set_error_log_source(std::string (*source)()) noexcept {
  error_log_source.store(source, std::memory_order_release);
}

void throw_error(std::error_code code, const char* api, std::string_view details,
                 std::source_location where) {
  if (const auto source = error_log_source.load(std::memory_order_acquire)) [[unlikely]] {
    if (const std::string logs = source(); !logs.empty()) {
      const std::string with_logs = std::string{details} + (details.empty() ? "" : "; ") + logs;
      throw_error_without_logs(code, api, with_logs, where);
    }
  }
  throw_error_without_logs(code, api, details, where);
}

void throw_error_without_logs(std::error_code code, const char* api, std::string_view details,
                              std::source_location where) {
  if (code == errc::out_of_memory) {
    throw out_of_memory{code, api, details, where};
  }
  throw error{code, api, details, where};
}

void throw_moved_from(const char* type, const char* operation, std::source_location where) {
  throw usage_error{
      operation_name(type, operation) + ": this " + type + " was moved from (or released)", where};
}

void throw_moved_from_argument(const char* type, const char* operation, const char* argument,
                               std::source_location where) {
  throw usage_error{
      operation_name(type, operation) + ": the " + argument + " was moved from (or released)",
      where};
}

void throw_out_of_span(const char* operation, std::size_t offset, std::size_t count,
                       std::size_t size, std::source_location where) {
  std::string text = operation_name("device_span", operation) + ": ";
  if (count == std::dynamic_extent) {
    text += "offset " + std::to_string(offset) + " is past the end";
  } else {
    text += "elements [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
            std::to_string(count) + ") are outside";
  }
  throw usage_error{text + " of the span's " + std::to_string(size) + " elements", where};
}

void report_nothrow(std::error_code code, const char* api) noexcept {
  nothrow_handler.load()(code, api);
}

}  // namespace detail
}  // namespace cuwrap
