// Loading the driver library and filling the entry-point table.
#include "cuwrap/detail/driver.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "cudaProfilerTypedefs.h"
#include "cudaTypedefs.h"
#include "cuwrap/error.hpp"

// Defined by cuwrap's CMake package in each executable that links cuwrap::cuwrap (see
// software_driver_candidates); weak, so a program built otherwise links and has none.
extern "C" [[gnu::weak]] const char cuwrap_software_driver_location[];

namespace cuwrap::detail {
namespace {

// Every table member with the CUDA version its cuda.h name binds to comes from
// cuwrap/detail/driver_functions.inc, expanded here once per use with CUWRAP_DRIVER_FUNCTION
// defined. The static_asserts below make a wrong version a compile error: the member's type
// must equal the cudaTypedefs.h PFN type of that version (so cuCtxCreate at 12000 or 11040,
// which would return cuCtxCreate_v3, cannot compile). The software driver's tests check the
// other half at run time: the pointer returned for (name, version) is the function that
// cuda.h's macro names.

#define CUWRAP_DRIVER_FUNCTION(name, version)                                                   \
  static_assert(std::is_same_v<decltype(driver_table::name)::pointer, PFN_##name##_v##version>, \
                "driver_table::" #name " is not the PFN type of version " #version);
#include "cuwrap/detail/driver_functions.inc"
#undef CUWRAP_DRIVER_FUNCTION

#define CUWRAP_DRIVER_FUNCTION(name, version) +1
constexpr std::size_t entry_count = 0
#include "cuwrap/detail/driver_functions.inc"
    ;
#undef CUWRAP_DRIVER_FUNCTION
static_assert(sizeof(driver_table) == entry_count * sizeof(void*),
              "every driver_table member needs a line in driver_functions.inc");

#define CUWRAP_STRINGIFY(text) #text
#define CUWRAP_EXPANDED_NAME(name) CUWRAP_STRINGIFY(name)
#define CUWRAP_DRIVER_FUNCTION(name, version) \
  driver_entry{#name, CUWRAP_EXPANDED_NAME(name), version},
constexpr driver_entry entry_infos[] = {
#include "cuwrap/detail/driver_functions.inc"
};
#undef CUWRAP_DRIVER_FUNCTION

#define CUWRAP_DRIVER_FUNCTION(name, version) index_##name,
enum entry_index : std::size_t {
#include "cuwrap/detail/driver_functions.inc"
};
#undef CUWRAP_DRIVER_FUNCTION

struct loaded_driver {
  driver_table table{};
  loaded_driver_info info;
  loaded_driver* previous = nullptr;  ///< the driver loaded before this one
};
// Every loaded driver, newest first: they live until exit (entry points may run in atexit
// handlers) and stay reachable from here, so leak checkers do not report them.
std::atomic<loaded_driver*> loaded_drivers{nullptr};
static_assert(std::is_standard_layout_v<loaded_driver>);

int loaded_version_for_messages = 0;  // the driver version missing entries report against

// Why cuGetProcAddress gave no function for an entry the driver's version should have: its code
// (CUDA_SUCCESS when it succeeded without a function) and status, by entry index, for the
// stand-in's message. Written while the table is filled, before the table is published.
struct lookup_failure {
  CUresult code = CUDA_SUCCESS;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
};
lookup_failure lookup_failures[entry_count];
std::string loaded_path_for_messages;

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) + " (" +
         std::to_string(version) + ")";
}

const char* status_text(CUdriverProcAddressQueryResult status) {
  switch (status) {
    case CU_GET_PROC_ADDRESS_SUCCESS: return "it returned no function";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "symbol not found";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "version not sufficient";
  }
  return "unknown status";
}

// Stands in for an entry the driver does not provide; calling it throws a clear error
// instead of jumping through a null pointer. "Too old" only when the versions say so; a failed
// lookup keeps the code cuGetProcAddress returned (CUDA_ERROR_NOT_FOUND when it returned
// success without a function).
template <std::size_t Index, class... Args>
CUresult missing_entry(Args...) {
  const auto& e = entry_infos[Index];
  if (e.version > loaded_version_for_messages) {
    throw error{make_error_code(CUDA_ERROR_NOT_SUPPORTED),
                e.base_name,
                "needs a driver for CUDA " + cuda_version_text(e.version) +
                    "; the loaded driver is CUDA " + cuda_version_text(loaded_version_for_messages),
                {}};
  }
  const auto& failure = lookup_failures[Index];
  throw error{make_error_code(failure.code != CUDA_SUCCESS ? failure.code : CUDA_ERROR_NOT_FOUND),
              e.base_name,
              "cuGetProcAddress(\"" + std::string{e.base_name} + "\", CUDA " +
                  cuda_version_text(e.version) + ") failed in '" + loaded_path_for_messages +
                  "' (CUDA " + cuda_version_text(loaded_version_for_messages) +
                  "): " + status_text(failure.status),
              {}};
}

template <std::size_t Index, class... Args>
auto missing_entry_for(CUresult (*)(Args...)) -> CUresult (*)(Args...) {
  return &missing_entry<Index, Args...>;
}

// `where`: the call site of the public function that loads the driver (none for a load that
// an entry point of the table starts: it does not know its caller).
[[noreturn]] void fail(CUresult code, const char* api, const std::string& details,
                       std::source_location where) {
  throw error{make_error_code(code), api, details, where};
}

std::string library_path(void* library, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

// Where CUWRAP_DRIVER=software looks, in order, each with what it is (for the message when
// none holds the driver). Nothing is baked in at configure time, so an installed package can move:
// 1. the location the program was linked with: cuwrap's CMake package (installed or build tree)
//    compiles cuwrap_software_driver_location into every executable linking cuwrap::cuwrap;
// 2. relative to the binary holding cuwrap: a shared libcuwrap in <libdir> has the driver in
//    <libdir>/cuwrap/swdriver; a program with cuwrap linked in statically, in <prefix>/bin, has it
//    in <prefix>/<libdir>/cuwrap/swdriver.
std::vector<std::pair<std::string, std::string>> software_driver_candidates() {
  std::vector<std::pair<std::string, std::string>> places;
  const char* linked = cuwrap_software_driver_location;  // null: no location was linked in
  if (linked != nullptr && linked[0] != '\0') {
    places.emplace_back(linked, "the location this program was built with");
  }
  const std::filesystem::path driver =
      std::filesystem::path{"cuwrap"} / "swdriver" / "libcuda.so.1";
  std::error_code ignored;
#ifdef cuwrap_EXPORTS  // a shared libcuwrap: next to it
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&software_driver_candidates), &info) != 0 &&
      info.dli_fname != nullptr && info.dli_fname[0] != '\0') {
    const auto self = std::filesystem::weakly_canonical(info.dli_fname, ignored);
    places.emplace_back((self.parent_path() / driver).string(), "next to " + self.string());
  }
#else  // linked into the program: relative to the program's prefix
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ignored);
  if (!self.empty()) {
    places.emplace_back(
        (self.parent_path().parent_path() / CUWRAP_INSTALL_LIBDIR / driver).string(),
        "in the prefix of " + self.string());
  }
