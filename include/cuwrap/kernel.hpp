// Kernels: a function in a loaded module or library, with its parameter layout and limits
// read once when it is looked up.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuwrap/context.hpp"
#include "cuwrap/error.hpp"

namespace cuwrap {

/// Where one kernel parameter lives in the parameter buffer.
struct kernel_param {
  std::size_t offset = 0;  ///< byte offset
  std::size_t size = 0;    ///< byte size
  friend constexpr bool operator==(kernel_param, kernel_param) noexcept = default;
};

/// Static facts about a compiled kernel (cuFuncGetAttribute).
struct kernel_attributes {
  int max_threads_per_block = 0;             ///< the most threads a block of this kernel may have
  int registers_per_thread = 0;              ///< registers each thread uses
  std::size_t static_shared_bytes = 0;       ///< statically allocated shared memory per block
  std::size_t const_bytes = 0;               ///< constant memory used
  std::size_t local_bytes = 0;               ///< local memory per thread
  std::size_t max_dynamic_shared_bytes = 0;  ///< the dynamic shared memory limit now set
  int ptx_version = 0;                       ///< the PTX virtual architecture, e.g. 90
  int binary_version = 0;                    ///< the binary architecture, e.g. 90
};

/// A kernel: a CUfunction (or a library's CUkernel), its name, its parameter layout and the
/// limits launches are checked against. Copyable; keeps its module or library alive. A
/// moved-from kernel is empty (get() is null): launching it, or any query that calls the
/// driver, throws cuwrap::usage_error.
class kernel {
 public:
  using native_handle_type = CUfunction;

  kernel(const kernel&) = default;
  kernel& operator=(const kernel&) = default;
  /// Takes `other`'s kernel; `other` is left empty.
  kernel(kernel&& other) noexcept
      : handle_{std::exchange(other.handle_, nullptr)},
        from_library_{other.from_library_},
        context_{std::exchange(other.context_, nullptr)},
        layout_known_{std::exchange(other.layout_known_, false)},
        max_threads_{std::exchange(other.max_threads_, 0)},
        max_dynamic_{std::exchange(other.max_dynamic_, 0)},
        name_{std::move(other.name_)},
        params_{std::move(other.params_)},
        owner_{std::move(other.owner_)} {}
  /// Takes `other`'s kernel; `other` is left empty.
  kernel& operator=(kernel&& other) noexcept {
    if (this != &other) {
      handle_ = std::exchange(other.handle_, nullptr);
      from_library_ = other.from_library_;
      context_ = std::exchange(other.context_, nullptr);
      layout_known_ = std::exchange(other.layout_known_, false);
      max_threads_ = std::exchange(other.max_threads_, 0);
      max_dynamic_ = std::exchange(other.max_dynamic_, 0);
      name_ = std::move(other.name_);
      params_ = std::move(other.params_);
      owner_ = std::move(other.owner_);
    }
    return *this;
  }
  ~kernel() = default;

  /// The handle to launch (a CUkernel from a library is passed as a CUfunction, as the driver
  /// allows); null once moved from.
  [[nodiscard]] native_handle_type get() const noexcept { return handle_; }
  /// The kernel's (possibly mangled) name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The context of the module the kernel was looked up in; null for a library's kernel
  /// (usable in every context) and for a kernel wrapped without one.
  [[nodiscard]] CUcontext context() const noexcept { return context_; }
  /// True when the parameter layout is known (drivers for CUDA 12.4 and newer report it).
  [[nodiscard]] bool layout_known() const noexcept { return layout_known_; }
  /// The parameters' offsets and sizes, read when the kernel was looked up.
  [[nodiscard]] std::span<const kernel_param> params() const noexcept { return params_; }
  /// The most threads per block, read when the kernel was looked up.
  [[nodiscard]] int max_threads_per_block() const noexcept { return max_threads_; }
  /// The dynamic shared memory limit, read at lookup and kept up to date by
  /// set_max_dynamic_shared_memory().
  [[nodiscard]] std::size_t max_dynamic_shared_bytes() const noexcept { return max_dynamic_; }

  /// All static attributes (several cuFuncGetAttribute / cuKernelGetAttribute calls).
  [[nodiscard]] kernel_attributes attributes(
      std::source_location where = std::source_location::current()) const;
  /// One attribute, raw.
  [[nodiscard]] int attribute(CUfunction_attribute attribute,
                              std::source_location where = std::source_location::current()) const;
  /// Allows up to `bytes` of dynamic shared memory per block (cuFuncSetAttribute with
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). Throws naming the kernel and the bytes.
  void set_max_dynamic_shared_memory(std::size_t bytes,
                                     std::source_location where = std::source_location::current());
  /// The kernel's preferred cache configuration (cuFuncSetCacheConfig).
  void set_cache_config(cuwrap::cache_config config,
                        std::source_location where = std::source_location::current()) const;

  /// Wraps a function looked up by other means, reading its layout and limits; `owner` is kept
  /// alive, `ctx` is the context the function belongs to (named in cross-context errors).
  [[nodiscard]] static kernel from_function(
      CUfunction function, std::string name, std::shared_ptr<const void> owner = nullptr,
      CUcontext ctx = nullptr, std::source_location where = std::source_location::current());
  /// Wraps a library kernel (CUkernel), reading its layout and limits.
  [[nodiscard]] static kernel from_library_kernel(
      CUkernel function, std::string name, std::shared_ptr<const void> owner = nullptr,
      std::source_location where = std::source_location::current());

 protected:
  kernel() = default;

 private:
  // cuFuncGetParamInfo per parameter, then the two cached limits
  void read_layout(std::source_location where);

  CUfunction handle_ = nullptr;
  bool from_library_ = false;
  CUcontext context_ = nullptr;
  bool layout_known_ = false;
  int max_threads_ = 0;
  std::size_t max_dynamic_ = 0;
  std::string name_;
  std::vector<kernel_param> params_;
  std::shared_ptr<const void> owner_;  // the module or library
};

namespace detail {
/// Throws if the layout does not have one parameter of sizeof(P) per P, naming the kernel,
/// the parameter index and both sizes.
void check_signature(const kernel& k, std::span<const std::size_t> sizes,
                     std::source_location where = {});
}  // namespace detail

template <class Signature>
class typed_kernel;

/// A kernel whose parameter types are known at compile time: launches check their arguments
/// at compile time. Made by module::kernel<void(Params...)>(name), which checks the
/// signature against the kernel's parameter layout.
template <class... Params>
class typed_kernel<void(Params...)> : public kernel {
  static_assert((std::is_trivially_copyable_v<Params> && ...),
                "kernel parameters are trivially copyable");

 public:
  /// Checks `k`'s layout against Params (count and sizes); throws cuwrap::error naming the
  /// kernel, the parameter index and both sizes on a mismatch.
  explicit typed_kernel(kernel k, std::source_location where = std::source_location::current())
      : kernel{std::move(k)} {
    static constexpr std::size_t sizes[] = {sizeof(Params)..., 0};
    detail::check_signature(*this, std::span{sizes, sizeof...(Params)}, where);
  }
};

}  // namespace cuwrap
