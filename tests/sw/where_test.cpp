// where() is the user's line: every error a public function throws carries the call site in the
// caller's file, whichever driver call fails (a sweep that fails each call of a scenario in
// turn), graph node errors name the graph API they come from, and a moved-from owner handed to
// a copy, a fill or a graph node is reported at the line of that call.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/memory.hpp"
#include "sw_fixture.hpp"
#include "test_kernels.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::cxx_kernels_ptx;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

// The error `f` throws (a failed check if it throws none).
template <class F>
cuwrap::error error_of(F&& f) {
  try {
    f();
  } catch (const cuwrap::error& e) {
    return e;
  }
  FAIL("no cuwrap::error was thrown");
  throw;
}

// The usage_error `f` throws (a failed check if it throws none).
template <class F>
cuwrap::usage_error usage_error_of(F&& f) {
  try {
    f();
  } catch (const cuwrap::usage_error& e) {
    return e;
  }
  FAIL("no cuwrap::usage_error was thrown");
  throw;
}

bool here(const std::source_location& where) {
  return std::strcmp(where.file_name(), __FILE__) == 0;
}

void unwind_context_stack() {
  CUcontext popped{};
  while (swcuda().context_stack_depth() > 0 &&
         cuwrap::detail::driver().cuCtxPopCurrent(&popped) == CUDA_SUCCESS) {
  }
}

// Fails every driver call `scenario` makes, one at a time, and checks that each error that
// escapes names a line of this file.
int where_sweep(const std::function<void()>& scenario) {
  const auto calls = calls_made_by(scenario);
  REQUIRE(!calls.empty());
  int points = 0;
  for (const auto& [name, count] : calls) {
    // Destructors' calls report to the nothrow handler instead of throwing (and a failed
    // destroy leaks, as on a real driver): not swept.
    if (name.find("Destroy") != std::string::npos || name.find("Release") != std::string::npos ||
        name.find("Unload") != std::string::npos || name.find("Free") != std::string::npos) {
      continue;
    }
    for (unsigned long long n = 1; n <= count; ++n) {
      const std::string rule = name + ":" + std::to_string(n) + ":CUDA_ERROR_UNKNOWN";
      REQUIRE(swcuda().add_fault_rule(rule.c_str()) == 0);
      const auto previous =
          cuwrap::set_nothrow_error_handler([](std::error_code, const char*) noexcept {});
      try {
        scenario();
      } catch (const cuwrap::error& e) {
        CHECK_MESSAGE(here(e.where()), "failing ", name, " call ", n, " gave ", e.what(),
                      " with where() in '", e.where().file_name(), "'");
        ++points;
      }
      cuwrap::set_nothrow_error_handler(previous);
      swcuda().clear_fault_rules();
      unwind_context_stack();
    }
  }
  return points;
}

}  // namespace

