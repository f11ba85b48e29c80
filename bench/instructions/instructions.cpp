// Instruction-count harness (docs/performance.md). Each hot-path operation runs `iterations`
// times raw (plain calls through the loaded driver's entry points, results checked) and through
// cuwrap, each loop in its own noinline function. count.py runs `--run` under callgrind, collecting
// only inside cuwrap_perf_measure (and, in a second run, not inside the driver functions that
// `--symbols` lists) and dumping after each call, and `--calls` natively to read the software
// driver's call counters.
//
//   instructions KERNELS_DIR --list | --symbols | --calls | --run
#include <cuda.h>
#include <swcuda/control.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuwrap/cuwrap.hpp>
#include <string>

#include "fixture.hpp"

namespace {

constexpr int iterations = 1000;

cuwrap_bench::fixture* fx = nullptr;
const cuwrap::detail::driver_table* table = nullptr;
volatile int sink = 0;

[[noreturn, gnu::noinline, gnu::cold]] void fail(const char* api, CUresult r) {
  std::fprintf(stderr, "%s failed with CUresult %d\n", api, static_cast<int>(r));
  std::exit(2);
}
/// The raw side's error check: what any correct C program does after a driver call.
inline void ok(CUresult r, const char* api) {
  if (r != CUDA_SUCCESS) [[unlikely]] {
    fail(api, r);
  }
}
inline bool ready(CUresult r, const char* api) {
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) [[unlikely]] {
    fail(api, r);
  }
  return r == CUDA_SUCCESS;
}

#define LOOP(name) [[gnu::noinline]] void name(int n)

LOOP(raw_event_record) {
  const auto& drv = *table;
  const CUevent e = fx->e.get();
  const CUstream s = fx->s.get();
  for (int i = 0; i < n; ++i) ok(drv.cuEventRecord(e, s), "cuEventRecord");
}
LOOP(cuwrap_event_record) {
  const cuwrap::event_ref e = fx->e;
  const cuwrap::stream_ref s = fx->s;
  for (int i = 0; i < n; ++i) e.record(s);
}

LOOP(raw_event_query) {
  const auto& drv = *table;
  const CUevent e = fx->e.get();
  int done = 0;
  for (int i = 0; i < n; ++i) done += ready(drv.cuEventQuery(e), "cuEventQuery");
  sink = done;
}
LOOP(cuwrap_event_query) {
  const cuwrap::event_ref e = fx->e;
  int done = 0;
  for (int i = 0; i < n; ++i) done += e.is_done();
  sink = done;
}

LOOP(raw_event_synchronize) {
  const auto& drv = *table;
  const CUevent e = fx->e.get();
  for (int i = 0; i < n; ++i) ok(drv.cuEventSynchronize(e), "cuEventSynchronize");
}
LOOP(cuwrap_event_synchronize) {
  const cuwrap::event_ref e = fx->e;
  for (int i = 0; i < n; ++i) e.synchronize();
}

LOOP(raw_stream_query) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  int done = 0;
  for (int i = 0; i < n; ++i) done += ready(drv.cuStreamQuery(s), "cuStreamQuery");
  sink = done;
}
LOOP(cuwrap_stream_query) {
  const cuwrap::stream_ref s = fx->s;
  int done = 0;
  for (int i = 0; i < n; ++i) done += s.is_done();
  sink = done;
}

LOOP(raw_stream_synchronize) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  for (int i = 0; i < n; ++i) ok(drv.cuStreamSynchronize(s), "cuStreamSynchronize");
}
LOOP(cuwrap_stream_synchronize) {
  const cuwrap::stream_ref s = fx->s;
  for (int i = 0; i < n; ++i) s.synchronize();
}

