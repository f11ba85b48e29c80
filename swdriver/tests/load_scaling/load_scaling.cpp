// The program behind swdriver.perf "loading PTX is linear in its kernels" (load_scaling.py):
// loads PTX modules of N and 4N kernels through cuModuleLoadData and cuLibraryLoadData of the
// software driver (dlopen'ed from the path given), each load and unload inside
// measure_load(), the function callgrind counts. Quadratic work per kernel shows as 16 times
// the instructions for 4 times the kernels; linear work as 4.
//   load_scaling DRIVER N
#include <cuda.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

template <class F>
F lookup(void* driver, const char* name) {
  void* const symbol = dlsym(driver, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "load_scaling: the driver has no %s\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(symbol);  // NOLINT: dlsym's result is the function
}

struct Driver {
  void* lib;
  decltype(&cuModuleLoadData) module_load;
  decltype(&cuModuleUnload) module_unload;
  decltype(&cuLibraryLoadData) library_load;
  decltype(&cuLibraryUnload) library_unload;
};

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "load_scaling: %s failed (%d)\n", what, static_cast<int>(r));
    std::exit(1);
  }
}

// A PTX module of `kernels` kernels, each with a parameter and a global of its own.
std::string module_text(unsigned kernels) {
  std::string text = ".version 8.0\n.target sm_90\n.address_size 64\n";
  for (unsigned i = 0; i < kernels; ++i) {
    const std::string n = std::to_string(i);
    text += ".global .u32 g" + n + ";\n.visible .entry k" + n + "(.param .u64 p) { ret; }\n";
  }
  return text;
}

}  // namespace

// What callgrind counts: one module and one library load and unload of `text`.
extern "C" [[gnu::noinline]] void measure_load(const Driver& d, const std::string& text) {
  CUmodule m = nullptr;
  check(d.module_load(&m, text.c_str()), "cuModuleLoadData");
  check(d.module_unload(m), "cuModuleUnload");
  CUlibrary lib = nullptr;
  check(d.library_load(&lib, text.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cuLibraryLoadData");
  check(d.library_unload(lib), "cuLibraryUnload");
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: load_scaling DRIVER N\n");
    return 2;
  }
  void* const lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "load_scaling: %s\n", dlerror());
    return 2;
  }
  const unsigned n = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
  check(lookup<decltype(&cuInit)>(lib, "cuInit")(0), "cuInit");
  CUdevice dev = 0;
  check(lookup<decltype(&cuDeviceGet)>(lib, "cuDeviceGet")(&dev, 0), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(lookup<decltype(&cuDevicePrimaryCtxRetain)>(lib, "cuDevicePrimaryCtxRetain")(&ctx, dev),
        "cuDevicePrimaryCtxRetain");
  check(lookup<decltype(&cuCtxSetCurrent)>(lib, "cuCtxSetCurrent")(ctx), "cuCtxSetCurrent");
  const Driver d{lib, lookup<decltype(&cuModuleLoadData)>(lib, "cuModuleLoadData"),
                 lookup<decltype(&cuModuleUnload)>(lib, "cuModuleUnload"),
                 lookup<decltype(&cuLibraryLoadData)>(lib, "cuLibraryLoadData"),
                 lookup<decltype(&cuLibraryUnload)>(lib, "cuLibraryUnload")};
  const std::string small = module_text(n);
  const std::string large = module_text(4 * n);
  measure_load(d, small);  // warms the driver up (first-use work is not the loader's)
  measure_load(d, small);
  measure_load(d, large);
  std::printf("loaded %u and %u kernels\n", n, 4 * n);
  return 0;
}
