// Modules and functions: cuModuleLoad*, cuModuleUnload, cuModuleGet*, cuFunc* (module.hpp).
#include "module/module.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <string_view>
#include <unordered_map>

#include "core/config.hpp"
#include "memory/memory.hpp"
#include "module/nvjitlink.hpp"
#include "ptx/exec.hpp"
#include "ptx/program.hpp"
#include "sched/sched.hpp"

namespace swcu {
namespace {

// Globals start at this alignment, so that each is an allocation of its own.
constexpr std::size_t kGlobalAlignment = 256;

std::size_t align_up(std::size_t value, std::size_t align) noexcept {
  return (value + align - 1) / align * align;
}

// The newest PTX ISA a driver of this version accepts (CUDA 13.0: 9.0, 12.4: 8.4, ...).
int max_ptx_isa(int driver_version) noexcept {
  const int major = driver_version / 1000;
  const int minor = std::min((driver_version % 1000) / 10, 9);
  if (major >= 13) return 90 + minor;
  if (major == 12) {
    static constexpr int kIsa[] = {80, 81, 82, 83, 84, 85, 85, 86, 87, 88};
    return kIsa[minor];
  }
  if (major == 11) return 70 + std::min(minor, 8);
  return 60 + minor;
}

CUresult to_result(ImageError e) noexcept {
  switch (e) {
    case ImageError::none: return CUDA_SUCCESS;
    case ImageError::not_an_image: return CUDA_ERROR_INVALID_IMAGE;
    case ImageError::invalid_ptx: return CUDA_ERROR_INVALID_PTX;
    case ImageError::unsupported_ptx_version: return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    case ImageError::no_binary_for_gpu: return CUDA_ERROR_NO_BINARY_FOR_GPU;
    case ImageError::not_supported: return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_ERROR_INVALID_IMAGE;
}

// A log into a JIT option buffer: truncated to fit with its NUL; the size option then holds
// the characters written (without the NUL).
void write_log(char* buffer, std::size_t size, int size_index, void** values,
               const std::string& text) noexcept {
  std::size_t n = 0;
  if (buffer != nullptr && size > 0) {
    n = std::min(text.size(), size - 1);
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  if (size_index >= 0) values[size_index] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(n));
}

// Loads an image into the current context as a program module (every cuModuleLoad*).
CUresult load_module(Sym sym, CUmodule* out, const void* data, std::size_t size, unsigned int count,
                     CUjit_option* options, void** values) {
  return call(sym, [=](State& s, Lock& lock) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    if (out == nullptr || data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    JitRequest request;
    if (const CUresult r = read_jit_options(count, options, values, request)) return r;
    std::shared_ptr<const Image> image;
    LoadLog log;
    const CUresult r = parse_image(data, size, request, image, log, &lock);
    if (count > 0) write_jit_logs(request, values, log);
    if (r != CUDA_SUCCESS) return r;
    // LTO-IR released the lock: the context may have gone meanwhile.
    if (const CUresult again = current_context(s, ctx)) return again;
    Module* const m = s.registry(SWCU_MODULE).add(instantiate(s, *ctx, std::move(image), nullptr));
    try {
      map_module(s, *m);
    } catch (...) {
      s.destroy(SWCU_MODULE, m);
      throw;
    }
    *out = m->handle();
    return CUDA_SUCCESS;
  });
}

}  // namespace

HandleMaps& handle_maps() noexcept {
  static HandleMaps* const maps = new HandleMaps;  // never destroyed, like the state
  return *maps;
}

Module::~Module() { std::free(memory); }

void Module::release() noexcept {
  if (!live) return;
  live = false;
  State& s = state();
  HandleMaps& maps = handle_maps();
  for (const auto& f : functions) maps.functions.erase(f.get());
  if (library != nullptr) maps.library_modules.erase(this);
  for (const auto& a : globals) {
    const auto it = s.address_map.find(a->base);
    if (it != s.address_map.end() && it->second == a.get()) s.address_map.erase(it);
  }
  std::free(memory);
  memory = nullptr;
}

Module* find_module(State& s, const void* handle) noexcept {
  if (Module* m = s.find<Module>(SWCU_MODULE, handle)) return m;
  const HandleMaps& maps = handle_maps();
  const auto it = maps.library_modules.find(handle);
  return it == maps.library_modules.end() ? nullptr : it->second;
}

Function* find_function(State&, const void* handle) noexcept {
  const HandleMaps& maps = handle_maps();
  const auto it = maps.functions.find(handle);
  return it == maps.functions.end() ? nullptr : it->second;
}

Kernel* find_kernel(State&, const void* handle) noexcept {
  const HandleMaps& maps = handle_maps();
  const auto it = maps.kernels.find(handle);
  return it == maps.kernels.end() ? nullptr : it->second;
}

CUresult resolve_function(State& s, CUfunction handle, Context* ctx, Function*& out) {
  if (Function* f = find_function(s, handle)) {
    out = f;
    return CUDA_SUCCESS;
  }
  Kernel* const k = find_kernel(s, handle);
  if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (ctx == nullptr) {
    if (const CUresult r = current_context(s, ctx)) return r;
  }
  out = library_module(s, *k->library, *ctx).functions[k->index].get();
  return CUDA_SUCCESS;
}

const KernelDesc* describe(State& s, const void* handle) noexcept {
  if (const Function* f = find_function(s, handle)) return f->desc;
  if (const Kernel* k = find_kernel(s, handle)) return k->desc;
  return nullptr;
}

namespace {

// The addresses of the decoded program's globals in the module, and the initializers that hold
// addresses (relocations), now that every global has one.
void link_program_globals(const Image& image, Module& m) {
  const ptx::Program& p = *image.program;
  m.program_globals.assign(p.globals.size(), 0);
  std::unordered_map<std::string_view, std::size_t> index;  // by hash: linear in the globals
  index.reserve(image.globals.size());
  for (std::size_t k = 0; k < image.globals.size(); ++k) index.emplace(image.globals[k].name, k);
  for (std::size_t i = 0; i < p.globals.size(); ++i) {
    if (const auto it = index.find(p.globals[i].name); it != index.end()) {
      m.program_globals[i] = m.globals[it->second]->base;
    }
  }
  for (std::size_t i = 0; i < p.globals.size(); ++i) {
    if (m.program_globals[i] == 0) continue;
    for (const ptx::Reloc& r : p.globals[i].relocs) {
      std::uint64_t value =
          r.function ? ptx::function_address(r.target) : m.program_globals[r.target];
      value += static_cast<std::uint64_t>(r.addend);
      if (r.offset + r.size <= p.globals[i].size) {
        std::memcpy(reinterpret_cast<unsigned char*>(m.program_globals[i]) + r.offset, &value,
                    std::min<std::size_t>(r.size, sizeof value));
      }
    }
  }
}

}  // namespace

std::unique_ptr<Module> instantiate(State& s, Context& ctx, std::shared_ptr<const Image> image,
                                    Library* library) {
  auto m = std::make_unique<Module>();
  m->ctx = &ctx;
  m->library = library;
  std::vector<std::size_t> offsets;
  std::size_t total = 0;
  for (const GlobalDesc& g : image->globals) {
    total = align_up(total, std::max(g.align, kGlobalAlignment));
    offsets.push_back(total);
    total += std::max<std::size_t>(g.size, 1);
  }
  if (total > 0) {
    total = align_up(total, kGlobalAlignment);
    m->memory = static_cast<unsigned char*>(std::aligned_alloc(kGlobalAlignment, total));
    if (m->memory == nullptr) throw std::bad_alloc();
    std::memset(m->memory, 0, total);
  }
  for (std::size_t i = 0; i < image->globals.size(); ++i) {
    const GlobalDesc& g = image->globals[i];
    unsigned char* const p = m->memory + offsets[i];
    if (!g.init.empty()) std::memcpy(p, g.init.data(), std::min(g.init.size(), g.size));
    auto a = std::make_unique<Allocation>(SWCU_MODULE, Allocation::Memory::device);
    a->base = reinterpret_cast<std::uintptr_t>(p);
    a->size = g.size;
    a->ctx = &ctx;
    a->device = ctx.device;
    a->buffer_id = s.next_buffer_id++;
    m->globals.push_back(std::move(a));
  }
  if (image->program != nullptr) link_program_globals(*image, *m);
  for (std::size_t i = 0; i < image->kernels.size(); ++i) {
    auto f = std::make_unique<Function>();
    f->module = m.get();
    f->desc = &image->kernels[i];
    if (library != nullptr) f->kernel = library->kernels[i].get();
    m->functions.push_back(std::move(f));
  }
  m->image = std::move(image);
  return m;
}

void map_module(State& s, Module& m) {
  HandleMaps& maps = handle_maps();
  for (const auto& f : m.functions) maps.functions.emplace(f.get(), f.get());
  for (const auto& a : m.globals) {
    if (a->size > 0) s.address_map.emplace(a->base, a.get());
  }
  if (m.library != nullptr) maps.library_modules.emplace(&m, &m);
}

Module& library_module(State& s, Library& lib, Context& ctx) {
  if (const auto it = lib.modules.find(&ctx); it != lib.modules.end()) return *it->second;
  lib.all_modules.push_back(instantiate(s, ctx, lib.image, &lib));
  Module& m = *lib.all_modules.back();
  try {
    map_module(s, m);
    lib.modules.emplace(&ctx, &m);
  } catch (...) {
    m.release();
    throw;
  }
  return m;
}

FuncSettings effective_settings(const Function& f) {
  FuncSettings set;
  if (f.kernel != nullptr) {
    const auto device = static_cast<std::size_t>(f.module->ctx->device);
    if (device < f.kernel->per_device.size()) set = f.kernel->per_device[device];
  }
  const FuncSettings& own = f.settings;
  const auto take = [](std::optional<int>& to, const std::optional<int>& from) {
    if (from) to = from;
  };
  take(set.max_dynamic_shared, own.max_dynamic_shared);
  take(set.carveout, own.carveout);
  for (std::size_t i = 0; i < 3; ++i) take(set.cluster[i], own.cluster[i]);
  take(set.non_portable, own.non_portable);
  take(set.scheduling, own.scheduling);
  take(set.cache_config, own.cache_config);
  take(set.shared_config, own.shared_config);
  return set;
}

int max_threads(const KernelDesc& k) noexcept {
  return k.max_threads != 0 ? static_cast<int>(k.max_threads) : kMaxThreadsPerBlock;
}

int max_dynamic_shared(const KernelDesc& k, const FuncSettings& set) noexcept {
  if (set.max_dynamic_shared) return *set.max_dynamic_shared;
  const auto fixed =
      static_cast<int>(std::min<std::size_t>(k.static_shared, kDefaultSharedPerBlock));
  return kDefaultSharedPerBlock - fixed;
}

bool attribute_value(const KernelDesc& k, const Image& image, const FuncSettings& set,
                     int attribute, int& out) noexcept {
  const auto clamp = [](std::size_t v) {
    return static_cast<int>(std::min<std::size_t>(v, INT32_MAX));
  };
  const bool compiled_cluster = k.cluster[0] != 0 || k.cluster[1] != 0 || k.cluster[2] != 0;
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: out = max_threads(k); return true;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: out = clamp(k.static_shared); return true;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: out = clamp(image.const_bytes); return true;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: out = clamp(k.local_bytes); return true;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: out = k.num_regs; return true;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: out = image.virtual_arch; return true;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: out = image.arch; return true;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: out = 0; return true;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      out = max_dynamic_shared(k, set);
      return true;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      out = set.carveout.value_or(-1);
      return true;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: out = k.explicit_cluster ? 1 : 0; return true;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: {
      const auto i = static_cast<std::size_t>(attribute - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
      out = compiled_cluster ? static_cast<int>(k.cluster[i]) : set.cluster[i].value_or(0);
      return true;
    }
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      out = set.non_portable.value_or(0);
      return true;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      out = set.scheduling.value_or(CU_CLUSTER_SCHEDULING_POLICY_DEFAULT);
      return true;
    default: break;
  }
  return false;
}

CUresult set_attribute(const KernelDesc& k, FuncSettings& set, int attribute, int value) noexcept {
  switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || static_cast<std::size_t>(value) + k.static_shared >
                           static_cast<std::size_t>(kMaxSharedPerBlockOptin)) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      set.max_dynamic_shared = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
      set.carveout = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      if (k.cluster[0] != 0 || k.cluster[1] != 0 || k.cluster[2] != 0) {
        return CUDA_ERROR_NOT_PERMITTED;  // set at compile time
      }
      if (value < 0) return CUDA_ERROR_INVALID_VALUE;
      set.cluster[static_cast<std::size_t>(attribute - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)] =
          value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      if (value != 0 && value != 1) return CUDA_ERROR_INVALID_VALUE;
      set.non_portable = value;
      return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      if (value < CU_CLUSTER_SCHEDULING_POLICY_DEFAULT ||
          value > CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      set.scheduling = value;
      return CUDA_SUCCESS;
    default: break;
  }
  return CUDA_ERROR_INVALID_VALUE;  // read-only or unknown
}

void reclaim_modules(State& s, Context& ctx) noexcept {
  for (const void* h : s.registry(SWCU_MODULE).handles_if([&ctx](const Object& o) {
         return static_cast<const Module&>(o).ctx == &ctx;
       })) {
    s.reclaim(SWCU_MODULE, h);
  }
  for (const void* h : s.registry(SWCU_LIBRARY).handles_if([](const Object&) { return true; })) {
    auto* const lib = s.find<Library>(SWCU_LIBRARY, h);
    if (const auto it = lib->modules.find(&ctx); it != lib->modules.end()) {
      it->second->release();
      lib->modules.erase(it);
    }
  }
}

CUresult read_jit_options(unsigned int count, const CUjit_option* options, void* const* values,
                          JitRequest& out) noexcept {
  if (count == 0) return CUDA_SUCCESS;
  if (options == nullptr || values == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < count; ++i) {
    const int option = raw(options[i]);
    const auto value = reinterpret_cast<std::uintptr_t>(values[i]);  // options pass values as is
    const auto index = static_cast<int>(i);
    switch (option) {
      case CU_JIT_MAX_REGISTERS: out.load.max_registers = static_cast<unsigned>(value); break;
      case CU_JIT_THREADS_PER_BLOCK:
      case CU_JIT_MAX_THREADS_PER_BLOCK:
        out.load.threads_per_block = static_cast<unsigned>(value);
        break;
      case CU_JIT_WALL_TIME: out.wall_time_index = index; break;
      case CU_JIT_INFO_LOG_BUFFER: out.info = static_cast<char*>(values[i]); break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        out.info_size = static_cast<unsigned>(value);
        out.info_size_index = index;
        break;
      case CU_JIT_ERROR_LOG_BUFFER: out.error = static_cast<char*>(values[i]); break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        out.error_size = static_cast<unsigned>(value);
        out.error_size_index = index;
        break;
      default:
        if (option < 0 || option >= CU_JIT_NUM_OPTIONS) return CUDA_ERROR_INVALID_VALUE;
        break;  // accepted; nothing to compile, so no effect
    }
  }
  return CUDA_SUCCESS;
}

void write_jit_logs(const JitRequest& request, void** values, const LoadLog& log) noexcept {
  write_log(request.info, request.info_size, request.info_size_index, values,
            log.error == ImageError::none ? log.info_log : std::string());
  write_log(request.error, request.error_size, request.error_size_index, values,
            log.error == ImageError::none ? std::string() : "swcuda: " + log.error_log);
  if (request.wall_time_index >= 0) {
    const float ms = 0.0f;  // no compiler ran
    void* bits = nullptr;
    std::memcpy(&bits, &ms, sizeof ms);
    values[request.wall_time_index] = bits;
  }
}

namespace {

// LTO-IR of known length (load_image found it) becomes PTX through nvJitLink, as the real driver
// JIT-links it; false with the log.
bool ltoir_to_ptx(const LoadLog& found, std::string& ptx, LoadLog& log, Lock* lock) {
  if (lock == nullptr) {  // the JIT linker's merged PTX: never LTO-IR
    log.error = ImageError::not_supported;
    log.error_log = found.ltoir_name + " cannot be linked here";
    return false;
  }
  std::string why;
  const NvJitLink* const lib = nvjitlink(why);
  if (lib == nullptr) {
    log.error = ImageError::not_supported;
    log.error_log = why;
    return false;
  }
  const std::vector<LtoInput> inputs{
      {found.ltoir_name, std::vector<unsigned char>(found.ltoir.begin(), found.ltoir.end())}};
  // nvJitLink calls the driver (cuInit...): run it without the state lock.
  lock->unlock();
  bool ok = false;
  try {
    ok = lto_to_ptx(lib, inputs, ptx, why);
  } catch (...) {
    lock->lock();
    throw;
  }
  lock->lock();
  if (!ok) {
    log.error = ImageError::not_an_image;
    log.error_log = why;
    return false;
  }
  return true;
}

}  // namespace

CUresult parse_image(const void* data, std::size_t size, const JitRequest& request,
                     std::shared_ptr<const Image>& out, LoadLog& log, Lock* lock) {
  LoadOptions options = request.load;
  options.max_ptx_isa = max_ptx_isa(config().driver_version);
  auto image = std::make_shared<Image>();
  log = load_image(data, size, options, *image);
  if (!log.ltoir.empty()) {
    std::string ptx;  // the LTO-IR's PTX
    const LoadLog found = std::move(log);
    log = LoadLog{};
    if (!ltoir_to_ptx(found, ptx, log, lock)) return to_result(log.error);
    image = std::make_shared<Image>();
    log = load_image(ptx.c_str(), ptx.size(), options, *image);
  }
  if (log.error != ImageError::none) return to_result(log.error);
  out = std::move(image);
  return CUDA_SUCCESS;
}

bool read_file(const char* path, std::vector<unsigned char>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace swcu

using swcu::call;
using swcu::Function;
using swcu::Module;
using swcu::State;
using swcu::Sym;

extern "C" {

CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  // The file is read before the state lock is taken; a missing file fails after the checks.
  std::vector<unsigned char> bytes;
  const bool read = fname != nullptr && swcu::read_file(fname, bytes);
  if (read) bytes.push_back(0);  // PTX from a file need not end in a NUL (not counted below)
  if (!read) {
    return call(Sym::cuModuleLoad, [=](State& s) -> CUresult {
      swcu::Context* ctx = nullptr;
      if (const CUresult r = swcu::current_context(s, ctx)) return r;
      if (module == nullptr || fname == nullptr) return CUDA_ERROR_INVALID_VALUE;
      return CUDA_ERROR_FILE_NOT_FOUND;
    });
  }
  return swcu::load_module(Sym::cuModuleLoad, module, bytes.data(), bytes.size() - 1, 0, nullptr,
                           nullptr);
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return swcu::load_module(Sym::cuModuleLoadData, module, image, SIZE_MAX, 0, nullptr, nullptr);
}

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                            CUjit_option* options, void** optionValues) {
  return swcu::load_module(Sym::cuModuleLoadDataEx, module, image, SIZE_MAX, numOptions, options,
                           optionValues);
}

CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return swcu::load_module(Sym::cuModuleLoadFatBinary, module, fatCubin, SIZE_MAX, 0, nullptr,
                           nullptr);
}

