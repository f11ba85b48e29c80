// Uses the installed cuwrap with CUWRAP_DRIVER=software: the package must find its software
// driver by itself (the build tree is gone, the prefix moved), load the kernels that
// cuwrap_compile_kernels() made in every form, run the PTX and the fatbin (SASS + PTX), and reach
// the driver's control table through the swcuda headers.
#include <dlfcn.h>
#include <swcuda/control.h>

#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
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
  const swcu_control* control = control_table(cuwrap::driver_path());
  if (control == nullptr) return fail("no control table in " + cuwrap::driver_path());
  if (control->live_handles(SWCU_MODULE) != 1) return fail("not just the cubin is loaded");
  std::printf("consumer: loaded scale from PTX, cubin and fatbin, ran it on %s (%s)\n",
              dev.name().c_str(), cuwrap::driver_path().c_str());
  return 0;
} catch (const std::exception& e) {
  return fail(e.what());
}
