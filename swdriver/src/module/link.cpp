// The JIT linker: cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLinkComplete, cuLinkDestroy.
//
// The software driver compiles nothing to SASS, so the linked image is PTX text: cuLinkComplete
// merges the PTX of every input into one module, which cuModuleLoadData then loads as PTX.
//
// Inputs (what each CUjitInputType gives):
//   PTX        the text (up to its NUL), checked like a module load at cuLinkAddData.
//   FATBINARY  its newest PTX entry the device can run (fatbin_code, fatbin.cpp); a fatbin with
//              only LTO-IR goes to nvJitLink like NVVM; one with only SASS is refused.
//   OBJECT,    every fatbin embedded in the host object or archive (found by their magic
//   LIBRARY    number), taken as above.
//   NVVM       LTO-IR (raw, in a fatbin or in a host object): at cuLinkComplete all of them are
//              linked together by nvJitLink (libnvJitLink.so, dlopen'ed: SWCUDA_NVJITLINK names
//              the library, else $CUDA_HOME/lib64, $CUDA_PATH/lib64, then the soname) with
//              -lto -ptx, and its PTX output is one more input. nvJitLink optimizes the LTO-IR as
//              a whole program: a device function defined in LTO-IR that only PTX inputs call is
//              dropped, which then shows as an undefined reference.
//   CUBIN      refused: SASS cannot run here (CUDA_ERROR_INVALID_IMAGE, with the reason in the
//              error log).
//
// Merging: one header (the highest .version, the .target of the newest input, .address_size
// 64), then each input's top-level statements in order. A symbol defined with internal linkage
// (no .visible/.weak/.extern) that another input also names is renamed in its input
// (NAME$swlinkK for input K; nvcc's $str string literals, static functions). For symbols with
// external linkage: two .visible definitions are a duplicate-definition error; a .visible one
// wins over .weak/.common ones, else the first; the others are dropped. An `.extern` function
// declaration of a defined symbol is dropped when the definition comes earlier, else it becomes
// a prototype (`.visible .func ...;`); an `.extern` variable declaration is replaced by the
// definition itself when that comes later (so it is defined before its first use). An `.extern`
// function that nothing defines is allowed only for the driver's built-ins (vprintf,
// __assertfail, malloc, free), kept once; anything else unresolved is an "undefined reference"
// error. Link errors return CUDA_ERROR_INVALID_IMAGE (no image can be made) and name the symbol
// and the input in the error log. `.extern .shared` (dynamic shared memory) is kept, once per
// name. Debug file numbers (.file/.loc) of input K are offset by 1000 * K. The merged text is
// then parsed like a module load (CUDA_ERROR_INVALID_PTX if it fails).
//
// Logs: the CU_JIT_INFO/ERROR_LOG_BUFFER options of cuLinkCreate accumulate lines for the life
// of the link state (the option arrays must stay valid, as cuda.h says); they are rewritten after
// every cuLinkAddData/cuLinkAddFile/cuLinkComplete. cuLinkAddData refuses the options cuda.h
// says it does not accept (the log buffers, the wall time, the targets) with
// CUDA_ERROR_INVALID_VALUE.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "module/module.hpp"
#include "module/nvjitlink.hpp"
#include "module/ptx_merge.hpp"

namespace swcu {
namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::string_view kRefuseSass =
    "the software driver runs PTX; compile with -ptx or keep PTX in the fatbin";

// ---------------------------------------------------------------------------------------------
// The link state.

struct LinkState final : Object {
  LinkState() noexcept : Object(SWCU_LINK_STATE) {}
  void release() noexcept override {
    ptx.clear();
    lto.clear();
    image.clear();
    image.shrink_to_fit();
  }

