// The Google Benchmark suite (docs/performance.md): every operation twice, raw (plain calls
// through the loaded driver's entry points, results checked as any correct program does) and
// through cuwrap, named raw/<op> and cuwrap/<op> so that bench/report.py pairs them. Runs on a GPU,
// or on the software driver with CUWRAP_DRIVER=software.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace {

using benchmark::State;

constexpr std::size_t alloc_bytes = std::size_t{1} << 20;

cuwrap_bench::fixture* fx = nullptr;
const cuwrap::detail::driver_table* table = nullptr;

[[noreturn, gnu::noinline, gnu::cold]] void fail(const char* api, CUresult r) {
  throw std::runtime_error{
      std::string{api} + " failed: " + std::string{cuwrap::error_name(cuwrap::make_error_code(r))}};
}
inline void ok(CUresult r, const char* api) {
  if (r != CUDA_SUCCESS) [[unlikely]] {
    fail(api, r);
  }
}

/// Runs the benchmark loop `body` unless `missing` says why it cannot run here; an exception
/// (cuwrap's or the raw side's) ends the benchmark with its message.
template <class F>
void run(State& st, const std::string& missing, F body) {
  if (!missing.empty()) {
    st.SkipWithError(missing.c_str());
    return;
  }
  fx->clear_launch_log();
  try {
    body();
    fx->s.synchronize();
    fx->clear_launch_log();
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
  }
}
const std::string none;

void raw_event_record(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) ok(drv.cuEventRecord(fx->e.get(), fx->s.get()), "cuEventRecord");
  });
}
void cuwrap_event_record(State& st) {
  run(st, none, [&] {
    for (auto _ : st) fx->e.record(fx->s);
  });
}

void raw_event_query(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      const CUresult r = drv.cuEventQuery(fx->e.get());
      if (r != CUDA_ERROR_NOT_READY) ok(r, "cuEventQuery");
      benchmark::DoNotOptimize(r);
    }
  });
}
void cuwrap_event_query(State& st) {
  run(st, none, [&] {
    for (auto _ : st) benchmark::DoNotOptimize(fx->e.is_done());
  });
}

void raw_stream_query(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      const CUresult r = drv.cuStreamQuery(fx->s.get());
      if (r != CUDA_ERROR_NOT_READY) ok(r, "cuStreamQuery");
      benchmark::DoNotOptimize(r);
    }
  });
}
void cuwrap_stream_query(State& st) {
  run(st, none, [&] {
    for (auto _ : st) benchmark::DoNotOptimize(fx->s.is_done());
  });
}

void raw_stream_wait_event(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) ok(drv.cuStreamWaitEvent(fx->s.get(), fx->e.get(), 0), "cuStreamWaitEvent");
  });
}
void cuwrap_stream_wait_event(State& st) {
  run(st, none, [&] {
    for (auto _ : st) fx->s.wait(fx->e);
  });
}

void raw_stream_write_value(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      ok(drv.cuStreamWriteValue32(fx->s.get(), fx->d.address(), 0, 0), "cuStreamWriteValue32");
    }
  });
}
void cuwrap_stream_write_value(State& st) {
  run(st, none, [&] {
    const auto word = cuwrap::device_span<std::uint32_t>::from_address(fx->d.address(), 1);
    for (auto _ : st) fx->s.write_value(word, 0u);
  });
}

void raw_event_create_destroy(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      CUevent e{};
      ok(drv.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
      ok(drv.cuEventDestroy(e), "cuEventDestroy");
    }
  });
}
void cuwrap_event_create_destroy(State& st) {
  run(st, none, [&] {
    for (auto _ : st) cuwrap::event e{fx->ctx};
  });
}

void raw_stream_create_destroy(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      CUstream s{};
      ok(drv.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      ok(drv.cuStreamDestroy(s), "cuStreamDestroy");
    }
  });
}
void cuwrap_stream_create_destroy(State& st) {
  run(st, none, [&] {
    for (auto _ : st) cuwrap::stream s{fx->ctx};
  });
}

void raw_memcpy_async_4_bytes(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    const auto src = reinterpret_cast<CUdeviceptr>(fx->h.data());
    for (auto _ : st) {
      ok(drv.cuMemcpyAsync(fx->d.address(), src, sizeof(int), fx->s.get()), "cuMemcpyAsync");
    }
  });
}
void cuwrap_memcpy_async_4_bytes(State& st) {
  run(st, none, [&] {
    for (auto _ : st) cuwrap::copy(fx->s, fx->d.span().first(1), fx->h);
  });
}

void raw_memset_async(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      ok(drv.cuMemsetD32Async(fx->d.address(), 7, fx->d.size(), fx->s.get()), "cuMemsetD32Async");
    }
  });
}
void cuwrap_memset_async(State& st) {
  run(st, none, [&] {
    for (auto _ : st) cuwrap::fill(fx->s, fx->d, 7);
  });
}

