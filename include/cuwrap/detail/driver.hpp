// The driver entry-point table. Every cuwrap call into the CUDA driver goes through it:
// the table is filled once, lazily, from the driver library that CUWRAP_DRIVER selects,
// each entry requested with cuGetProcAddress_v2 at the ABI version that cuda.h binds its
// name to. Nothing in cuwrap links libcuda.
#pragma once

#include <cuda.h>
#include <cudaProfiler.h>  // cuProfilerStart, cuProfilerStop

#if CUDA_VERSION < 13000
#error "cuwrap needs CUDA 13.0 headers or newer (12.x bind cuCtxCreate and others to older ABIs)"
#endif

#include <atomic>
#include <source_location>
#include <span>
#include <string>
#include <string_view>

namespace cuwrap::detail {

/// One driver entry point: a function pointer that is called like the function it points to.
/// It is atomic (acquire/release, a plain load on x86-64) because the process's table is
/// filled in while other threads may already be calling through it.
template <class Fn>
class entry_point;

template <class R, class... Args>
class entry_point<R (*)(Args...)> {
 public:
  using pointer = R (*)(Args...);  ///< the cuda.h function pointer type

  /// An entry that points nowhere (load_driver() fills it in).
  constexpr entry_point() noexcept = default;
  /// An entry that points to `fn`.
  constexpr explicit entry_point(pointer fn) noexcept : fn_{fn} {}
  entry_point(const entry_point&) = delete;
  entry_point& operator=(const entry_point&) = delete;

  /// Calls the function.
  [[gnu::always_inline]] R operator()(Args... args) const {
    return fn_.load(std::memory_order_acquire)(args...);
  }
  /// The function pointed to.
  [[nodiscard]] pointer get() const noexcept { return fn_.load(std::memory_order_acquire); }
  /// Points the entry to `fn`.
  void set(pointer fn) noexcept { fn_.store(fn, std::memory_order_release); }

 private:
  static_assert(std::atomic<pointer>::is_always_lock_free);
  std::atomic<pointer> fn_{nullptr};
};

/// One entry point per driver function cuwrap uses, generated from driver_functions.inc (one
/// line per function). Members are named like the functions in cuda.h (so `drv.cuMemAlloc(...)`
/// calls the same ABI as `cuMemAlloc(...)`). src/driver.cpp checks at compile time that every
/// member's pointer type is the cudaTypedefs.h PFN type of the version it is requested at.
struct driver_table {
#define CUWRAP_DRIVER_FUNCTION(name, version) entry_point<decltype(&::name)> name;
#include "cuwrap/detail/driver_functions.inc"
#undef CUWRAP_DRIVER_FUNCTION
};

/// Loads the driver library named by `spec` ("" or unset: libcuda.so.1; "software": the
/// bundled software driver; anything else: a path), calls cuInit(0) and fills a table.
/// Throws cuwrap::error naming what went wrong: no library (the dlerror text), not a driver,
/// the toolkit stub, no device; its where() is `where`. Each call loads anew; use driver() for
/// the process's table.
[[nodiscard]] const driver_table& load_driver(const char* spec, std::source_location where = {});

/// Loads the driver that CUWRAP_DRIVER names, once per process (thread-safe; a failed load is
/// tried again on the next call), and points every entry of process_driver_table at it.
/// Returns the loaded table. A failure's where() is `where`: public functions that load the
/// driver themselves pass their caller's; a load started by a table entry has none.
[[nodiscard]] const driver_table& load_process_driver(std::source_location where = {});

/// The process's table. Until the driver is loaded, each entry points to a function that
/// calls load_process_driver() (which throws as load_driver() does) and then the loaded
/// entry; once loaded, each entry is the driver's function. So a call costs one load and an
/// indirect call, with no "is it loaded yet" check.
extern driver_table process_driver_table;

/// The process's driver table (process_driver_table).
[[nodiscard]] inline const driver_table& driver() noexcept { return process_driver_table; }

/// What was loaded: the library's path and the version cuDriverGetVersion reported.
struct loaded_driver_info {
  std::string path;  ///< the file dlopen resolved
  int version = 0;   ///< 1000 * major + 10 * minor
};

/// One row of the table, in member order: the name cuGetProcAddress is asked for, the name
/// cuda.h binds it to (the exported symbol, e.g. "cuCtxCreate_v4"), and the version.
struct driver_entry {
  const char* base_name;
  const char* exported_name;
  int version;
};

/// Every table row, in member order (for tests and diagnostics).
[[nodiscard]] std::span<const driver_entry> driver_entries() noexcept;

/// True when `table` holds the driver's function for the entry named `base_name` (the cuda.h
/// name), false when the entry stands in for a function the driver lacks (too old, or its
/// cuGetProcAddress found none), when `table` is not loaded yet, or when cuwrap has no entry of
/// that name.
[[nodiscard]] bool entry_loaded(const driver_table& table, std::string_view base_name) noexcept;

/// The oldest driver cuwrap loads: CUDA 12.0 (cuGetProcAddress_v2, libraries, the ABIs of
/// cuda.h 12).
inline constexpr int minimum_driver_version = 12000;
/// What load_driver() does with the version cuDriverGetVersion reported: throws cuwrap::error
/// (CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, errc::driver_unavailable) naming `path`, the
/// version and the minimum when it is below minimum_driver_version (0 or negative included).
void check_driver_version(int version, const std::string& path, std::source_location where = {});

/// Information about the driver behind `table` (returned by load_driver(), or driver(), whose
/// driver this loads if it is not yet loaded; a failed load throws at `where`).
[[nodiscard]] const loaded_driver_info& driver_info(const driver_table& table,
                                                    std::source_location where = {});

}  // namespace cuwrap::detail