LOOP(raw_stream_wait_event) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUevent e = fx->e.get();
  for (int i = 0; i < n; ++i) ok(drv.cuStreamWaitEvent(s, e, 0), "cuStreamWaitEvent");
}
LOOP(cuwrap_stream_wait_event) {
  const cuwrap::stream_ref s = fx->s;
  const cuwrap::event_ref e = fx->e;
  for (int i = 0; i < n; ++i) s.wait(e);
}

LOOP(raw_stream_write_value) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUdeviceptr word = fx->d.address();
  for (int i = 0; i < n; ++i) ok(drv.cuStreamWriteValue32(s, word, 0, 0), "cuStreamWriteValue32");
}
LOOP(cuwrap_stream_write_value) {
  const cuwrap::stream_ref s = fx->s;
  const auto word = cuwrap::device_span<std::uint32_t>::from_address(fx->d.address(), 1);
  for (int i = 0; i < n; ++i) s.write_value(word, 0u);
}

// The word holds 0, so a wait for >= 0 holds at once: the loop measures the enqueue.
LOOP(raw_stream_wait_value) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUdeviceptr word = fx->d.address();
  for (int i = 0; i < n; ++i) ok(drv.cuStreamWaitValue32(s, word, 0, 0), "cuStreamWaitValue32");
}
LOOP(cuwrap_stream_wait_value) {
  const cuwrap::stream_ref s = fx->s;
  const auto word = cuwrap::device_span<const std::uint32_t>::from_address(fx->d.address(), 1);
  for (int i = 0; i < n; ++i) s.wait_value(word, 0u);
}

LOOP(raw_memcpy_async) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUdeviceptr dst = fx->d.address();
  const auto src = reinterpret_cast<CUdeviceptr>(fx->h.data());
  for (int i = 0; i < n; ++i) ok(drv.cuMemcpyAsync(dst, src, sizeof(int), s), "cuMemcpyAsync");
}
LOOP(cuwrap_memcpy_async) {
  const cuwrap::stream_ref s = fx->s;
  const cuwrap::device_span<int> dst = fx->d.span().first(1);
  const std::span<const int> src{fx->h.data(), 1};
  for (int i = 0; i < n; ++i) cuwrap::copy(s, dst, src);
}

LOOP(raw_memset_async) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUdeviceptr dst = fx->d.address();
  for (int i = 0; i < n; ++i) {
    ok(drv.cuMemsetD32Async(dst, 7, cuwrap_bench::elements, s), "cuMemsetD32Async");
  }
}
LOOP(cuwrap_memset_async) {
  const cuwrap::stream_ref s = fx->s;
  const cuwrap::device_span<int> dst = fx->d.span();
  for (int i = 0; i < n; ++i) cuwrap::fill(s, dst, 7);
}

LOOP(raw_alloc_free_async) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  for (int i = 0; i < n; ++i) {
    CUdeviceptr p{};
    ok(drv.cuMemAllocAsync(&p, cuwrap_bench::elements * sizeof(int), s), "cuMemAllocAsync");
    ok(drv.cuMemFreeAsync(p, s), "cuMemFreeAsync");
  }
}
LOOP(cuwrap_alloc_free_async) {
  const cuwrap::stream& s = fx->s;
  for (int i = 0; i < n; ++i) {
    const cuwrap::stream_ordered_buffer<int> b{s, cuwrap_bench::elements};
  }
}

LOOP(raw_pool_alloc_free_async) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUmemoryPool pool = fx->pool.get();
  for (int i = 0; i < n; ++i) {
    CUdeviceptr p{};
    ok(drv.cuMemAllocFromPoolAsync(&p, cuwrap_bench::elements * sizeof(int), pool, s),
       "cuMemAllocFromPoolAsync");
    ok(drv.cuMemFreeAsync(p, s), "cuMemFreeAsync");
  }
}
LOOP(cuwrap_pool_alloc_free_async) {
  const cuwrap::stream& s = fx->s;
  const cuwrap::memory_pool_ref pool = fx->pool;
  for (int i = 0; i < n; ++i) {
    const auto b = pool.allocate<int>(s, cuwrap_bench::elements);
  }
}

