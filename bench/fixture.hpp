// What every benchmark uses, made once: a context made current (so raw calls work), a stream,
// an event, device and pinned memory, the test kernels and a one-node graph. Kernels and graphs
// are optional: a driver that cannot load modules, launch or run graphs leaves them empty and
// says why in the *_missing strings.
#pragma once

#include <cuda.h>
#include <swcuda/control.h>

#include <cstddef>
#include <cuwrap/cuwrap.hpp>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cuwrap_bench {

/// tests/kernels/kernels.cu: sixteen(int a0, ..., int a14, int* out).
using sixteen_fn = void(int, int, int, int, int, int, int, int, int, int, int, int, int, int, int,
                        int*);

/// Elements of the device buffer that memset_async fills.
inline constexpr std::size_t elements = 256;

struct fixture {
  explicit fixture(const std::string& kernels_dir) {
    const void* table = nullptr;
    if (cuwrap::detail::driver().cuGetExportTable(&table, &SWCU_CONTROL_TABLE_ID) == CUDA_SUCCESS) {
      control = static_cast<const swcu_control*>(table);
    }
    try {
      ptx = read(kernels_dir + "/kernels.ptx");
      mod = cuwrap::module::load(ctx, ptx);
      k0.emplace(mod->kernel<void()>("no_params"));
      k16.emplace(mod->kernel<sixteen_fn>("sixteen"));
      u0 = mod->kernel("no_params");
      u16 = mod->kernel("sixteen");
      s.launch(*k0, cfg);
      s.synchronize();
    } catch (const std::exception& err) {
      kernels_missing = err.what();
    }
    if (kernels_missing.empty()) {
      try {
        s.launch(*k0, cfg_ex);
        s.synchronize();
      } catch (const std::exception& err) {
        launch_ex_missing = err.what();
      }
    } else {
      launch_ex_missing = kernels_missing;
    }
    try {
      cuwrap::graph g{ctx};
      g.add_empty();
      exec.emplace(g.instantiate());
      exec->launch(s);
      s.synchronize();
    } catch (const std::exception& err) {
      graph_missing = err.what();
    }
  }

  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::scoped_current_context current{ctx};  // raw calls need a current context
  cuwrap::stream s{ctx};
  cuwrap::event e{ctx};
  cuwrap::device_buffer<int> d{ctx, elements};
  cuwrap::pinned_buffer<int> h{ctx, 1};
  cuwrap::memory_pool pool{ctx.device()};
  /// Two ranges of managed memory, for the batch prefetch.
  cuwrap::managed_buffer<int> managed{ctx, 2 * elements};
  cuwrap::launch_config cfg{cuwrap::dims{1}, cuwrap::dims{32}};
  /// With one attribute: a priority within every device's range (0 to -5 on an H100).
  cuwrap::launch_config cfg_ex =
      cuwrap::launch_config{cuwrap::dims{1}, cuwrap::dims{32}}.with_priority(-1);

  std::string ptx;
  std::optional<cuwrap::module> mod;
  std::optional<cuwrap::typed_kernel<void()>> k0;
  std::optional<cuwrap::typed_kernel<sixteen_fn>> k16;
  std::optional<cuwrap::kernel> u0;
  std::optional<cuwrap::kernel> u16;
  std::optional<cuwrap::graph_exec> exec;
  std::string kernels_missing;            ///< why there are no kernels (or launches fail)
  std::string launch_ex_missing;          ///< why a launch with attributes fails
  std::string graph_missing;              ///< why there is no graph (or it cannot be launched)
  const swcu_control* control = nullptr;  ///< the software driver's control table, if it is one

  /// The software driver records every launch; forgetting them keeps millions of benchmark
  /// launches from piling up (and from slowing down whatever runs later). No-op on a GPU.
  void clear_launch_log() const {
    if (control != nullptr &&
        control->struct_size >= offsetof(swcu_control, clear_launch_log) + sizeof(void*)) {
      control->clear_launch_log();
    }
  }

 private:
  static std::string read(const std::string& path) {
    std::ifstream in{path};
    if (!in) {
      throw std::runtime_error{"cannot read " + path};
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

}  // namespace cuwrap_bench
