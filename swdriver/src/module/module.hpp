// Modules (SWCU_MODULE), their functions, libraries (SWCU_LIBRARY) and their kernels.
//
// A module is an image (image.hpp) loaded into a context: a Function per kernel and the
// module's globals, which are real zeroed host memory registered in State::address_map as
// Allocation objects of kind SWCU_MODULE (so copies to and from them validate, cuMemFree
// refuses them, and cuMemGetAddressRange and the pointer attributes know them). A library is an
// image without a context: its per-context modules are made on first use (lazy loading) and
// are not program handles (cuModuleUnload refuses them).
//
// CUfunction and CUkernel handles are Function and Kernel objects owned by their module or
// library, looked up in the driver's private maps here (they are not counted handle kinds). An
// unloaded module or library keeps them in memory while it waits in the graveyard, so their
// addresses are not reused soon. Everything here is used under the state lock.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/api.hpp"
#include "core/state.hpp"
#include "memory/memory.hpp"
#include "module/image.hpp"

namespace swcu {

struct Module;
struct Library;
struct Kernel;

/// Device limits the launch and attribute checks use.
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kDefaultSharedPerBlock = 48 * 1024;  ///< without opting in
inline constexpr int kMaxSharedPerBlockOptin = 232448;    ///< CU_DEVICE_ATTRIBUTE_..._OPTIN
inline constexpr int kPortableClusterSize = 8;
inline constexpr int kMaxClusterSize = 16;  ///< with NON_PORTABLE_CLUSTER_SIZE_ALLOWED

/// The settable attributes of a function or kernel (cuFuncSetAttribute, cuKernelSetAttribute,
/// the cache configurations); empty: not set.
struct FuncSettings {
  std::optional<int> max_dynamic_shared;
  std::optional<int> carveout;
  std::array<std::optional<int>, 3> cluster;
  std::optional<int> non_portable;
  std::optional<int> scheduling;
  std::optional<int> cache_config;
  std::optional<int> shared_config;
};

/// A CUfunction: one kernel of a module.
struct Function {
  Module* module = nullptr;
  const KernelDesc* desc = nullptr;  ///< in the module's image
  Kernel* kernel = nullptr;          ///< the library kernel it belongs to, if any
  FuncSettings settings;             ///< cuFuncSetAttribute (overrides the kernel's)

  [[nodiscard]] CUfunction handle() noexcept { return reinterpret_cast<CUfunction>(this); }
};

/// A module (SWCU_MODULE when the program loaded it).
struct Module final : Object {
  Module() noexcept : Object(SWCU_MODULE) {}
  ~Module() override;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// Unmaps its functions and globals and frees the globals' memory.
  void release() noexcept override;
  [[nodiscard]] CUmodule handle() noexcept { return reinterpret_cast<CUmodule>(this); }

  std::shared_ptr<const Image> image;
  Context* ctx = nullptr;
  Library* library = nullptr;  ///< the owning library, for its per-context modules
  std::vector<std::unique_ptr<Function>> functions;  ///< in image order
  std::vector<std::unique_ptr<Allocation>> globals;  ///< in image order
  unsigned char* memory = nullptr;                   ///< every global, zeroed
  /// The address of each global of the image's decoded PTX (Image::program), in its order;
  /// 0 for a global no image global defines.
  std::vector<std::uint64_t> program_globals;
  bool live = true;
};

/// A CUkernel: one kernel of a library, for every context.
struct Kernel {
  Library* library = nullptr;
  std::size_t index = 0;  ///< of the kernel (and of its function in a module)
  const KernelDesc* desc = nullptr;
  std::vector<FuncSettings> per_device;  ///< cuKernelSetAttribute, by device ordinal

  [[nodiscard]] CUkernel handle() noexcept { return reinterpret_cast<CUkernel>(this); }
};

/// A library (SWCU_LIBRARY).
struct Library final : Object {
  Library() noexcept : Object(SWCU_LIBRARY) {}
  void release() noexcept override;