// Two managed ranges prefetched to the device in one cuMemPrefetchBatchAsync.
LOOP(raw_prefetch_batch) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  CUdeviceptr dptrs[2] = {fx->managed.address(),
                          fx->managed.address() + cuwrap_bench::elements * sizeof(int)};
  std::size_t sizes[2] = {cuwrap_bench::elements * sizeof(int),
                          cuwrap_bench::elements * sizeof(int)};
  CUmemLocation to{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  std::size_t first = 0;
  for (int i = 0; i < n; ++i) {
    ok(drv.cuMemPrefetchBatchAsync(dptrs, sizes, 2, &to, &first, 1, 0, s),
       "cuMemPrefetchBatchAsync");
  }
}
LOOP(cuwrap_prefetch_batch) {
  const cuwrap::stream_ref s = fx->s;
  const auto span = fx->managed.span();
  const cuwrap::managed_range ranges[] = {span.first(cuwrap_bench::elements),
                                          span.last(cuwrap_bench::elements)};
  const cuwrap::memory_location to{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  for (int i = 0; i < n; ++i) cuwrap::prefetch(s, ranges, to);
}

// Not hot paths: reported for what they cost, not checked.
LOOP(raw_event_create_destroy) {
  const auto& drv = *table;
  for (int i = 0; i < n; ++i) {
    CUevent e{};
    ok(drv.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    ok(drv.cuEventDestroy(e), "cuEventDestroy");
  }
}
LOOP(cuwrap_event_create_destroy) {
  const cuwrap::primary_context& ctx = fx->ctx;
  for (int i = 0; i < n; ++i) {
    const cuwrap::event e{ctx};
  }
}

LOOP(raw_stream_create_destroy) {
  const auto& drv = *table;
  for (int i = 0; i < n; ++i) {
    CUstream s{};
    ok(drv.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    ok(drv.cuStreamDestroy(s), "cuStreamDestroy");
  }
}
LOOP(cuwrap_stream_create_destroy) {
  const cuwrap::primary_context& ctx = fx->ctx;
  for (int i = 0; i < n; ++i) {
    const cuwrap::stream s{ctx};
  }
}

LOOP(raw_device_alloc_free) {
  const auto& drv = *table;
  for (int i = 0; i < n; ++i) {
    CUdeviceptr p{};
    ok(drv.cuMemAlloc(&p, cuwrap_bench::elements * sizeof(int)), "cuMemAlloc");
    ok(drv.cuMemFree(p), "cuMemFree");
  }
}
LOOP(cuwrap_device_alloc_free) {
  const cuwrap::primary_context& ctx = fx->ctx;
  for (int i = 0; i < n; ++i) {
    const cuwrap::device_buffer<int> b{ctx, cuwrap_bench::elements};
  }
}

LOOP(raw_launch_0) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUfunction f = fx->k0->get();
  for (int i = 0; i < n; ++i) {
    ok(drv.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr), "cuLaunchKernel");
  }
}
LOOP(cuwrap_launch_typed_0) {
  const cuwrap::stream_ref s = fx->s;
  const auto& k = *fx->k0;
  const cuwrap::launch_config& cfg = fx->cfg;
  for (int i = 0; i < n; ++i) cuwrap::launch(s, k, cfg);
}
LOOP(cuwrap_launch_0) {
  const cuwrap::stream_ref s = fx->s;
  const cuwrap::kernel& k = *fx->u0;
  const cuwrap::launch_config& cfg = fx->cfg;
  for (int i = 0; i < n; ++i) cuwrap::launch(s, k, cfg);
}

LOOP(raw_launch_16) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUfunction f = fx->k16->get();
  int* const out = fx->d.data();
  for (int i = 0; i < n; ++i) {
    int a[15] = {i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    int* o = out;
    void* params[] = {&a[0], &a[1], &a[2],  &a[3],  &a[4],  &a[5],  &a[6],  &a[7],
                      &a[8], &a[9], &a[10], &a[11], &a[12], &a[13], &a[14], &o};
    ok(drv.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr), "cuLaunchKernel");
  }
}
LOOP(cuwrap_launch_typed_16) {
  const cuwrap::stream_ref s = fx->s;
  const auto& k = *fx->k16;
  const cuwrap::launch_config& cfg = fx->cfg;
  int* const out = fx->d.data();
  for (int i = 0; i < n; ++i)
    cuwrap::launch(s, k, cfg, i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, out);
}
LOOP(cuwrap_launch_16) {
  const cuwrap::stream_ref s = fx->s;
  const cuwrap::kernel& k = *fx->u16;
  const cuwrap::launch_config& cfg = fx->cfg;
  int* const out = fx->d.data();
  for (int i = 0; i < n; ++i)
    cuwrap::launch(s, k, cfg, i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, out);
}