#endif
  return places;
}

std::string software_driver_path(std::source_location where) {
  const auto places = software_driver_candidates();
  std::string looked;
  for (const auto& [path, what] : places) {
    std::error_code ignored;
    if (std::filesystem::exists(path, ignored)) {
      return path;
    }
    looked += (looked.empty() ? "" : ", ") + ("'" + path + "' (" + what + ")");
  }
  fail(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "dlopen",
       "CUWRAP_DRIVER=software, but the software driver is not in any place cuwrap looked: " +
           (looked.empty() ? std::string{"none known"} : looked) +
           ". Link the program with cuwrap::cuwrap from cuwrap's CMake package (built with "
           "CUWRAP_BUILD_SWDRIVER=ON), or set CUWRAP_DRIVER to the driver's path "
           "(<prefix>/<libdir>/cuwrap/swdriver/libcuda.so.1)",
       where);
}

std::string library_to_open(const char* spec, std::source_location where) {
  if (spec == nullptr || spec[0] == '\0') {
    return "libcuda.so.1";
  }
  if (std::strcmp(spec, "software") == 0) {
    return software_driver_path(where);
  }
  return spec;
}

void* open_library(const std::string& name, std::source_location where) {
  // RTLD_NODELETE: entry points stay valid even if someone dlcloses the same file.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* why = dlerror();
    fail(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "dlopen",
         "no CUDA driver: cannot load '" + name + "': " + (why != nullptr ? why : "unknown") +
             ". Install the NVIDIA driver, or set CUWRAP_DRIVER to a driver library's path, or "
             "to 'software' for cuwrap's software driver",
         where);
  }
  return library;
}

template <class Fn>
Fn resolve(PFN_cuGetProcAddress_v12000 get_proc, const char* name, int version,
           const std::string& path, std::source_location where) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  const CUresult r = get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
  if (r == CUDA_ERROR_STUB_LIBRARY) {
    fail(r, "cuGetProcAddress",
         "'" + path +
             "' is the CUDA toolkit's stub library, not a driver: install the NVIDIA "
             "driver, or set CUWRAP_DRIVER=software",
         where);
  }
  if (r != CUDA_SUCCESS || fn == nullptr) {
    fail(r != CUDA_SUCCESS ? r : CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "cuGetProcAddress",
         std::string{name} + " at version " + std::to_string(version) + " from '" + path + "'",
         where);
  }
  return reinterpret_cast<Fn>(fn);
}

