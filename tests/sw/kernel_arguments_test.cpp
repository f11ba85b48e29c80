// Device memory owners and spans, and pinned memory, as kernel arguments: typed and untyped
// launches, graph kernel nodes and kernel node updates; moved-from owners refused before any driver
// call.
#include "cuwrap/detail/kernel_arguments.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <source_location>
#include <string>
#include <swcuda/emulation.hpp>  // swcuda::param, to read the launch log's records
#include <type_traits>
#include <utility>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "kernels_fixture.hpp"
#include "launch_log.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::last_launch;
using cuwrap::testing::swcuda;

namespace {

struct fixture : cuwrap::testing::kernels_fixture {
  // saxpy(a, x, y, n): y[i] = a * x[i] + y[i]; scale(data, factor, n): data[i] *= factor
  cuwrap::typed_kernel<void(float, const float*, float*, int)> saxpy =
      mod.kernel<void(float, const float*, float*, int)>("saxpy");
  cuwrap::typed_kernel<void(float*, float, int)> scale =
      mod.kernel<void(float*, float, int)>("scale");
};

constexpr int n = 64;
const auto config = cuwrap::launch_config::linear(n, 32);

// Fills `memory` with `value` on `s` and waits.
template <class Memory>
void set(cuwrap::stream_ref s, Memory& memory, float value) {
  cuwrap::fill(s, memory, value);
  s.synchronize();
}

template <class Memory>
std::vector<float> read(cuwrap::stream_ref s, const Memory& memory) {
  std::vector<float> host(static_cast<std::size_t>(n));
  cuwrap::copy(s, host, memory);
  s.synchronize();
  return host;
}

std::vector<float> all(float value) {
  return std::vector<float>(static_cast<std::size_t>(n), value);
}

}  // namespace

static_assert(
    std::is_same_v<cuwrap::detail::kernel_value_t<cuwrap::device_buffer<float>&>, float*>);
static_assert(
    std::is_same_v<cuwrap::detail::kernel_value_t<cuwrap::device_span<const int>>, const int*>);
static_assert(std::is_same_v<cuwrap::detail::kernel_value_t<const double&>, double>);
static_assert(std::is_same_v<cuwrap::detail::kernel_value_t<cuwrap::pinned_buffer<int>&>, int*>);
static_assert(cuwrap::detail::kernel_argument_fits<const int*, cuwrap::pinned_buffer<int>&>);
static_assert(!cuwrap::detail::kernel_argument_fits<float*, cuwrap::pinned_buffer<int>&>);
// Exact, widening and pointer conversions are accepted; narrowing ones are not.
static_assert(cuwrap::detail::kernel_argument_fits<double, float>);
static_assert(cuwrap::detail::kernel_argument_fits<long, int>);
static_assert(cuwrap::detail::kernel_argument_fits<const float*, float*>);
static_assert(cuwrap::detail::kernel_argument_fits<const float*, cuwrap::device_buffer<float>&>);
static_assert(cuwrap::detail::kernel_argument_fits<void*, cuwrap::managed_buffer<float>&>);
static_assert(!cuwrap::detail::kernel_argument_fits<float, double>);
static_assert(!cuwrap::detail::kernel_argument_fits<unsigned, int>);
static_assert(!cuwrap::detail::kernel_argument_fits<int, long>);
static_assert(!cuwrap::detail::kernel_argument_fits<float, int>);
static_assert(!cuwrap::detail::kernel_argument_fits<int*, cuwrap::device_buffer<float>&>);
static_assert(!cuwrap::detail::kernel_argument_fits<float*, cuwrap::device_span<const float>>);
static_assert(!cuwrap::detail::kernel_argument_fits<float, cuwrap::device_buffer<float>&>);