LOOP(raw_launch_ex) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUfunction f = fx->k0->get();
  CUlaunchAttribute priority{};
  priority.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  priority.value.priority = -1;
  for (int i = 0; i < n; ++i) {
    CUlaunchConfig c{};
    c.gridDimX = c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 32;
    c.blockDimY = c.blockDimZ = 1;
    c.hStream = s;
    c.attrs = &priority;
    c.numAttrs = 1;
    ok(drv.cuLaunchKernelEx(&c, f, nullptr, nullptr), "cuLaunchKernelEx");
  }
}
LOOP(cuwrap_launch_ex) {
  const cuwrap::stream_ref s = fx->s;
  const auto& k = *fx->k0;
  const cuwrap::launch_config& cfg = fx->cfg_ex;
  for (int i = 0; i < n; ++i) cuwrap::launch(s, k, cfg);
}

LOOP(raw_graph_launch) {
  const auto& drv = *table;
  const CUstream s = fx->s.get();
  const CUgraphExec g = fx->exec->get();
  for (int i = 0; i < n; ++i) ok(drv.cuGraphLaunch(g, s), "cuGraphLaunch");
}
LOOP(cuwrap_graph_launch) {
  const cuwrap::stream_ref s = fx->s;
  const cuwrap::graph_exec_ref g = *fx->exec;
  for (int i = 0; i < n; ++i) g.launch(s);
}

struct operation {
  const char* name;
  void (*raw)(int);
  void (*wrapped)(int);
  int calls;                   ///< driver calls per operation; 0: not a hot path, not checked
  const std::string* missing;  ///< non-empty: why this driver cannot run it
};

const std::string nothing_missing;

operation operations[] = {
    {"event_record", raw_event_record, cuwrap_event_record, 1, &nothing_missing},
    {"event_query", raw_event_query, cuwrap_event_query, 1, &nothing_missing},
    {"event_synchronize", raw_event_synchronize, cuwrap_event_synchronize, 1, &nothing_missing},
    {"stream_query", raw_stream_query, cuwrap_stream_query, 1, &nothing_missing},
    {"stream_synchronize", raw_stream_synchronize, cuwrap_stream_synchronize, 1, &nothing_missing},
    {"stream_wait_event", raw_stream_wait_event, cuwrap_stream_wait_event, 1, &nothing_missing},
    {"stream_write_value", raw_stream_write_value, cuwrap_stream_write_value, 1, &nothing_missing},
    {"stream_wait_value", raw_stream_wait_value, cuwrap_stream_wait_value, 1, &nothing_missing},
    {"memcpy_async", raw_memcpy_async, cuwrap_memcpy_async, 1, &nothing_missing},
    {"memset_async", raw_memset_async, cuwrap_memset_async, 1, &nothing_missing},
    {"alloc_free_async", raw_alloc_free_async, cuwrap_alloc_free_async, 2, &nothing_missing},
    {"pool_alloc_free_async", raw_pool_alloc_free_async, cuwrap_pool_alloc_free_async, 2,
     &nothing_missing},
    {"prefetch_batch", raw_prefetch_batch, cuwrap_prefetch_batch, 1, &nothing_missing},
    {"launch_typed_0", raw_launch_0, cuwrap_launch_typed_0, 1, nullptr},
    {"launch_typed_16", raw_launch_16, cuwrap_launch_typed_16, 1, nullptr},
    {"launch_0", raw_launch_0, cuwrap_launch_0, 1, nullptr},
    {"launch_16", raw_launch_16, cuwrap_launch_16, 1, nullptr},
    {"launch_ex_attributes", raw_launch_ex, cuwrap_launch_ex, 1, nullptr},
    {"graph_launch", raw_graph_launch, cuwrap_graph_launch, 1, nullptr},
    {"event_create_destroy", raw_event_create_destroy, cuwrap_event_create_destroy, 0,
     &nothing_missing},
    {"stream_create_destroy", raw_stream_create_destroy, cuwrap_stream_create_destroy, 0,
     &nothing_missing},
    {"device_alloc_free", raw_device_alloc_free, cuwrap_device_alloc_free, 0, &nothing_missing},
};