void fill_table(driver_table& table, PFN_cuGetProcAddress_v12000 get_proc, int driver_version) {
#define CUWRAP_DRIVER_FUNCTION(name, version)                                                     \
  if ((version) > driver_version) {                                                               \
    table.name.set(missing_entry_for<index_##name>(table.name.get()));                            \
  } else {                                                                                        \
    void* fn = nullptr;                                                                           \
    CUdriverProcAddressQueryResult status{};                                                      \
    const CUresult r = get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status); \
    if (r == CUDA_SUCCESS && fn != nullptr) {                                                     \
      table.name.set(reinterpret_cast<decltype(table.name)::pointer>(fn));                        \
    } else {                                                                                      \
      lookup_failures[index_##name] = {r, status};                                                \
      table.name.set(missing_entry_for<index_##name>(table.name.get()));                          \
    }                                                                                             \
  }
#include "cuwrap/detail/driver_functions.inc"
#undef CUWRAP_DRIVER_FUNCTION
}

// Points every entry of the process's table at the loaded driver's function.
const driver_table& publish(const driver_table& loaded) {
#define CUWRAP_DRIVER_FUNCTION(name, version) process_driver_table.name.set(loaded.name.get());
#include "cuwrap/detail/driver_functions.inc"
#undef CUWRAP_DRIVER_FUNCTION
  return loaded;
}

// What an entry of the process's table points to until the driver is loaded: loads it (once)
// and calls the loaded function.
template <auto Entry,
          class Pointer =
              typename std::remove_cvref_t<decltype(std::declval<driver_table>().*Entry)>::pointer>
struct load_then_call;

template <auto Entry, class R, class... Args>
struct load_then_call<Entry, R (*)(Args...)> {
  static R call(Args... args) { return (load_process_driver().*Entry)(args...); }
};

}  // namespace

const driver_table& load_driver(const char* spec, std::source_location where) {
  const std::string name = library_to_open(spec, where);
  void* library = open_library(name, where);
  const std::string path = library_path(library, name);

  auto* get_proc =
      reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    fail(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "dlsym",
         "'" + path +
             "' is not a CUDA driver: it has no cuGetProcAddress_v2 (CUDA 12.0 or "
             "newer drivers export it)",
         where);
  }

  // Version first: it tells which entry points this driver can provide.
  auto* get_version =
      resolve<PFN_cuDriverGetVersion_v2020>(get_proc, "cuDriverGetVersion", 2020, path, where);
  int version = 0;
  if (const CUresult r = get_version(&version); r != CUDA_SUCCESS) {
    fail(r, "cuDriverGetVersion", "'" + path + "'", where);
  }
  check_driver_version(version, path, where);
  auto* init = resolve<PFN_cuInit_v2000>(get_proc, "cuInit", 2000, path, where);
  if (const CUresult r = init(0); r != CUDA_SUCCESS) {
    fail(r, "cuInit",
         r == CUDA_ERROR_NO_DEVICE ? "the driver at '" + path + "' found no CUDA device"
                                   : "driver '" + path + "'",
         where);
  }

  auto* loaded = new loaded_driver{};  // lives until exit: entry points may run in atexit
  loaded->previous = loaded_drivers.load(std::memory_order_relaxed);
  while (!loaded_drivers.compare_exchange_weak(loaded->previous, loaded, std::memory_order_release,
                                               std::memory_order_relaxed)) {
  }
  loaded->info = {path, version};
  loaded_version_for_messages = version;
  loaded_path_for_messages = path;
  fill_table(loaded->table, get_proc, version);
  return loaded->table;
}

std::span<const driver_entry> driver_entries() noexcept { return entry_infos; }

bool entry_loaded(const driver_table& table, std::string_view base_name) noexcept {
#define CUWRAP_DRIVER_FUNCTION(name, version)                                              \
  if (base_name == #name) {                                                                \
    const auto fn = table.name.get();                                                      \
    return fn != nullptr && fn != missing_entry_for<index_##name>(fn) &&                   \
           fn != decltype(table.name)::pointer{load_then_call<&driver_table::name>::call}; \
  }
#include "cuwrap/detail/driver_functions.inc"
#undef CUWRAP_DRIVER_FUNCTION
  return false;
}

void check_driver_version(int version, const std::string& path, std::source_location where) {
  if (version < minimum_driver_version) {
    fail(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "cuDriverGetVersion",
         "the driver at '" + path + "' reports CUDA " +
             (version <= 0 ? "version " + std::to_string(version) + " (no valid version)"
                           : cuda_version_text(version)) +
             "; cuwrap needs a driver for CUDA " + cuda_version_text(minimum_driver_version) +
             " or newer: update the NVIDIA driver",
         where);
  }
}

const driver_table& load_process_driver(std::source_location where) {
  // A failed load leaves `loaded` uninitialized: the next call tries again, with its own `where`.
  static const driver_table& loaded = publish(load_driver(std::getenv("CUWRAP_DRIVER"), where));
  return loaded;
}

#define CUWRAP_DRIVER_FUNCTION(name, version) \
  .name = decltype(driver_table::name){load_then_call<&driver_table::name>::call},
constinit driver_table process_driver_table{
#include "cuwrap/detail/driver_functions.inc"
};
#undef CUWRAP_DRIVER_FUNCTION

const loaded_driver_info& driver_info(const driver_table& table, std::source_location where) {
  const driver_table& loaded = &table == &process_driver_table ? load_process_driver(where) : table;
  // loaded is the first member of a loaded_driver (standard layout).
  return reinterpret_cast<const loaded_driver*>(&loaded)->info;
}

}  // namespace cuwrap::detail