  JitRequest request;       // the log buffers of cuLinkCreate
  void** values = nullptr;  // its option values (sizes are written back there)
  unsigned int count = 0;
  std::vector<PtxInput> ptx;
  std::vector<LtoInput> lto;
  std::size_t lto_position = 0;  // where the LTO-IR's PTX goes among the PTX inputs
  std::size_t added = 0;         // inputs added, for default names
  std::string info_log;
  std::string error_log;
  bool completed = false;
  int linking = 0;    // cuLinkComplete calls running nvJitLink (inputs cannot be added then)
  std::string image;  // the merged PTX, NUL-terminated by std::string
};

void append_line(std::string& log, const std::string& line) {
  if (!log.empty()) log += '\n';
  log += "swcuda: " + line;
}

// A log into a JIT option buffer: truncated to fit with its NUL; the size option then holds the
// characters written (without the NUL).
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

void publish_logs(const LinkState& l) noexcept {
  if (l.count == 0 || l.values == nullptr) return;
  write_log(l.request.info, l.request.info_size, l.request.info_size_index, l.values, l.info_log);
  write_log(l.request.error, l.request.error_size, l.request.error_size_index, l.values,
            l.error_log);
  if (l.request.wall_time_index >= 0) {
    const float ms = 0.0f;  // no compiler ran
    void* bits = nullptr;
    std::memcpy(&bits, &ms, sizeof ms);
    l.values[l.request.wall_time_index] = bits;
  }
}

// Fails the call with `code` and one error log line.
CUresult fail(LinkState& l, CUresult code, const std::string& line) {
  append_line(l.error_log, line);
  publish_logs(l);
  return code;
}

// Checks one PTX text as a module load would; CUDA_SUCCESS or the load's error (logged).
CUresult check_ptx(LinkState& l, const std::string& name, const std::string& text) {
  JitRequest request;
  std::shared_ptr<const Image> image;
  LoadLog log;
  const CUresult r = parse_image(text.c_str(), SIZE_MAX, request, image, log);
  if (r != CUDA_SUCCESS) {
    // Text given as PTX that is not PTX at all is invalid PTX, not an invalid image.
    return fail(l, r == CUDA_ERROR_INVALID_IMAGE ? CUDA_ERROR_INVALID_PTX : r,
                name + ": " + log.error_log);
  }
  if (image->code != ImageCode::ptx || image->from_fatbin) {
    return fail(l, CUDA_ERROR_INVALID_PTX, name + ": not PTX text");
  }
  return CUDA_SUCCESS;
}

CUresult add_ptx(LinkState& l, const std::string& name, std::string text) {
  if (const CUresult r = check_ptx(l, name, text)) return r;
  l.ptx.push_back({name, std::move(text)});
  append_line(l.info_log, "added PTX input '" + name + "'");
  return CUDA_SUCCESS;
}

CUresult add_lto(LinkState& l, const std::string& name, const unsigned char* data,
                 std::size_t size) {
  std::string why;
  if (nvjitlink(why) == nullptr) return fail(l, CUDA_ERROR_NOT_SUPPORTED, name + ": " + why);
  if (l.lto.empty()) l.lto_position = l.ptx.size();
  l.lto.push_back({name, std::vector<unsigned char>(data, data + size)});
  append_line(l.info_log, "added LTO-IR input '" + name + "' (linked by nvJitLink at completion)");
  return CUDA_SUCCESS;
}

// A fatbin (alone or found inside a host object): its PTX, else its LTO-IR.
CUresult add_fatbin(LinkState& l, const std::string& name, const unsigned char* data,
                    std::size_t size) {
  const FatbinCode code = fatbin_code(data, size);
  if (!code.error.empty()) return fail(l, CUDA_ERROR_INVALID_IMAGE, name + ": " + code.error);
  if (!code.ptx.empty()) return add_ptx(l, name, code.ptx);
  if (code.has_ltoir) return add_lto(l, name, data, size);
  return fail(l, CUDA_ERROR_INVALID_IMAGE,
              name +
                  (code.has_elf ? ": the fatbin holds only SASS; "
                                : ": the fatbin holds no code for this device; ") +
                  std::string(kRefuseSass));
}

// A host object or archive: every embedded fatbin's PTX; LTO-IR goes to nvJitLink whole.
CUresult add_host_code(LinkState& l, const std::string& name, const unsigned char* data,
                       std::size_t size) {
  std::vector<std::string> texts;
  bool elf = false;
  bool ltoir = false;
  for (std::size_t i = 0; i + 16 <= size; ++i) {
    std::uint32_t magic = 0;
    std::memcpy(&magic, data + i, sizeof magic);
    if (magic != kFatbinMagic) continue;
    const FatbinCode code = fatbin_code(data + i, size - i);
    if (!code.error.empty()) continue;  // the bytes only looked like a fatbin
    elf = elf || code.has_elf;
    ltoir = ltoir || code.has_ltoir;
    if (!code.ptx.empty()) texts.push_back(code.ptx);
  }
  if (texts.empty()) {
    if (ltoir) return add_lto(l, name, data, size);
    return fail(l, CUDA_ERROR_INVALID_IMAGE,
                name +
                    (elf ? ": its device code is SASS only; "
                         : ": no device code (no fatbin) was found in it; ") +
                    std::string(kRefuseSass));
  }
  for (std::size_t k = 0; k < texts.size(); ++k) {
    const std::string part = texts.size() == 1 ? name : name + " #" + std::to_string(k + 1);
    if (const CUresult r = add_ptx(l, part, std::move(texts[k]))) return r;
  }
  return CUDA_SUCCESS;
}

bool is_elf(const unsigned char* data, std::size_t size) noexcept {
  return size >= 4 && data[0] == 0x7f && data[1] == 'E' && data[2] == 'L' && data[3] == 'F';
}

// Checks the per-input options (the ones cuLinkAddData does not accept are refused).
CUresult check_input_options(unsigned int count, CUjit_option* options, void** values) {
  if (count == 0) return CUDA_SUCCESS;
  if (options == nullptr || values == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < count; ++i) {
    switch (raw(options[i])) {
      case CU_JIT_WALL_TIME:
      case CU_JIT_INFO_LOG_BUFFER:
      case CU_JIT_ERROR_LOG_BUFFER:
      case CU_JIT_TARGET_FROM_CUCONTEXT:
      case CU_JIT_TARGET: return CUDA_ERROR_INVALID_VALUE;
      default: break;
    }
  }
  JitRequest ignored;
  return read_jit_options(count, options, values, ignored);
}

// cuLinkAddData and cuLinkAddFile after their checks: one input of `type`.
CUresult add_input(LinkState& l, int type, const unsigned char* data, std::size_t size,
                   std::string name) {
  ++l.added;
  if (name.empty()) name = "input " + std::to_string(l.added);
  CUresult r = CUDA_SUCCESS;
  switch (type) {
    case CU_JIT_INPUT_PTX: {
      const char* text = reinterpret_cast<const char*>(data);
      r = add_ptx(l, name, std::string(text, size == 0 ? std::strlen(text) : strnlen(text, size)));
      break;
    }
    case CU_JIT_INPUT_FATBINARY: r = add_fatbin(l, name, data, size); break;
    case CU_JIT_INPUT_OBJECT:
    case CU_JIT_INPUT_LIBRARY: r = add_host_code(l, name, data, size); break;
    case CU_JIT_INPUT_NVVM: r = add_lto(l, name, data, size); break;
    case CU_JIT_INPUT_CUBIN:
      r = fail(
          l, CUDA_ERROR_INVALID_IMAGE,
          name + (is_elf(data, size) ? ": a cubin is SASS; " : ": not a cubin (no ELF header); ") +
              std::string(kRefuseSass));
      break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
  }
  publish_logs(l);
  return r;
}

LinkState* find_link(State& s, CUlinkState handle) noexcept {
  return s.find<LinkState>(SWCU_LINK_STATE, handle);
}

CUresult link_create(Sym sym, unsigned int count, CUjit_option* options, void** values,
                     CUlinkState* out) {
  return call(sym, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto l = std::make_unique<LinkState>();
    if (const CUresult r = read_jit_options(count, options, values, l->request)) return r;
    l->values = values;
    l->count = count;
    publish_logs(*l);  // empty logs, zero sizes
    *out = reinterpret_cast<CUlinkState>(s.registry(SWCU_LINK_STATE).add(std::move(l)));
    return CUDA_SUCCESS;
  });
}