const std::string& missing(const operation& op) {
  if (op.missing != nullptr) return *op.missing;
  if (std::strncmp(op.name, "launch_ex", 9) == 0) return fx->launch_ex_missing;
  if (std::strncmp(op.name, "launch", 6) == 0) return fx->kernels_missing;
  return fx->graph_missing;
}

/// One-line reasons, for the line-oriented output.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

unsigned long long calls_of(const swcu_control& c, void (*loop)(int)) {
  fx->clear_launch_log();
  c.reset_call_counts();
  loop(iterations);
  return c.total_call_count();
}

}  // namespace

/// Callgrind collects only inside this function (count.py: --toggle-collect, less the driver's
/// functions in its second run) and dumps after each call.
extern "C" [[gnu::noinline]] void cuwrap_perf_measure(void (*loop)(int), int n) { loop(n); }

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s KERNELS_DIR --list|--symbols|--calls|--run\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[2];
  try {
    table = &cuwrap::detail::load_process_driver();
    cuwrap_bench::fixture f{argv[1]};
    fx = &f;
    if (mode == "--list") {
      for (const auto& op : operations) {
        const auto& why = missing(op);
        std::printf("%s %s\n", op.name, why.empty() ? "ok" : ("skip " + first_line(why)).c_str());
      }
    } else if (mode == "--symbols") {
      for (const auto& entry : cuwrap::detail::driver_entries()) {
        std::printf("%s\n", entry.exported_name);
      }
    } else if (mode == "--calls") {
      const swcu_control* c = fx->control;
      if (c == nullptr) {
        std::fprintf(stderr, "--calls needs the software driver (CUWRAP_DRIVER=software)\n");
        return 2;
      }
      for (const auto& op : operations) {
        if (!missing(op).empty()) continue;
        std::printf("calls %s %llu %llu %d %d\n", op.name, calls_of(*c, op.raw),
                    calls_of(*c, op.wrapped), iterations, op.calls);
      }
    } else if (mode == "--run") {
      for (const auto& op : operations) {  // warm-up: caches, lazy binding, pools
        if (!missing(op).empty()) continue;
        op.raw(iterations);
        op.wrapped(iterations);
        fx->clear_launch_log();
      }
      for (const auto& op : operations) {
        if (!missing(op).empty()) continue;
        std::printf("measure %s raw %d\n", op.name, iterations);
        fx->clear_launch_log();  // both loops start with an empty log
        cuwrap_perf_measure(op.raw, iterations);
        std::printf("measure %s cuwrap %d\n", op.name, iterations);
        fx->clear_launch_log();
        cuwrap_perf_measure(op.wrapped, iterations);
      }
    } else {
      std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
      return 2;
    }
    f.s.synchronize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
