// nvJitLink, loaded on first use (nvjitlink.hpp).
#include "module/nvjitlink.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "core/config.hpp"
#include "module/image.hpp"

namespace swcu {
namespace {

constexpr int kNvJitLinkInputAny = 10;  // NVJITLINK_INPUT_ANY

// A function of the library: the versioned names of CUDA 13 and 12 first, then the plain one.
template <class F>
bool resolve(void* lib, const char* base, F& out) {
  const std::string names[] = {std::string("__") + base + "_13_0",
                               std::string("__") + base + "_12_0", base};
  for (const std::string& name : names) {
    if (void* p = dlsym(lib, name.c_str())) {
      out = reinterpret_cast<F>(p);
      return true;
    }
  }
  return false;
}

// The loaded library, or nullptr with why (a failed search is retried on the next use).
}  // namespace

const NvJitLink* nvjitlink(std::string& why) {
  static std::optional<NvJitLink> loaded;  // used under the state lock
  if (loaded) return &*loaded;
  std::vector<std::string> candidates;
  if (std::optional<std::string> env = setting("SWCUDA_NVJITLINK")) {  // trimmed; empty is unset
    candidates.push_back(std::move(*env));
  } else {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* dir = std::getenv(var); dir != nullptr && *dir != '\0') {
        candidates.push_back(std::string(dir) + "/lib64/libnvJitLink.so");
      }
    }
    candidates.insert(candidates.end(),
                      {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"});
  }
  for (const std::string& path : candidates) {
    void* const lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) continue;
    NvJitLink f;
    f.path = path;
    if (resolve(lib, "nvJitLinkCreate", f.create) && resolve(lib, "nvJitLinkDestroy", f.destroy) &&
        resolve(lib, "nvJitLinkAddData", f.add_data) &&
        resolve(lib, "nvJitLinkComplete", f.complete) &&
        resolve(lib, "nvJitLinkGetLinkedPtxSize", f.ptx_size) &&
        resolve(lib, "nvJitLinkGetLinkedPtx", f.ptx) &&
        resolve(lib, "nvJitLinkGetErrorLogSize", f.error_log_size) &&
        resolve(lib, "nvJitLinkGetErrorLog", f.error_log)) {
      loaded = std::move(f);  // never unloaded
      return &*loaded;
    }
    dlclose(lib);
  }
  why = "LTO-IR needs nvJitLink to become PTX, and no libnvJitLink.so was found (tried";
  for (const std::string& path : candidates) why += " " + path;
  why += "; set SWCUDA_NVJITLINK or CUDA_HOME)";
  return nullptr;
}

// Links every LTO-IR input into PTX; false with the reason.
// Runs without the state lock: `lib` was loaded under it (and is never unloaded).
bool lto_to_ptx(const NvJitLink* lib, const std::vector<LtoInput>& inputs, std::string& ptx,
                std::string& why) {
  const std::string arch = "-arch=sm_" + std::to_string(kDeviceArch);
  const char* options[] = {arch.c_str(), "-lto", "-ptx"};
  NvJitLink::Handle h = nullptr;
  if (const int r = lib->create(&h, 3, options); r != 0) {
    why = "nvJitLinkCreate failed (nvJitLinkResult " + std::to_string(r) + ")";
    return false;
  }
  const auto log = [&]() {
    std::size_t n = 0;
    std::string text;
    if (lib->error_log_size(h, &n) == 0 && n > 1) {
      text.assign(n, '\0');
      if (lib->error_log(h, text.data()) != 0) text.clear();
      text.resize(strnlen(text.c_str(), text.size()));
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  };
  bool ok = true;
  for (const LtoInput& in : inputs) {
    if (const int r =
            lib->add_data(h, kNvJitLinkInputAny, in.bytes.data(), in.bytes.size(), in.name.c_str());
        r != 0) {
      why = in.name + ": nvJitLink refused the LTO-IR (nvJitLinkResult " + std::to_string(r) +
            ") " + log();
      ok = false;
      break;
    }
  }
  if (ok) {
    if (const int r = lib->complete(h); r != 0) {
      why = "nvJitLink could not link the LTO-IR (nvJitLinkResult " + std::to_string(r) + ") " +
            log();
      ok = false;
    }
  }
  std::size_t size = 0;
  if (ok && lib->ptx_size(h, &size) == 0 && size > 0) {
    ptx.assign(size, '\0');
    if (lib->ptx(h, ptx.data()) != 0) ok = false;
    ptx.resize(strnlen(ptx.c_str(), ptx.size()));
  } else if (ok) {
    ok = false;
  }
  if (!ok && why.empty()) why = "nvJitLink produced no PTX";
  lib->destroy(&h);
  return ok;
}
}  // namespace swcu