// Waits for the context's work first (a kernel's emulation may use the module's globals).
CUresult cuModuleUnload(CUmodule hmod) {
  return call(Sym::cuModuleUnload, [=](State& s, swcu::Lock& lock) -> CUresult {
    Module* m = swcu::find_module(s, hmod);
    if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (m->library != nullptr) return CUDA_ERROR_NOT_PERMITTED;
    if (m->ctx->sticky_error != CUDA_SUCCESS) return m->ctx->sticky_error;
    swcu::drain_context(s, lock, *m->ctx);
    if (s.find<Module>(SWCU_MODULE, hmod) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    s.destroy(SWCU_MODULE, hmod);
    return CUDA_SUCCESS;
  });
}

CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  return call(Sym::cuModuleGetFunction, [=](State& s) -> CUresult {
    if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Module* const m = swcu::find_module(s, hmod);
    if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    for (const auto& f : m->functions) {
      if (f->desc->name == name) {
        *hfunc = f->handle();
        return CUDA_SUCCESS;
      }
    }
    return CUDA_ERROR_NOT_FOUND;
  });
}

CUresult cuModuleGetFunctionCount(unsigned int* count, CUmodule mod) {
  return call(Sym::cuModuleGetFunctionCount, [=](State& s) -> CUresult {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Module* const m = swcu::find_module(s, mod);
    if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *count = static_cast<unsigned int>(m->functions.size());
    return CUDA_SUCCESS;
  });
}