TEST_SUITE("kernel arguments") {
  TEST_CASE_FIXTURE(fixture, "every kind of device memory passes to a typed kernel's pointers") {
    cuwrap::device_buffer<float> x{ctx, n};
    cuwrap::managed_buffer<float> managed{ctx, n};
    cuwrap::stream_ordered_buffer<float> ordered{s, n};
    cuwrap::pinned_buffer<float> mapped{ctx, n, cuwrap::pinned_flags::device_mapped};
    set(s, x, 1.0f);
    set(s, managed, 1.0f);
    set(s, ordered, 2.0f);
    for (float& v : mapped) {
      v = 3.0f;
    }

    s.launch(saxpy, config, 2.0f, x, managed, n);  // an owner for const float* and float*
    CHECK(read(s, managed) == all(3.0f));
    CHECK(swcuda::param<const float*>(last_launch(), 1) == x.data());
    CHECK(swcuda::param<float*>(last_launch(), 2) == managed.data());

    cuwrap::launch(s, saxpy, config, 1.0f, ordered, ordered, n);
    CHECK(read(s, ordered) == all(4.0f));
    CHECK(swcuda::param<float*>(last_launch(), 2) == ordered.data());

    const cuwrap::device_span<const float> in = x;
    const auto mapped_span = [&] {  // cuMemHostGetDevicePointer needs a current context
      const cuwrap::scoped_current_context current{ctx};
      return mapped.device();
    }();
    s.launch(saxpy, config, 1.0f, in, mapped_span, n);  // spans, and mapped pinned memory
    s.synchronize();
    CHECK(std::vector<float>(mapped.begin(), mapped.end()) == all(4.0f));

    s.launch(scale, cuwrap::launch_config::linear(n / 2, 32), x.span().subspan(n / 2), 5.0f, n / 2);
    auto halves = all(1.0f);
    std::fill(halves.begin() + n / 2, halves.end(), 5.0f);
    CHECK(read(s, x) == halves);
  }

  TEST_CASE_FIXTURE(fixture, "a launch with device memory arguments is still one driver call") {
    cuwrap::device_buffer<float> x{ctx, n}, y{ctx, n};
    const auto untyped = mod.kernel("saxpy");
    auto calls = calls_made_by([&] { s.launch(saxpy, config, 1.0f, x, y, n); });
    CHECK(cuwrap::testing::total(calls) == 1);
    CHECK(calls.count("cuLaunchKernel") == 1);
    calls = calls_made_by([&] { s.launch(untyped, config, 1.0f, x.span(), y, n); });
    CHECK(cuwrap::testing::total(calls) == 1);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "untyped launches pass device memory as pointers, checked by size") {
    cuwrap::device_buffer<float> x{ctx, n};
    cuwrap::managed_buffer<float> y{ctx, n};
    set(s, x, 2.0f);
    set(s, y, 1.0f);
    const auto untyped = mod.kernel("saxpy");
    s.launch(untyped, config, 3.0f, x, y, n);
    CHECK(read(s, y) == all(7.0f));
    CHECK(swcuda::param<float*>(last_launch(), 2) == y.data());
    // A buffer is a pointer (8 bytes) to the layout: in the float's place it is refused.
    CHECK_THROWS_WITH_AS(s.launch(untyped, config, x, x, y, n),
                         doctest::Contains("argument 0 has 8 bytes; the parameter has 4"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(fixture, "graph kernel nodes and their updates take device memory") {
    cuwrap::device_buffer<float> data{ctx, n}, other{ctx, n};
    cuwrap::graph g{ctx};
    const auto fill = g.add_fill(data, 1.0f);
    const cuwrap::graph_node after_fill[] = {fill};
    const auto node = g.add_kernel(scale, config, after_fill, data, 3.0f, n);
    auto exec = g.instantiate();
    exec.launch(s);
    CHECK(read(s, data) == all(3.0f));

    set(s, other, 2.0f);
    exec.set_kernel_params(node, scale, config, other.span(), 4.0f, n);
    exec.launch(s);
    CHECK(read(s, other) == all(8.0f));
    CHECK(read(s, data) == all(1.0f));  // filled again, no longer scaled
  }

  TEST_CASE_FIXTURE(fixture, "a zero-element buffer or an empty span passes its null pointer") {
    cuwrap::device_buffer<float> none{ctx, 0};
    s.launch(scale, config, none, 2.0f, 0);
    CHECK(swcuda::param<float*>(last_launch(), 0) == nullptr);
    s.launch(scale, config, cuwrap::device_span<float>{}, 2.0f, 0);
    CHECK(swcuda::param<float*>(last_launch(), 0) == nullptr);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from buffer is refused before any driver call") {
    cuwrap::device_buffer<float> x{ctx, n};
    cuwrap::stream_ordered_buffer<float> ordered{s, n};
    cuwrap::managed_buffer<float> managed{ctx, n};
    auto kept = std::move(x);
    auto kept_ordered = std::move(ordered);
    auto kept_managed = std::move(managed);
    const auto untyped = mod.kernel("scale");
    cuwrap::graph g{ctx};
    const auto node = g.add_kernel(scale, config, {}, kept, 1.0f, n);
    auto exec = g.instantiate();

    const auto refused = [](auto&& operation, const std::string& message) {
      const auto calls = calls_made_by([&] {
        try {
          operation();
          FAIL("no usage_error");
        } catch (const cuwrap::usage_error& e) {
          CHECK(std::string{e.what()}.starts_with(message));
          CHECK(std::string{e.where().file_name()}.ends_with("kernel_arguments_test.cpp"));
        }
      });
      CHECK(cuwrap::testing::total(calls) == 0);
    };
    refused([&] { s.launch(scale, config, x, 2.0f, n); },
            "cuwrap::stream::launch: kernel argument 0 (a device_buffer) was moved from");
    refused([&] { s.launch(saxpy, config, 2.0f, kept, ordered, n); },
            "cuwrap::stream::launch: kernel argument 2 (a stream_ordered_buffer) was moved from");
    refused([&] { s.launch(untyped, config, managed, 2.0f, n); },
            "cuwrap::stream::launch: kernel argument 0 (a managed_buffer) was moved from");
    refused([&] { (void)g.add_kernel(scale, config, {}, x, 2.0f, n); },
            "cuwrap::graph::add_kernel: kernel argument 0 (a device_buffer) was moved from");
    refused([&] { exec.set_kernel_params(node, scale, config, x, 2.0f, n); },
            "cuwrap::graph_exec::set_kernel_params: kernel argument 0 (a device_buffer) was "
            "moved from");
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "pinned memory passes its host pointer, its device address") {
    // Under unified addressing every cuMemHostAlloc allocation is reached from kernels through
    // its host pointer, mapped (DEVICEMAP) or not (driver API, "Unified Addressing").
    cuwrap::pinned_buffer<float> plain{ctx, n};
    cuwrap::pinned_buffer<float> mapped{ctx, n, cuwrap::pinned_flags::device_mapped};
    std::fill(plain.begin(), plain.end(), 2.0f);
    std::fill(mapped.begin(), mapped.end(), 1.0f);
    const auto calls = calls_made_by([&] { s.launch(saxpy, config, 3.0f, plain, mapped, n); });
    CHECK(cuwrap::testing::total(calls) == 1);  // no cuMemHostGetDevicePointer
    CHECK(swcuda::param<const float*>(last_launch(), 1) == plain.data());
    s.synchronize();
    CHECK(std::vector<float>(mapped.begin(), mapped.end()) == all(7.0f));

    s.launch(mod.kernel("scale"), config, plain, 0.5f, n);  // untyped
    cuwrap::graph g{ctx};
    (void)g.add_kernel(scale, config, {}, mapped, 2.0f, n);
    g.instantiate().launch(s);
    s.synchronize();
    CHECK(std::vector<float>(plain.begin(), plain.end()) == all(1.0f));
    CHECK(std::vector<float>(mapped.begin(), mapped.end()) == all(14.0f));
  }

  TEST_CASE_FIXTURE(fixture, "write-combined or moved-from pinned memory is refused") {
    // Write-combined memory is one of the driver's "disjoint addressing" exceptions: its device
    // address is not its host address, so passing the host pointer would fault on a GPU.
    cuwrap::pinned_buffer<float> combined{ctx, n, cuwrap::pinned_flags::write_combined};
    CHECK_FALSE(combined.host_address_is_device_address());
    cuwrap::pinned_buffer<float> moved{ctx, n};
    auto kept = std::move(moved);
    const auto refused = [&](auto&& operation, const std::string& message) {
      const auto calls = calls_made_by([&] {
        CHECK_THROWS_WITH_AS(operation(), doctest::Contains(message.c_str()), cuwrap::usage_error);
      });
      CHECK(cuwrap::testing::total(calls) == 0);
    };
    refused([&] { s.launch(scale, config, combined, 2.0f, n); },
            "cuwrap::stream::launch: kernel argument 0 (a pinned_buffer) is write-combined, so "
            "its device address is not its host address");
    const auto untyped = mod.kernel("scale");
    refused([&] { s.launch(untyped, config, moved, 2.0f, n); },
            "cuwrap::stream::launch: kernel argument 0 (a pinned_buffer) was moved from");
    cuwrap::graph g{ctx};
    refused([&] { (void)g.add_kernel(scale, config, {}, combined, 2.0f, n); },
            "cuwrap::graph::add_kernel: kernel argument 0 (a pinned_buffer) is write-combined");
  }

  TEST_CASE_FIXTURE(fixture, "the moved-from error names the line of the launch") {
    cuwrap::device_buffer<float> x{ctx, n};
    auto kept = std::move(x);
    const auto line = std::source_location::current().line() + 2;
    try {
      s.launch(scale, config, x, 2.0f, n);
      FAIL("no usage_error");
    } catch (const cuwrap::usage_error& e) {
      CHECK(e.where().line() == line);
      CHECK(std::string{e.what()}.ends_with(":" + std::to_string(line)));
    }
  }
}