// The checks every add makes first; nullptr with the code to return.
LinkState* checked_link(State& s, CUlinkState handle, int type, unsigned int count,
                        CUjit_option* options, void** values, CUresult& r) {
  LinkState* const l = find_link(s, handle);
  if (l == nullptr) {
    r = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  if (type < 0 || type >= CU_JIT_NUM_INPUT_TYPES) {
    r = CUDA_ERROR_INVALID_VALUE;
    return nullptr;
  }
  if ((r = check_input_options(count, options, values)) != CUDA_SUCCESS) return nullptr;
  if (l->completed || l->linking > 0) {
    r = fail(*l, CUDA_ERROR_INVALID_VALUE,
             l->completed ? "cannot add an input: the link was already completed"
                          : "cannot add an input: the link is being completed");
    return nullptr;
  }
  return l;
}

CUresult link_add_data(Sym sym, CUlinkState state, CUjitInputType type, void* data,
                       std::size_t size, const char* name, unsigned int count,
                       CUjit_option* options, void** values) {
  const int kind = raw(type);
  return call(sym, [=](State& s) -> CUresult {
    CUresult r = CUDA_SUCCESS;
    LinkState* const l = checked_link(s, state, kind, count, options, values, r);
    if (l == nullptr) return r;
    if (data == nullptr || (size == 0 && kind != CU_JIT_INPUT_PTX)) {
      return fail(*l, CUDA_ERROR_INVALID_VALUE,
                  std::string(name != nullptr ? name : "input") + ": no data");
    }
    return add_input(*l, kind, static_cast<const unsigned char*>(data), size,
                     name != nullptr ? name : "");
  });
}

CUresult link_add_file(Sym sym, CUlinkState state, CUjitInputType type, const char* path,
                       unsigned int count, CUjit_option* options, void** values) {
  const int kind = raw(type);
  // The file is read before the state lock is taken (like cuModuleLoad).
  std::vector<unsigned char> bytes;
  const bool read = path != nullptr && read_file(path, bytes);
  return call(sym, [=, &bytes](State& s) -> CUresult {
    CUresult r = CUDA_SUCCESS;
    LinkState* const l = checked_link(s, state, kind, count, options, values, r);
    if (l == nullptr) return r;
    if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!read) {
      return fail(*l, CUDA_ERROR_FILE_NOT_FOUND, std::string(path) + ": cannot read the file");
    }
    if (bytes.empty()) return fail(*l, CUDA_ERROR_INVALID_VALUE, std::string(path) + ": empty");
    return add_input(*l, kind, bytes.data(), bytes.size(), path);
  });
}

}  // namespace
}  // namespace swcu