  std::shared_ptr<const Image> image;
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::map<Context*, Module*> modules;               ///< the live module of each context
  std::vector<std::unique_ptr<Module>> all_modules;  ///< owned, live or released
};

/// The driver's private maps of the handles that are not counted kinds.
struct HandleMaps {
  std::unordered_map<const void*, Function*> functions;
  std::unordered_map<const void*, Kernel*> kernels;
  std::unordered_map<const void*, Module*> library_modules;
};
[[nodiscard]] HandleMaps& handle_maps() noexcept;

/// A program module or a library's module; nullptr for anything else.
[[nodiscard]] Module* find_module(State& s, const void* handle) noexcept;
/// A live module function (not a CUkernel); nullptr otherwise.
[[nodiscard]] Function* find_function(State& s, const void* handle) noexcept;
/// A live library kernel; nullptr otherwise.
[[nodiscard]] Kernel* find_kernel(State& s, const void* handle) noexcept;

/// The function a CUfunction handle names, which may also be a CUkernel: then its function
/// in `ctx`, or in the current context when `ctx` is nullptr (loading the library there).
/// Errors: CUDA_ERROR_INVALID_HANDLE, the current context's errors.
[[nodiscard]] CUresult resolve_function(State& s, CUfunction handle, Context* ctx, Function*& out);

/// The kernel description behind a CUfunction or CUkernel handle, without a context; nullptr
/// for anything else.
[[nodiscard]] const KernelDesc* describe(State& s, const void* handle) noexcept;

/// The library's module in `ctx`, made on first use.
[[nodiscard]] Module& library_module(State& s, Library& lib, Context& ctx);

/// The settings that apply to `f`: its own, else its kernel's for its device.
[[nodiscard]] FuncSettings effective_settings(const Function& f);

/// What cuFuncGetAttribute answers for settings `set` of kernel `k` in `image`; false for an
/// unknown attribute.
[[nodiscard]] bool attribute_value(const KernelDesc& k, const Image& image, const FuncSettings& set,
                                   int attribute, int& out) noexcept;

/// cuFuncSetAttribute/cuKernelSetAttribute: checks and stores `value` into `set`.
[[nodiscard]] CUresult set_attribute(const KernelDesc& k, FuncSettings& set, int attribute,
                                     int value) noexcept;

/// Threads per block the kernel allows.
[[nodiscard]] int max_threads(const KernelDesc& k) noexcept;
/// Dynamic shared memory per block the kernel allows with these settings.
[[nodiscard]] int max_dynamic_shared(const KernelDesc& k, const FuncSettings& set) noexcept;

/// Destroys the modules of a destroyed context (counted as reclaimed) and drops the libraries'
/// modules there.
void reclaim_modules(State& s, Context& ctx) noexcept;

/// The JIT options of cuModuleLoadDataEx and cuLibraryLoadData, and where the logs go.
struct JitRequest {
  LoadOptions load;
  char* info = nullptr;
  std::size_t info_size = 0;
  int info_size_index = -1;
  char* error = nullptr;
  std::size_t error_size = 0;
  int error_size_index = -1;
  int wall_time_index = -1;
};

/// Reads JIT options: CUDA_ERROR_INVALID_VALUE for unknown options or missing arrays.
[[nodiscard]] CUresult read_jit_options(unsigned int count, const CUjit_option* options,
                                        void* const* values, JitRequest& out) noexcept;

/// Writes the logs (and the sizes and wall time they ask for) back to the option values.
void write_jit_logs(const JitRequest& request, void** values, const LoadLog& log) noexcept;

/// Loads an image (size SIZE_MAX: in memory, unknown) with the request's options. LTO-IR goes
/// through nvJitLink with `lock` (the state lock) released, since nvJitLink calls the driver:
/// the caller must look its objects up again afterwards. Without `lock`, LTO-IR is refused.
[[nodiscard]] CUresult parse_image(const void* data, std::size_t size, const JitRequest& request,
                                   std::shared_ptr<const Image>& out, LoadLog& log,
                                   Lock* lock = nullptr);

/// Reads a whole file; false when it cannot.
[[nodiscard]] bool read_file(const char* path, std::vector<unsigned char>& out);

/// Makes a module of `image` in `ctx`, with its functions and zeroed globals, not yet mapped.
[[nodiscard]] std::unique_ptr<Module> instantiate(State& s, Context& ctx,
                                                  std::shared_ptr<const Image> image,
                                                  Library* library);

/// Makes a module's handles known: its functions, its globals' addresses (and, for a library's
/// module, its own handle). On failure (out of memory) the caller releases the module.
void map_module(State& s, Module& m);

}  // namespace swcu
