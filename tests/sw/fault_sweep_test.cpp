// Fault sweeps over the public operations that create something and are not swept next to
// their own tests: libraries, modules from cubins and fatbins, stream capture, every kind of
// graph node, clones, conditionals, the default pool, primary context reset, and IPC events and
// mappings. Each scenario runs once per driver call it makes, with that call failing
// (tests/support/fault_sweep.hpp): the injected error must escape as a cuwrap::error, and
// nothing may be left behind (no live handle, an empty context stack).
#include "fault_sweep.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "ipc_exporter.hpp"
#include "sw_fixture.hpp"
#include "test_kernels.hpp"

using cuwrap::testing::fault_sweep;
using cuwrap::testing::ipc_exporter;
using cuwrap::testing::kernels_file;
using cuwrap::testing::read_bytes;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

using scale_kernel = void(float*, float, int);
using saxpy_kernel = void(float, const float*, float*, int);

// What the nothrow handler saw (for tests that check a destructor reports nothing).
std::error_code reported_by_destructor;
void remember_report(std::error_code code, const char*) noexcept { reported_by_destructor = code; }

}  // namespace

TEST_SUITE("fault_sweep") {
  // ---- libraries and modules ----

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: loading libraries from a span, text and a file") {
    const auto cubin = read_bytes(kernels_file("cubin"));
    const auto ptx = read_text(kernels_file("ptx"));
    REQUIRE_FALSE(cubin.empty());
    REQUIRE_FALSE(ptx.empty());
    const int points = fault_sweep([&] {
      const auto from_span = cuwrap::library::load(std::span{cubin});
      const auto from_text = cuwrap::library::load(std::string_view{ptx});
      const auto from_file = cuwrap::library::load_file(kernels_file("fatbin"));
      (void)from_span.kernels();
    });
    CHECK(points >= 4);  // three cuLibraryLoadData, the enumeration
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: looking up a library's kernels") {
    const auto ptx = read_text(kernels_file("ptx"));
    const int points = fault_sweep([&] {
      const auto lib = cuwrap::library::load(std::string_view{ptx});
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::scoped_current_context current{ctx};
      const auto saxpy = lib.kernel<saxpy_kernel>("saxpy");
      const auto scale = lib.kernel<scale_kernel>("scale");
      CHECK(saxpy.params().size() == 4);
      CHECK(scale.params().size() == 3);
    });
    CHECK(points >= 6);  // the load, the context, two cuLibraryGetKernel and their queries
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: loading a cubin and a fatbin module from a span") {
    const auto cubin = read_bytes(kernels_file("cubin"));
    const auto fatbin = read_bytes(kernels_file("fatbin"));
    const int points = fault_sweep([&] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      for (const auto* image : {&cubin, &fatbin}) {
        const auto mod = cuwrap::module::load(ctx, std::span{*image});
        const auto k = mod.kernel<scale_kernel>("scale");
        CHECK(k.params().size() == 3);
      }
    });
    CHECK(points >= 6);  // two cuModuleLoadDataEx, two cuModuleGetFunction, the context
  }

  // ---- stream capture ----

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: capturing work and host callbacks from a stream") {
    const int points = fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::device_buffer<int> data{ctx, 16};
      int runs = 0;
      cuwrap::graph g = [&] {
        auto capture = s.begin_capture();
        cuwrap::fill(s, data, 7);
        s.enqueue([&runs] { ++runs; });
        return capture.end();
      }();
      auto exec = g.instantiate();
      exec.launch(s);
      s.synchronize();
      CHECK(runs == 1);
    });
    CHECK(points >= 8);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: a capture abandoned by an exception") {
    struct abandoned {};  // not a std::exception: an injected cuwrap::error is not caught here
    const int points = fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      try {
        auto capture = s.begin_capture();
        s.enqueue([] {});
        throw abandoned{};
      } catch (const abandoned&) {
      }
      // The guard ended the capture and destroyed its graph; the stream is destroyed next.
    });
    CHECK(points >= 5);
  }

  // ---- graphs ----

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: every kind of graph node, and a clone") {
    constexpr int n = 16;
    const int points = fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::event e{ctx};
      cuwrap::device_buffer<int> data{ctx, n};
      std::vector<int> host(n, 3);
      cuwrap::graph child{ctx};
      (void)child.add_empty();
      cuwrap::graph g{ctx};
      const auto start = g.add_empty();
      const auto in = g.add_copy(data, host, start);
      const auto record = g.add_event_record(e, in);
      const auto wait = g.add_event_wait(e, record);
      const auto nested = g.add_child(child, wait);
      // Graphs with memory nodes cannot be cloned: clone before adding them.
      const auto copy = g.clone();
      const auto alloc = g.add_memory_alloc(n * sizeof(int), nested);
      const auto scratch = cuwrap::device_span<int>::from_address(alloc.address, n);
      const auto copied = g.add_copy(scratch, data, alloc.node);
      (void)g.add_memory_free(alloc.address, copied);
      auto exec = g.instantiate();
      auto exec_copy = copy.instantiate();
      exec.launch(s);
      exec_copy.launch(s);
      s.synchronize();
    });
    CHECK(points >= 16);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: conditional nodes and their conditions") {
    const int points = fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::graph g{ctx};
      const auto condition = g.make_condition(1);
      const auto when = g.add_conditional(condition, cuwrap::conditional::if_then);
      (void)when.body().add_empty();
      const auto loop_condition = g.make_condition(0);
      const auto loop =
          g.add_conditional(loop_condition, cuwrap::conditional::while_loop, when.node);
      (void)loop.body().add_empty();
      auto exec = g.instantiate();
      exec.launch(s);
      s.synchronize();
    });
    CHECK(points >= 8);
  }

  // ---- pools and contexts ----

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: allocating from the default pool") {
    const int points = fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      const auto pool = cuwrap::memory_pool::default_pool(cuwrap::device::get(0));
      auto memory = pool.allocate<int>(s, 64);
      (void)pool.usage();
      s.synchronize();
    });
    CHECK(points >= 6);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: resetting a primary context") {
    const int points = fault_sweep([] {
      {
        cuwrap::primary_context ctx{cuwrap::device::get(0)};
        cuwrap::device_buffer<int> memory{ctx, 16};
      }
      const auto dev = cuwrap::device::get(0);
      cuwrap::primary_context::reset(dev);
      const bool active = cuwrap::primary_context::is_active(dev);
      CHECK_FALSE(active);
    });
    CHECK(points >= 4);
  }

  // ---- IPC ----

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: exporting an interprocess event and memory") {
    const int points = fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::event e{ctx, cuwrap::event_flags::interprocess};
      cuwrap::device_buffer<int> memory{ctx, 16};
      const auto event_handle = cuwrap::export_event(e);
      const auto memory_handle = cuwrap::export_memory(memory.span());
      CHECK(event_handle != cuwrap::ipc_event_handle{});
      CHECK(memory_handle != cuwrap::ipc_memory_handle{});
    });
    CHECK(points >= 5);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: opening another process's event and memory") {
    ipc_exporter exporter;
    const int points = fault_sweep(
        [&] {
          cuwrap::primary_context ctx{cuwrap::device::get(0)};
          // Current: an ipc_mapping's destructor needs it (see the test below).
          cuwrap::scoped_current_context current{ctx};
          auto ready = cuwrap::open_event(ctx, exporter.event());
          ready.synchronize();
          cuwrap::ipc_mapping<int> memory{ctx, exporter.memory(), ipc_exporter::count};
          std::vector<int> seen(ipc_exporter::count);
          cuwrap::stream s{ctx};
          cuwrap::copy(s, seen, memory);
          s.synchronize();
          const int fifth = seen[5];
          CHECK(fifth == 5);
        },
        // Closing a mapping is a destructor's call, like the frees the sweep skips by default.
        {.skip = {"Destroy", "Release", "Free", "Unload", "Unregister", "Close"}});
    CHECK(points >= 8);
  }

  // Found by the sweep above: cuIpcCloseMemHandle acts in the current context, so a mapping
  // destroyed while its context is not current must make it current for the close.
  TEST_CASE_FIXTURE(sw_fixture, "an ipc_mapping destroyed with no current context is closed") {
    ipc_exporter exporter;
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    reported_by_destructor = {};
    const auto previous = cuwrap::set_nothrow_error_handler(&remember_report);
    {
      const cuwrap::ipc_mapping<int> memory{ctx, exporter.memory(), ipc_exporter::count};
      CHECK(swcuda().live_handles(SWCU_IPC_MAPPING) == 1);
      CHECK(swcuda().context_stack_depth() == 0);
    }
    cuwrap::set_nothrow_error_handler(previous);
    CHECK_MESSAGE(!reported_by_destructor, "the destructor reported ",
                  reported_by_destructor.message());
    CHECK(swcuda().live_handles(SWCU_IPC_MAPPING) == 0);  // closed, not left to the context
  }
}
