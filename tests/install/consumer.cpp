// Uses the installed cuwrap with CUWRAP_DRIVER=software: the package must find its software
// driver by itself (the build tree is gone, the prefix moved), load the kernels that
// cuwrap_compile_kernels() made in every form, run the PTX and the fatbin (SASS + PTX), compile
// a kernel at run time with cuwrap::rtc and run it, call into cuwrap::runtime, and reach the
// driver's control table through the swcuda headers.
#include <dlfcn.h>
#include <swcuda/control.h>

#include <cstdio>
#include <cstring>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/rtc.hpp>
#include <cuwrap/runtime.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

const swcu_control* control_table(const std::string& driver) {
  void* library = dlopen(driver.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return nullptr;
  using get_export_table = CUresult (*)(const void**, const CUuuid*);
  const auto get = reinterpret_cast<get_export_table>(dlsym(library, "cuGetExportTable"));
  const void* table = nullptr;
  const bool found = get != nullptr && get(&table, &SWCU_CONTROL_TABLE_ID) == CUDA_SUCCESS;
  dlclose(library);
  return found ? static_cast<const swcu_control*>(table) : nullptr;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "consumer: %s\n", why.c_str());
  return 1;
}

// A template kernel compiled at run time; the name expression picks the instantiation.
constexpr std::string_view add_source = R"(
template <class T> __global__ void add(T* x, T value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += value;
}
)";

// cuwrap::rtc: NVRTC compiles add<float> to PTX, the software driver runs it. Returns an error
// message, or "" when every element is right.
std::string run_compiled_kernel(const cuwrap::primary_context& ctx) {
  cuwrap::rtc::program prog{add_source, "add.cu"};
  prog.add_name_expression("add<float>");
  const auto compiled = prog.compile({.arch = "compute_90"});
  const auto mod = cuwrap::module::load(ctx, compiled.ptx());
  const auto add = mod.kernel<void(float*, float, int)>(compiled.lowered_name("add<float>"));
  std::vector<float> host(300, 1.0f);
  cuwrap::device_buffer<float> x{ctx, host.size()};
  cuwrap::copy(x, host);
  cuwrap::stream s{ctx};
  s.launch(add, cuwrap::launch_config::linear(host.size(), 64), x, 0.5f,
           static_cast<int>(host.size()));
  s.synchronize();
  cuwrap::copy(host, x);
  for (const float v : host) {
    if (v != 1.5f) return "rtc: add<float> wrote " + std::to_string(v) + ", not 1.5";
  }
  return {};
}

void host_function(float*, int) {}

// cuwrap::runtime. cudart cannot start on the software driver (it needs interfaces private to
// NVIDIA's driver; its initialization fails there), so this uses what needs no started runtime
// and checks that what needs one fails cleanly, as a cuwrap::error: cudaRuntimeGetVersion
// answers without a driver; kernel_of() (compiled into libcuwrap_runtime) asks cudart for the
// kernel behind a function, which a host function is not, on any driver. Returns an error
// message, or "".
std::string use_runtime() {
  int version = 0;
  cuwrap::check(cudaRuntimeGetVersion(&version), "cudaRuntimeGetVersion");
  if (version < 12000) return "runtime: cudaRuntimeGetVersion said " + std::to_string(version);
  try {
    (void)cuwrap::runtime::kernel_of(&host_function);
    return "runtime: kernel_of took a host function";
  } catch (const cuwrap::error& e) {
    if (e.code().category() != cuwrap::runtime_category()) {
      return std::string{"runtime: not a runtime error: "} + e.what();
    }
    if (std::strcmp(e.api(), "cudaGetFuncBySymbol") != 0 ||
        std::string_view{e.where().file_name()}.find("consumer.cpp") == std::string_view::npos) {
      return std::string{"runtime: the error does not name cudaGetFuncBySymbol at this file: "} +
             e.what();
    }
  }
  return {};
}

}  // namespace

int main() try {
  const cuwrap::device dev = cuwrap::device::get(0);
  if (cuwrap::driver_path() != SWDRIVER) {
    return fail("loaded '" + cuwrap::driver_path() + "', not the package's driver '" SWDRIVER "'");
  }
  cuwrap::primary_context ctx{dev};
  cuwrap::scoped_current_context current{ctx};
  // The cubin holds SASS only, which the software driver loads but does not run.
  const auto cubin = cuwrap::module::load_file(ctx, std::string{KERNELS_DIR} + "/scale.cubin");
  if (cubin.kernel<void(float*, float, int)>("scale").params().size() != 3) {
    return fail("the cubin's kernel does not have 3 parameters");
  }
  for (const char* form : {"ptx", "fatbin"}) {
    const auto mod = cuwrap::module::load_file(ctx, std::string{KERNELS_DIR} + "/scale." + form);
    const auto scale = mod.kernel<void(float*, float, int)>("scale");
    std::vector<float> host(1000, 2.0f);
    cuwrap::device_buffer<float> device{ctx, host.size()};
    cuwrap::copy(device, std::span<const float>{host});
    cuwrap::stream s{ctx};
    const int n = static_cast<int>(host.size());
    s.launch(scale, cuwrap::launch_config::linear(host.size(), 128), device.data(), 3.0f, n);
    s.synchronize();
    cuwrap::copy(std::span<float>{host}, device);
    for (const float x : host) {
      if (x != 6.0f) return fail(std::string{form} + ": wrong result " + std::to_string(x));
    }
  }
  if (const auto error = run_compiled_kernel(ctx); !error.empty()) return fail(error);
  if (const auto error = use_runtime(); !error.empty()) return fail(error);
  const swcu_control* control = control_table(cuwrap::driver_path());
  if (control == nullptr) return fail("no control table in " + cuwrap::driver_path());
  if (control->live_handles(SWCU_MODULE) != 1) return fail("not just the cubin is loaded");
  std::printf(
      "consumer: loaded scale from PTX, cubin and fatbin, compiled add<float> with "
      "NVRTC, ran both on %s (%s); cudart's kernel lookup failed cleanly\n",
      dev.name().c_str(), cuwrap::driver_path().c_str());
  return 0;
} catch (const std::exception& e) {
  return fail(e.what());
}
