// The software driver's PTX interpreter, timed (docs/performance.md, "PTX interpreter speed"):
// the kernels of bench/kernels/interp.cu, compiled to PTX by nvcc at build time, launched on the
// software driver (CUWRAP_DRIVER=software unless the variable names another library). Each
// result is checked once before the timing. By default the interpreter gets one worker
// (SWCUDA_WORKERS=1 unless the variable is set): it runs on the calling thread, and the rates are
// per CPU second (Google Benchmark's default), as the rest of the software driver's figures are.
// With more workers the rates are per wall-clock second and the CPU time is the process's (all
// workers). Counters:
//   elements/s        output elements (vector add, matmul) or input elements (reduction) per second
//   thread_insts/s    dynamic PTX instructions executed by all threads per second
//
// Thread-instructions are counted analytically from the nvcc 13.0 PTX of interp.cu (-O3,
// compute_90), instruction lines between the entry's braces (not directives or labels):
//   interp_vector_add   22 per thread, every thread in range (n a multiple of the block): 10
//                       before the range check's branch, 11 in the body, ret.
//   interp_matmul16     44 + 59 * (n / 16) per thread: 15 before the n < 1 branch, 22 of loop
//                       setup, 59 per 16-wide tile (2 global loads and shared stores, 2 bar.sync,
//                       16 x (2 ld.shared + fma), 5 of loop control), 7 after the loop.
//   interp_warp_reduce  31 per thread (load, 5 x shfl.down + add, the lane test's branch, ret)
//                       and 2 more (cvta, atom.add) per warp's lane 0.
// Static instruction counts (22, 103, 33) are checked against the PTX loaded, so a different
// nvcc that changes the code makes the benchmark fail instead of reporting wrong rates.
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <swcuda/control.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuwrap/cuwrap.hpp>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using benchmark::State;

constexpr unsigned kElements = 1u << 20;  // vector add and reduction
constexpr unsigned kBlock = 256;
constexpr int kMatmulN = 256;  // 65,536 outputs: 1M outputs (n = 1024) take minutes per launch

constexpr double vector_add_insts = 22;
constexpr double matmul_insts(int n) { return 44 + 59.0 * (n / 16); }
constexpr double warp_reduce_insts = 31 + 2.0 / 32;

std::string read(const std::string& path) {
  std::ifstream in{path};
  if (!in) throw std::runtime_error{"cannot read " + path};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Instruction lines of entry `name` in nvcc's PTX: lines ending in ';' inside its braces that
/// are not directives (.reg, .shared, ...).
int static_instructions(const std::string& ptx, const std::string& name) {
  const std::size_t at = ptx.find(".entry " + name + "(");
  if (at == std::string::npos) throw std::runtime_error{"no entry " + name + " in the PTX"};
  std::size_t pos = ptx.find("\n{", at);
  int count = 0;
  while (pos != std::string::npos) {
    const std::size_t begin = pos + 1, end = ptx.find('\n', begin);
    std::string_view line{ptx.data() + begin,
                          (end == std::string::npos ? ptx.size() : end) - begin};
    if (line == "}") break;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (!line.empty() && line.back() == ';' && line.front() != '.' && line.front() != '/') ++count;
    pos = end;
  }
  return count;
}

struct interp_fixture {
  explicit interp_fixture(const std::string& kernels_dir) {
    const void* table = nullptr;
    if (cuwrap::detail::driver().cuGetExportTable(&table, &SWCU_CONTROL_TABLE_ID) == CUDA_SUCCESS) {
      control = static_cast<const swcu_control*>(table);
    }
    if (control == nullptr) throw std::runtime_error{"not the software driver"};
    const std::string ptx = read(kernels_dir + "/interp.ptx");
    for (const auto& [name, expected] :
         {std::pair{"interp_vector_add", 22}, std::pair{"interp_matmul16", 103},
          std::pair{"interp_warp_reduce", 33}}) {
      const int got = static_instructions(ptx, name);
      if (got != expected) {
        throw std::runtime_error{std::string{name} + " has " + std::to_string(got) +
                                 " PTX instructions, not " + std::to_string(expected) +
                                 ": update the counts in bench/interpreter.cpp"};
      }
    }
    mod.emplace(cuwrap::module::load(ctx, ptx));
  }

  void clear_launch_log() const {
    if (control->struct_size >= offsetof(swcu_control, clear_launch_log) + sizeof(void*)) {
      control->clear_launch_log();
    }
  }

  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  const swcu_control* control = nullptr;
  std::optional<cuwrap::module> mod;
};

interp_fixture* fx = nullptr;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error{std::string{"wrong result: "} + what};
}

template <class F>
void run(State& st, F body) {
  try {
    body();
    fx->clear_launch_log();
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
  }
}

void set_rates(State& st, double elements, double insts_per_thread, double threads) {
  const auto iterations = static_cast<double>(st.iterations());
  st.counters["elements/s"] =
      benchmark::Counter(elements * iterations, benchmark::Counter::kIsRate);
  st.counters["thread_insts/s"] =
      benchmark::Counter(insts_per_thread * threads * iterations, benchmark::Counter::kIsRate);
}