void raw_device_alloc_free(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      CUdeviceptr p{};
      ok(drv.cuMemAlloc(&p, alloc_bytes), "cuMemAlloc");
      ok(drv.cuMemFree(p), "cuMemFree");
    }
  });
}
void cuwrap_device_alloc_free(State& st) {
  run(st, none, [&] {
    for (auto _ : st) cuwrap::device_buffer<std::byte> b{fx->ctx, alloc_bytes};
  });
}

void raw_pool_alloc_free_async(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      CUdeviceptr p{};
      ok(drv.cuMemAllocFromPoolAsync(&p, alloc_bytes, fx->pool.get(), fx->s.get()),
         "cuMemAllocFromPoolAsync");
      ok(drv.cuMemFreeAsync(p, fx->s.get()), "cuMemFreeAsync");
    }
  });
}
void cuwrap_pool_alloc_free_async(State& st) {
  run(st, none, [&] {
    for (auto _ : st) benchmark::DoNotOptimize(fx->pool.allocate<std::byte>(fx->s, alloc_bytes));
  });
}

void raw_prefetch_batch(State& st) {
  run(st, none, [&] {
    const auto& drv = *table;
    const std::size_t half = fx->managed.size_bytes() / 2;
    CUdeviceptr dptrs[2] = {fx->managed.address(), fx->managed.address() + half};
    std::size_t sizes[2] = {half, half};
    CUmemLocation to{CU_MEM_LOCATION_TYPE_DEVICE, 0};
    std::size_t first = 0;
    for (auto _ : st) {
      ok(drv.cuMemPrefetchBatchAsync(dptrs, sizes, 2, &to, &first, 1, 0, fx->s.get()),
         "cuMemPrefetchBatchAsync");
    }
  });
}
void cuwrap_prefetch_batch(State& st) {
  run(st, none, [&] {
    const auto span = fx->managed.span();
    const cuwrap::managed_range ranges[] = {span.first(span.size() / 2),
                                            span.last(span.size() / 2)};
    const auto to = cuwrap::memory_location::on(cuwrap::device::get(0));
    for (auto _ : st) cuwrap::prefetch(fx->s, ranges, to);
  });
}

void raw_launch_empty_kernel(State& st) {
  run(st, fx->kernels_missing, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      ok(drv.cuLaunchKernel(fx->k0->get(), 1, 1, 1, 32, 1, 1, 0, fx->s.get(), nullptr, nullptr),
         "cuLaunchKernel");
    }
  });
}
void cuwrap_launch_empty_kernel(State& st) {
  run(st, fx->kernels_missing, [&] {
    for (auto _ : st) fx->s.launch(*fx->k0, fx->cfg);
  });
}