using swcu::call;
using swcu::State;
using swcu::Sym;

extern "C" {

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues,
                         CUlinkState* stateOut) {
  return swcu::link_create(Sym::cuLinkCreate_v2, numOptions, options, optionValues, stateOut);
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size,
                          const char* name, unsigned int numOptions, CUjit_option* options,
                          void** optionValues) {
  return swcu::link_add_data(Sym::cuLinkAddData_v2, state, type, data, size, name, numOptions,
                             options, optionValues);
}

CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path,
                          unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return swcu::link_add_file(Sym::cuLinkAddFile_v2, state, type, path, numOptions, options,
                             optionValues);
}

// nvJitLink calls back into the driver (cuInit and others), so it runs with the state lock
// released; the link state is looked up again afterwards.
CUresult cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
  return call(Sym::cuLinkComplete, [=](State& s, swcu::Lock& lock) -> CUresult {
    swcu::LinkState* l = swcu::find_link(s, state);
    if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (cubinOut == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!l->completed) {
      if (l->ptx.empty() && l->lto.empty()) {
        return swcu::fail(*l, CUDA_ERROR_INVALID_VALUE, "nothing to link: no input was added");
      }
      std::vector<swcu::PtxInput> inputs = l->ptx;
      if (!l->lto.empty()) {
        const std::vector<swcu::LtoInput> lto = l->lto;
        const std::size_t position = l->lto_position;
        std::string text;
        std::string why;
        const swcu::NvJitLink* const lib = swcu::nvjitlink(why);
        if (lib == nullptr) return swcu::fail(*l, CUDA_ERROR_NOT_SUPPORTED, why);
        ++l->linking;
        lock.unlock();
        bool ok = false;
        try {
          ok = swcu::lto_to_ptx(lib, lto, text, why);
        } catch (...) {
          lock.lock();
          throw;
        }
        lock.lock();
        l = swcu::find_link(s, state);
        if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // destroyed meanwhile
        --l->linking;
        if (!ok) return swcu::fail(*l, CUDA_ERROR_INVALID_IMAGE, why);
        std::string names;
        for (const auto& in : lto) names += (names.empty() ? "" : ", ") + in.name;
        inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(position),
                      swcu::PtxInput{"LTO-IR (" + names + ") through nvJitLink", std::move(text)});
      }
      if (!l->completed) {  // (another thread may have completed it meanwhile)
        swcu::Merged merged = swcu::merge(inputs);
        if (merged.result != CUDA_SUCCESS) {
          for (const std::string& line : merged.errors) swcu::append_line(l->error_log, line);
          swcu::publish_logs(*l);
          return merged.result;
        }
        if (const CUresult r = swcu::check_ptx(*l, "the linked PTX", merged.text)) return r;
        l->image = std::move(merged.text);
        l->completed = true;
        swcu::append_line(l->info_log, "linked " + std::to_string(inputs.size()) +
                                           " PTX input(s) into one PTX module (" +
                                           std::to_string(l->image.size()) + " bytes, " +
                                           std::to_string(merged.resolved) +
                                           " external declaration(s) resolved)");
        swcu::publish_logs(*l);
      }
    }
    *cubinOut = l->image.data();
    if (sizeOut != nullptr) *sizeOut = l->image.size() + 1;  // with the NUL
    return CUDA_SUCCESS;
  });
}

CUresult cuLinkDestroy(CUlinkState state) {
  return call(Sym::cuLinkDestroy, [=](State& s) -> CUresult {
    if (swcu::find_link(s, state) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    s.destroy(SWCU_LINK_STATE, state);
    return CUDA_SUCCESS;
  });
}

// The CUDA 5.5 ABI: the same parameters (cuda.h declares both alike).
CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
                      CUlinkState* stateOut) {
  return swcu::link_create(Sym::cuLinkCreate, numOptions, options, optionValues, stateOut);
}

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size,
                       const char* name, unsigned int numOptions, CUjit_option* options,
                       void** optionValues) {
  return swcu::link_add_data(Sym::cuLinkAddData, state, type, data, size, name, numOptions, options,
                             optionValues);
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path,
                       unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return swcu::link_add_file(Sym::cuLinkAddFile, state, type, path, numOptions, options,
                             optionValues);
}

}  // extern "C"