void vector_add(State& st) {
  run(st, [&] {
    const auto k =
        fx->mod->kernel<void(const float*, const float*, float*, int)>("interp_vector_add");
    std::vector<float> a(kElements), b(kElements), c(kElements);
    for (unsigned i = 0; i < kElements; ++i) {
      a[i] = static_cast<float>(i % 1000);
      b[i] = 0.5f * static_cast<float>(i % 7);
    }
    cuwrap::device_buffer<float> da{fx->ctx, kElements}, db{fx->ctx, kElements},
        dc{fx->ctx, kElements};
    cuwrap::copy(fx->s, da, a);
    cuwrap::copy(fx->s, db, b);
    const cuwrap::launch_config cfg{cuwrap::dims{kElements / kBlock}, cuwrap::dims{kBlock}};
    fx->s.launch(k, cfg, da.data(), db.data(), dc.data(), static_cast<int>(kElements));
    cuwrap::copy(fx->s, c, dc);
    fx->s.synchronize();
    for (unsigned i = 0; i < kElements; ++i) check(c[i] == a[i] + b[i], "vector add");
    for (auto _ : st) {
      fx->s.launch(k, cfg, da.data(), db.data(), dc.data(), static_cast<int>(kElements));
      fx->s.synchronize();
    }
    set_rates(st, kElements, vector_add_insts, kElements);
  });
}

void matmul16(State& st) {
  run(st, [&] {
    const int n = kMatmulN;
    const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    const auto k =
        fx->mod->kernel<void(const float*, const float*, float*, int)>("interp_matmul16");
    std::vector<float> a(nn), b(nn), c(nn);
    for (std::size_t i = 0; i < nn; ++i) {
      a[i] = static_cast<float>(i % 7) * 0.5f;
      b[i] = static_cast<float>(i % 5) * 0.25f;
    }
    cuwrap::device_buffer<float> da{fx->ctx, nn}, db{fx->ctx, nn}, dc{fx->ctx, nn};
    cuwrap::copy(fx->s, da, a);
    cuwrap::copy(fx->s, db, b);
    const auto tiles = static_cast<unsigned>(n / 16);
    const cuwrap::launch_config cfg{cuwrap::dims{tiles, tiles}, cuwrap::dims{16, 16}};
    fx->s.launch(k, cfg, da.data(), db.data(), dc.data(), n);
    cuwrap::copy(fx->s, c, dc);
    fx->s.synchronize();
    for (std::size_t row = 0; row < nn / static_cast<std::size_t>(n); row += 37) {
      for (std::size_t col = 0; col < static_cast<std::size_t>(n); col += 13) {
        double expected = 0;
        for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
          expected += static_cast<double>(a[row * static_cast<std::size_t>(n) + i]) *
                      static_cast<double>(b[i * static_cast<std::size_t>(n) + col]);
        }
        const double got = c[row * static_cast<std::size_t>(n) + col];
        check(std::fabs(got - expected) <= 1e-3 * std::fabs(expected) + 1e-3, "matmul");
      }
    }
    for (auto _ : st) {
      fx->s.launch(k, cfg, da.data(), db.data(), dc.data(), n);
      fx->s.synchronize();
    }
    set_rates(st, static_cast<double>(nn), matmul_insts(n), static_cast<double>(nn));
  });
}

void warp_reduce(State& st) {
  run(st, [&] {
    const auto k = fx->mod->kernel<void(const int*, int*)>("interp_warp_reduce");
    std::vector<int> in(kElements);
    long long expected = 0;
    for (unsigned i = 0; i < kElements; ++i) {
      in[i] = static_cast<int>(i % 101) - 50;
      expected += in[i];
    }
    cuwrap::device_buffer<int> din{fx->ctx, kElements}, dout{fx->ctx, 1};
    cuwrap::copy(fx->s, din, in);
    cuwrap::fill(fx->s, dout, 0);
    const cuwrap::launch_config cfg{cuwrap::dims{kElements / kBlock}, cuwrap::dims{kBlock}};
    fx->s.launch(k, cfg, din.data(), dout.data());
    std::vector<int> out(1);
    cuwrap::copy(fx->s, out, dout);
    fx->s.synchronize();
    check(out[0] == expected, "warp reduce");
    for (auto _ : st) {
      fx->s.launch(k, cfg, din.data(), dout.data());
      fx->s.synchronize();
    }
    set_rates(st, kElements, warp_reduce_insts, kElements);
  });
}

}  // namespace

int main(int argc, char** argv) {
  // The interpreter is the software driver's; another library can still be named.
  if (const char* d = std::getenv("CUWRAP_DRIVER"); d == nullptr || *d == '\0') {
    setenv("CUWRAP_DRIVER", "software", 1);
  }
  // One worker unless asked: per-core rates. With several, the launch runs on threads of the
  // driver's own, which the benchmark thread's CPU time does not see.
  if (const char* w = std::getenv("SWCUDA_WORKERS"); w == nullptr || *w == '\0') {
    setenv("SWCUDA_WORKERS", "1", 1);
  }
  const bool parallel = std::string_view{std::getenv("SWCUDA_WORKERS")} != "1";
  benchmark::Initialize(&argc, argv);
  try {
    interp_fixture f{CUWRAP_BENCH_KERNELS_DIR};
    fx = &f;
    for (auto* b : {benchmark::RegisterBenchmark("interp/vector_add/1M", vector_add),
                    benchmark::RegisterBenchmark("interp/matmul16/256x256", matmul16),
                    benchmark::RegisterBenchmark("interp/warp_reduce/1M", warp_reduce)}) {
      b->Unit(benchmark::kMillisecond);
      if (parallel) b->MeasureProcessCPUTime()->UseRealTime();
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    fx = nullptr;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuwrap_bench_interpreter: %s\n", e.what());
    return 1;
  }
  return 0;
}