CUresult cuModuleEnumerateFunctions(CUfunction* functions, unsigned int numFunctions,
                                    CUmodule mod) {
  return call(Sym::cuModuleEnumerateFunctions, [=](State& s) -> CUresult {
    if (functions == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Module* const m = swcu::find_module(s, mod);
    if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const std::size_t n = std::min<std::size_t>(numFunctions, m->functions.size());
    for (std::size_t i = 0; i < n; ++i) functions[i] = m->functions[i]->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name) {
  return call(Sym::cuModuleGetGlobal_v2, [=](State& s) -> CUresult {
    if ((dptr == nullptr && bytes == nullptr) || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const Module* const m = swcu::find_module(s, hmod);
    if (m == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    for (std::size_t i = 0; i < m->image->globals.size(); ++i) {
      if (m->image->globals[i].name != name) continue;
      if (dptr != nullptr) *dptr = static_cast<CUdeviceptr>(m->globals[i]->base);
      if (bytes != nullptr) *bytes = m->globals[i]->size;
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
  });
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  return call(Sym::cuModuleGetLoadingMode, [=](State&) -> CUresult {
    if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_LAZY_LOADING;  // libraries load into a context on first use
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  const int attribute = swcu::raw(attrib);
  return call(Sym::cuFuncGetAttribute, [=](State& s) -> CUresult {
    if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Function* f = nullptr;
    if (const CUresult r = swcu::resolve_function(s, hfunc, nullptr, f)) return r;
    int value = 0;
    if (!swcu::attribute_value(*f->desc, *f->module->image, swcu::effective_settings(*f), attribute,
                               value)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *pi = value;
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  const int attribute = swcu::raw(attrib);
  return call(Sym::cuFuncSetAttribute, [=](State& s) -> CUresult {
    Function* f = nullptr;
    if (const CUresult r = swcu::resolve_function(s, hfunc, nullptr, f)) return r;
    return swcu::set_attribute(*f->desc, f->settings, attribute, value);
  });
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  const int value = swcu::raw(config);
  return call(Sym::cuFuncSetCacheConfig, [=](State& s) -> CUresult {
    Function* f = nullptr;
    if (const CUresult r = swcu::resolve_function(s, hfunc, nullptr, f)) return r;
    if (value < CU_FUNC_CACHE_PREFER_NONE || value > CU_FUNC_CACHE_PREFER_EQUAL) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    f->settings.cache_config = value;
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config) {
  const int value = swcu::raw(config);
  return call(Sym::cuFuncSetSharedMemConfig, [=](State& s) -> CUresult {
    Function* f = nullptr;
    if (const CUresult r = swcu::resolve_function(s, hfunc, nullptr, f)) return r;
    if (value < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE ||
        value > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    f->settings.shared_config = value;  // no effect on sm_90, as documented
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  return call(Sym::cuFuncGetModule, [=](State& s) -> CUresult {
    if (hmod == nullptr) return CUDA_ERROR_INVALID_VALUE;
    Function* f = nullptr;
    if (const CUresult r = swcu::resolve_function(s, hfunc, nullptr, f)) return r;
    *hmod = f->module->handle();
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  return call(Sym::cuFuncGetName, [=](State& s) -> CUresult {
    if (name == nullptr || hfunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const swcu::KernelDesc* const k = swcu::describe(s, hfunc);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *name = k->name.c_str();
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset,
                            size_t* paramSize) {
  return call(Sym::cuFuncGetParamInfo, [=](State& s) -> CUresult {
    if (paramOffset == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const swcu::KernelDesc* const k = swcu::describe(s, func);
    if (k == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (!k->layout_known) return CUDA_ERROR_NOT_SUPPORTED;
    if (paramIndex >= k->params.size()) return CUDA_ERROR_INVALID_VALUE;
    *paramOffset = k->params[paramIndex].offset;
    if (paramSize != nullptr) *paramSize = k->params[paramIndex].size;
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncIsLoaded(CUfunctionLoadingState* loadingState, CUfunction function) {
  return call(Sym::cuFuncIsLoaded, [=](State& s) -> CUresult {
    if (loadingState == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (swcu::describe(s, function) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *loadingState = CU_FUNCTION_LOADING_STATE_LOADED;
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncLoad(CUfunction function) {
  return call(Sym::cuFuncLoad, [=](State& s) -> CUresult {
    return swcu::describe(s, function) == nullptr ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
  });
}

}  // extern "C"