TEST_SUITE("where") {
  TEST_CASE_FIXTURE(sw_fixture, "a failing driver call anywhere reports the caller's line") {
    const int points = where_sweep([] {
      const auto dev = cuwrap::device::get(0);
      (void)cuwrap::device::count();
      (void)dev.name();
      (void)dev.uuid();
      (void)dev.pci_bus_id();
      (void)dev.total_memory();
      (void)dev.compute_capability();
      (void)dev.multiprocessor_count();
      (void)dev.can_access_peer(dev);
      (void)cuwrap::primary_context::is_active(dev);
      (void)cuwrap::primary_context::flags(dev);
      const cuwrap::primary_context ctx{dev};
      {
        const cuwrap::scoped_current_context current{ctx};
        (void)cuwrap::current_context();
      }
      (void)ctx.stream_priorities();
      (void)ctx.context_ref::device();
      (void)ctx.context_ref::flags();
      (void)ctx.limit(cuwrap::context_limit::stack_size);
      (void)ctx.cache_config();
      (void)ctx.id();
      (void)cuwrap::memory_info(ctx);
      const cuwrap::stream s{ctx, {.priority = -1}};
      (void)s.priority();
      (void)s.flags();
      (void)s.context();
      (void)s.is_capturing();
      (void)s.id();
      (void)cuwrap::capture_state(s);
      const auto mod = cuwrap::module::load(ctx, std::string_view{cxx_kernels_ptx});
      (void)mod.kernels();
      const auto step = mod.kernel<void(int)>("ns::step");
      const auto untyped = mod.kernel("fill");
      (void)step.attributes();
      const cuwrap::launch_config one{{1}, {32}};
      (void)cuwrap::occupancy::max_active_blocks_per_multiprocessor(step, 32);
      s.launch(step, one, 1);
      s.launch(untyped, one, CUdeviceptr{0}, 1.0f, 0);
      cuwrap::graph g{ctx};
      const auto node = g.add_kernel(step, one, {}, 2);
      const auto empty = g.add_empty(node);
      (void)g.nodes();
      (void)g.edges();
      (void)node.kind();
      (void)empty.kind();
      const auto exec = g.instantiate();
      exec.set_kernel_params(node, step, one, 3);
      (void)exec.enabled(node);
      exec.set_enabled(node, true);
      exec.launch(s);
      const auto pool = cuwrap::memory_pool::default_pool(dev);
      (void)pool.release_threshold();
      (void)pool.usage();
      s.synchronize();
      ctx.synchronize();
    });
    CHECK(points > 40);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "a failing driver call in copies, fills and memory nodes reports the caller's "
                    "line") {
    const int points = where_sweep([] {
      (void)cuwrap::driver_version();
      (void)cuwrap::driver_path();
      (void)cuwrap::is_software_driver();
      const cuwrap::primary_context ctx{cuwrap::device::get(0)};
      const cuwrap::scoped_current_context current{ctx};
      const cuwrap::stream s{ctx};
      cuwrap::device_buffer<int> d{ctx, 8};
      cuwrap::device_buffer<int> e{ctx, 8};
      std::vector<int> h(8, 1);
      cuwrap::copy(d, h);
      cuwrap::copy(s, e, d);
      cuwrap::fill(d, 2);
      cuwrap::fill(s, e, 3);
      cuwrap::zero(d);
      cuwrap::zero(s, e);
      cuwrap::copy_peer(ctx, d, ctx, e);
      cuwrap::pitched_buffer<int> p{ctx, 4, 2};
      cuwrap::copy_2d(p, cuwrap::pitched_span<const int>::dense(h.data(), 4, 2));
      cuwrap::copy_2d(s, cuwrap::pitched_span<int>::dense(h.data(), 4, 2), p);
      cuwrap::stream_ordered_buffer<int> o{s, 8};
      cuwrap::copy(s, o, d);
      cuwrap::graph g{ctx};
      const auto copy_node = g.add_copy(d, e);
      const auto fill_node = g.add_fill(e, 4, {copy_node});
      const auto exec = g.instantiate();
      exec.set_copy_params(copy_node, e, d);
      exec.set_fill_params(fill_node, d, 5);
      exec.launch(s);
      s.synchronize();
    });
    CHECK(points > 20);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "a moved-from buffer in a copy, fill or node names the call's line") {
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const cuwrap::stream s{ctx};
    cuwrap::device_buffer<int> gone{ctx, 4};
    const cuwrap::device_buffer<int> kept{std::move(gone)};
    cuwrap::pitched_buffer<int> gone_2d{ctx, 2, 2};
    const cuwrap::pitched_buffer<int> kept_2d{std::move(gone_2d)};
    cuwrap::graph g{ctx};
    std::vector<int> h(4);
    // NOLINTBEGIN(bugprone-use-after-move): the moved-from buffers are the point
    const auto check_line = [](const cuwrap::usage_error& e, int line) {
      CHECK(e.where().line() == static_cast<unsigned>(line));
      CHECK(here(e.where()));
      CHECK(std::string{e.what()}.starts_with("cuwrap::"));
    };
    int line = __LINE__ + 1;
    check_line(usage_error_of([&] { cuwrap::copy(h, gone); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { cuwrap::copy(s, gone, h); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { cuwrap::fill(gone, 1); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { cuwrap::zero(s, gone); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { cuwrap::copy_peer(ctx, kept, ctx, gone); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { cuwrap::copy_2d(kept_2d, gone_2d); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { (void)g.add_copy(gone, h); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { (void)g.add_fill(gone, 1); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { (void)gone.span().subspan(1); }), line);
    line = __LINE__ + 1;
    check_line(usage_error_of([&] { (void)kept.span().subspan(5); }), line);
    // NOLINTEND(bugprone-use-after-move)
  }

  TEST_CASE_FIXTURE(sw_fixture, "device::name() reports the caller's line") {
    const auto dev = cuwrap::device::get(0);
    REQUIRE(swcuda().add_fault_rule("cuDeviceGetName:1:CUDA_ERROR_UNKNOWN") == 0);
    const int line = __LINE__ + 1;
    const auto e = error_of([&] { (void)dev.name(); });
    CHECK(e.where().line() == line);
    CHECK(here(e.where()));
    CHECK(std::string{e.api()} == "cuDeviceGetName");
  }

  TEST_CASE_FIXTURE(sw_fixture, "module::kernels() reports the caller's line") {
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto mod = cuwrap::module::load(ctx, std::string_view{cxx_kernels_ptx});
    REQUIRE(swcuda().add_fault_rule("cuModuleEnumerateFunctions:1:CUDA_ERROR_UNKNOWN") == 0);
    const int line = __LINE__ + 1;
    const auto e = error_of([&] { (void)mod.kernels(); });
    CHECK(e.where().line() == line);
    CHECK(here(e.where()));
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "stream_priorities() and scoped_current_context report the caller's line") {
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    REQUIRE(swcuda().add_fault_rule("cuCtxGetStreamPriorityRange:1:CUDA_ERROR_UNKNOWN") == 0);
    int line = __LINE__ + 1;
    auto e = error_of([&] { (void)ctx.stream_priorities(); });
    CHECK(e.where().line() == line);
    CHECK(here(e.where()));
    swcuda().clear_fault_rules();
    REQUIRE(swcuda().add_fault_rule("cuCtxPushCurrent:1:CUDA_ERROR_UNKNOWN") == 0);
    line = __LINE__ + 1;
    e = error_of([&] { const cuwrap::scoped_current_context current{ctx}; });
    CHECK(e.where().line() == line);
    CHECK(std::string{e.api()} == "cuCtxPushCurrent");
  }

  TEST_CASE_FIXTURE(sw_fixture, "a failed parameter query at lookup reports the caller's line") {
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto mod = cuwrap::module::load(ctx, std::string_view{cxx_kernels_ptx});
    REQUIRE(swcuda().add_fault_rule("cuFuncGetParamInfo:1:CUDA_ERROR_UNKNOWN") == 0);
    const int line = __LINE__ + 1;
    const auto e = error_of([&] { (void)mod.kernel("_ZN2ns4stepEi"); });
    CHECK(e.where().line() == line);
    CHECK(here(e.where()));
    CHECK(std::string{e.api()} == "cuFuncGetParamInfo");
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "graph kernel node errors name the graph API and the caller's line") {
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const auto mod = cuwrap::module::load(ctx, std::string_view{cxx_kernels_ptx});
    const auto step = mod.kernel<void(int)>("_ZN2ns4stepEi");
    cuwrap::graph g{ctx};
    // More shared memory than the kernel allows: refused before the driver, naming
    // cuGraphAddKernelNode.
    const cuwrap::launch_config too_big{{1}, {32}, step.max_dynamic_shared_bytes() + 1};
    int line = __LINE__ + 1;
    auto e = error_of([&] { (void)g.add_kernel(step, too_big, {}, 1); });
    CHECK(e.where().line() == line);
    CHECK(std::string{e.api()} == "cuGraphAddKernelNode");
    REQUIRE(swcuda().add_fault_rule("cuGraphAddKernelNode:1:CUDA_ERROR_UNKNOWN") == 0);
    line = __LINE__ + 1;
    e = error_of([&] { (void)g.add_kernel(step, cuwrap::launch_config{{1}, {32}}, {}, 1); });
    CHECK(e.where().line() == line);
    CHECK(std::string{e.api()} == "cuGraphAddKernelNode");
    swcuda().clear_fault_rules();

    const auto node = g.add_kernel(step, cuwrap::launch_config{{1}, {32}}, {}, 1);
    const auto exec = g.instantiate();
    line = __LINE__ + 1;
    e = error_of([&] { exec.set_kernel_params(node, step, too_big, 2); });
    CHECK(e.where().line() == line);
    CHECK(std::string{e.api()} == "cuGraphExecKernelNodeSetParams");
    REQUIRE(swcuda().add_fault_rule("cuGraphExecKernelNodeSetParams:1:CUDA_ERROR_UNKNOWN") == 0);
    line = __LINE__ + 1;
    e = error_of([&] { exec.set_kernel_params(node, step, cuwrap::launch_config{{1}, {32}}, 2); });
    CHECK(e.where().line() == line);
    CHECK(here(e.where()));
    CHECK(std::string{e.api()} == "cuGraphExecKernelNodeSetParams");
  }
}