void raw_launch_16_args(State& st) {
  run(st, fx->kernels_missing, [&] {
    const auto& drv = *table;
    int i = 0;
    for (auto _ : st) {
      int a[15] = {++i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
      int* out = fx->d.data();
      void* params[] = {&a[0], &a[1], &a[2],  &a[3],  &a[4],  &a[5],  &a[6],  &a[7],
                        &a[8], &a[9], &a[10], &a[11], &a[12], &a[13], &a[14], &out};
      ok(drv.cuLaunchKernel(fx->k16->get(), 1, 1, 1, 32, 1, 1, 0, fx->s.get(), params, nullptr),
         "cuLaunchKernel");
    }
  });
}
void cuwrap_launch_16_args(State& st) {
  run(st, fx->kernels_missing, [&] {
    int i = 0;
    for (auto _ : st) {
      fx->s.launch(*fx->u16, fx->cfg, ++i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                   fx->d.data());
    }
  });
}
void cuwrap_launch_typed_16_args(State& st) {
  run(st, fx->kernels_missing, [&] {
    int i = 0;
    for (auto _ : st) {
      fx->s.launch(*fx->k16, fx->cfg, ++i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                   fx->d.data());
    }
  });
}

void raw_launch_ex_with_attributes(State& st) {
  run(st, fx->launch_ex_missing, [&] {
    const auto& drv = *table;
    CUlaunchAttribute priority{};
    priority.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    priority.value.priority = -1;
    for (auto _ : st) {
      CUlaunchConfig c{};
      c.gridDimX = c.gridDimY = c.gridDimZ = 1;
      c.blockDimX = 32;
      c.blockDimY = c.blockDimZ = 1;
      c.hStream = fx->s.get();
      c.attrs = &priority;
      c.numAttrs = 1;
      ok(drv.cuLaunchKernelEx(&c, fx->k0->get(), nullptr, nullptr), "cuLaunchKernelEx");
    }
  });
}
void cuwrap_launch_ex_with_attributes(State& st) {
  run(st, fx->launch_ex_missing, [&] {
    for (auto _ : st) fx->s.launch(*fx->k0, fx->cfg_ex);
  });
}

void raw_graph_launch(State& st) {
  run(st, fx->graph_missing, [&] {
    const auto& drv = *table;
    for (auto _ : st) ok(drv.cuGraphLaunch(fx->exec->get(), fx->s.get()), "cuGraphLaunch");
  });
}
void cuwrap_graph_launch(State& st) {
  run(st, fx->graph_missing, [&] {
    for (auto _ : st) fx->exec->launch(fx->s);
  });
}

void raw_module_load_ptx(State& st) {
  run(st, fx->kernels_missing, [&] {
    const auto& drv = *table;
    std::vector<char> info(16385), error(16385);  // the logs cuwrap captures, reused here
    CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {info.data(), reinterpret_cast<void*>(std::uintptr_t{16384}), error.data(),
                      reinterpret_cast<void*>(std::uintptr_t{16384})};
    for (auto _ : st) {
      CUmodule m{};
      ok(drv.cuModuleLoadDataEx(&m, fx->ptx.c_str(), 4, options, values), "cuModuleLoadDataEx");
      ok(drv.cuModuleUnload(m), "cuModuleUnload");
    }
  });
}
void cuwrap_module_load_ptx(State& st) {
  run(st, fx->kernels_missing, [&] {
    for (auto _ : st) benchmark::DoNotOptimize(cuwrap::module::load(fx->ctx, fx->ptx));
  });
}

void raw_kernel_lookup(State& st) {
  run(st, fx->kernels_missing, [&] {
    const auto& drv = *table;
    for (auto _ : st) {
      CUfunction f{};
      ok(drv.cuModuleGetFunction(&f, fx->mod->get(), "sixteen"), "cuModuleGetFunction");
      benchmark::DoNotOptimize(f);
    }
  });
}
void cuwrap_kernel_lookup(State& st) {
  run(st, fx->kernels_missing, [&] {
    for (auto _ : st) benchmark::DoNotOptimize(fx->mod->kernel("sixteen"));
  });
}

using function = void (*)(State&);
void add(const std::string& op, function raw, function wrapped) {
  benchmark::RegisterBenchmark(("raw/" + op).c_str(), raw)->UseRealTime();
  benchmark::RegisterBenchmark(("cuwrap/" + op).c_str(), wrapped)->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  try {
    table = &cuwrap::detail::load_process_driver();
    cuwrap_bench::fixture f{CUWRAP_BENCH_KERNELS_DIR};
    fx = &f;
    const auto& info = cuwrap::detail::driver_info(*table);
    benchmark::AddCustomContext("cuda_driver",
                                info.path + " (" + std::to_string(info.version) + ")");
    benchmark::AddCustomContext("cuda_device", f.ctx.device().name());

    add("launch_empty_kernel", raw_launch_empty_kernel, cuwrap_launch_empty_kernel);
    add("launch_16_args", raw_launch_16_args, cuwrap_launch_16_args);
    add("launch_typed_16_args", raw_launch_16_args, cuwrap_launch_typed_16_args);
    add("launch_ex_with_attributes", raw_launch_ex_with_attributes,
        cuwrap_launch_ex_with_attributes);
    add("event_record", raw_event_record, cuwrap_event_record);
    add("event_query", raw_event_query, cuwrap_event_query);
    add("stream_query", raw_stream_query, cuwrap_stream_query);
    add("stream_wait_event", raw_stream_wait_event, cuwrap_stream_wait_event);
    add("stream_write_value", raw_stream_write_value, cuwrap_stream_write_value);
    add("event_create_destroy", raw_event_create_destroy, cuwrap_event_create_destroy);
    add("stream_create_destroy", raw_stream_create_destroy, cuwrap_stream_create_destroy);
    add("memcpy_async_4_bytes", raw_memcpy_async_4_bytes, cuwrap_memcpy_async_4_bytes);
    add("memset_async", raw_memset_async, cuwrap_memset_async);
    add("device_alloc_free", raw_device_alloc_free, cuwrap_device_alloc_free);
    add("pool_alloc_free_async", raw_pool_alloc_free_async, cuwrap_pool_alloc_free_async);
    add("prefetch_batch", raw_prefetch_batch, cuwrap_prefetch_batch);
    add("graph_launch", raw_graph_launch, cuwrap_graph_launch);
    add("module_load_ptx", raw_module_load_ptx, cuwrap_module_load_ptx);
    add("kernel_lookup", raw_kernel_lookup, cuwrap_kernel_lookup);
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuwrap_bench: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
