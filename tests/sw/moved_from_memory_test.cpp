// Moved-from memory owners (device_buffer, stream_ordered_buffer, managed_buffer, pinned_buffer,
// pitched_buffer, host_registration, ipc_mapping, ipc_pool_memory): every access throws
// cuwrap::usage_error naming the type and the operation (never a null pointer for a kernel),
// and the test's line wherever the operation takes a call site (copies, fills and graph nodes
// that take the owner included), before any driver call; destroying and assigning them is
// silent.
#include <doctest/doctest.h>

#include <cuwrap/cuwrap.hpp>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ipc_exporter.hpp"
#include "moved_from_checks.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_moved_from;
using cuwrap::testing::check_moved_from_without_call_site;
using cuwrap::testing::ipc_exporter;
using cuwrap::testing::moved_from_argument_message;
using cuwrap::testing::moved_from_message;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::total;

namespace {

// NOLINTBEGIN(bugprone-use-after-move): using moved-from objects is what these tests do.

using fixture = cuwrap::testing::moved_from_fixture;

}  // namespace

TEST_SUITE("moved from") {
  TEST_CASE_FIXTURE(fixture, "a moved-from device_buffer hands out no null pointer") {
    cuwrap::stream s{ctx};
    cuwrap::device_buffer<int> a{ctx, 8};
    cuwrap::device_buffer<int> b{std::move(a)};
    CHECK(a.moved_from());
    CHECK(a.size() == 0);
    CHECK_FALSE(b.moved_from());
    const auto data = moved_from_message("device_buffer", "data");
    check_moved_from(data, [&] { (void)a.data(); });
    check_moved_from(data, [&] { (void)a.span(); });
    check_moved_from(data, [&] { (void)a.address(); });
    check_moved_from(data, [&] { (void)cuwrap::as_device_span(a); });
    check_moved_from_without_call_site(
        data, [&] { [[maybe_unused]] const cuwrap::device_span<int> v = a; });
    std::vector<int> h(8);
    check_moved_from(data, [&] { cuwrap::copy(h, a); });
    check_moved_from(data, [&] { cuwrap::copy(a, h); });
    check_moved_from(data, [&] { cuwrap::copy(s, a, h); });
    check_moved_from(data, [&] { cuwrap::copy(s, h, a); });
    check_moved_from(data, [&] { cuwrap::fill(a, 0); });
    check_moved_from(data, [&] { cuwrap::fill(s, a, 0); });
    check_moved_from(data, [&] { cuwrap::zero(a); });
    check_moved_from(data, [&] { cuwrap::zero(s, a); });
    check_moved_from(data, [&] { cuwrap::copy_peer(ctx, b, ctx, a); });
    check_moved_from(data, [&] { cuwrap::copy_peer(s, ctx, a, ctx, b); });
    cuwrap::graph graph{ctx};
    check_moved_from(data, [&] { (void)graph.add_copy(b, a); });
    check_moved_from(data, [&] { (void)graph.add_fill(a, 1); });
    const auto copy_node = graph.add_copy(b, h);
    const auto fill_node = graph.add_fill(b, 1);
    const auto exec = graph.instantiate();
    check_moved_from(data, [&] { exec.set_copy_params(copy_node, a, h); });
    check_moved_from(data, [&] { exec.set_fill_params(fill_node, a, 2); });
    auto k = cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx")
                 .kernel<void(float*, float, int)>("scale");
    cuwrap::device_buffer<float> f{ctx, 4};
    cuwrap::device_buffer<float> g{std::move(f)};
    check_moved_from(moved_from_message("device_buffer", "data"), [&] {
      s.launch(k, cuwrap::launch_config{{1}, {4}}, f.data(), 2.0f, 4);
    });
    // A zero-element buffer is not moved from: its data() is null and fine to ask for.
    cuwrap::device_buffer<int> none{ctx, 0};
    CHECK_FALSE(none.moved_from());
    CHECK(none.data() == nullptr);
    // Released: the memory is the caller's, the buffer is empty.
    cuwrap::device_buffer<int> r{ctx, 4};
    const auto span = r.release();
    CHECK(r.moved_from());
    check_moved_from(data, [&] { (void)r.data(); });
    auto back = cuwrap::device_buffer<int>::adopt(ctx, span);
    CHECK(back.data() == span.data());
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from stream_ordered_buffer fails before the driver") {
    cuwrap::stream s{ctx};
    cuwrap::stream_ordered_buffer<int> a{s, 8};
    auto b = std::move(a);
    CHECK(a.moved_from());
    CHECK(b.stream() == s);
    const auto msg = [](const char* op) { return moved_from_message("stream_ordered_buffer", op); };
    check_moved_from(msg("data"), [&] { (void)a.data(); });
    check_moved_from(msg("data"), [&] { (void)a.span(); });
    check_moved_from(msg("stream"), [&] { (void)a.stream(); });
    std::vector<int> h(8);
    check_moved_from(msg("data"), [&] { cuwrap::copy(s, h, a); });
    check_moved_from_without_call_site(
        msg("data"), [&] { [[maybe_unused]] const cuwrap::device_span<const int> v = a; });
    const auto pool = cuwrap::memory_pool::default_pool(cuwrap::device::get(0));
    auto c = pool.allocate<int>(s, 4);
    auto d = std::move(c);
    check_moved_from(msg("data"), [&] { (void)c.address(); });
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from managed_buffer fails before the driver") {
    cuwrap::stream s{ctx};
    cuwrap::managed_buffer<int> a{ctx, 8};
    auto b = std::move(a);
    const auto msg = [](const char* op) { return moved_from_message("managed_buffer", op); };
    check_moved_from_without_call_site(msg("data"), [&] { (void)a[0]; });
    check_moved_from(msg("data"), [&] { (void)a.host(); });
    check_moved_from(msg("data"), [&] { (void)a.span(); });
    check_moved_from(msg("data"), [&] { (void)a.address(); });
    check_moved_from(msg("data"), [&] { (void)a.begin(); });
    check_moved_from(msg("data"), [&] { (void)a.end(); });
    check_moved_from(msg("data"), [&] { cuwrap::fill(a, 3); });
    const auto here = cuwrap::memory_location::on(cuwrap::device::get(0));
    check_moved_from(msg("prefetch"), [&] { a.prefetch(s, here); });
    check_moved_from(msg("advise"),
                     [&] { a.advise(cuwrap::memory_advice::set_read_mostly, here); });
    check_moved_from(msg("read_mostly"), [&] { (void)a.read_mostly(); });
    check_moved_from(msg("preferred_location"), [&] { (void)a.preferred_location(); });
    check_moved_from(msg("last_prefetch_location"), [&] { (void)a.last_prefetch_location(); });
    cuwrap::stream gone{ctx};
    auto kept = std::move(gone);
    check_moved_from(moved_from_argument_message("managed_buffer", "prefetch", "stream"),
                     [&] { b.prefetch(gone, here); });
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from pinned_buffer and host_registration fail first") {
    cuwrap::pinned_buffer<int> a{ctx, 8, cuwrap::pinned_flags::device_mapped};
    auto b = std::move(a);
    const auto pinned = [](const char* op) { return moved_from_message("pinned_buffer", op); };
    check_moved_from_without_call_site(pinned("data"), [&] { (void)a[1]; });
    check_moved_from(pinned("data"), [&] { (void)a.begin(); });
    check_moved_from(pinned("data"), [&] { (void)a.end(); });
    check_moved_from(pinned("data"), [&] { (void)a.host(); });
    check_moved_from(pinned("data"), [&] { (void)a.data(); });
    check_moved_from(pinned("device"), [&] { (void)a.device(); });
    std::vector<int> h(8);
    check_moved_from(pinned("data"), [&] { cuwrap::copy(h, a); });
    check_moved_from(pinned("data"), [&] { cuwrap::copy(a, h); });

    std::vector<int> host(1024);
    cuwrap::host_registration r{ctx, std::span{host}, cuwrap::registration_flags::device_mapped};
    auto r2 = std::move(r);
    CHECK(r.moved_from());
    CHECK(r.size_bytes() == 0);
    CHECK(r2.size_bytes() == host.size() * sizeof(int));
    const auto reg = [](const char* op) { return moved_from_message("host_registration", op); };
    check_moved_from(reg("data"), [&] { (void)r.data(); });
    check_moved_from(reg("device_address"), [&] { (void)r.device_address(); });
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from pitched_buffer fails before the driver") {
    cuwrap::pitched_buffer<float> a{ctx, 5, 3};
    const auto pitch = a.pitch_bytes();
    auto b = std::move(a);
    CHECK(a.moved_from());
    CHECK(b.pitch_bytes() == pitch);
    CHECK(b.width() == 5);
    const auto data = moved_from_message("pitched_buffer", "data");
    check_moved_from(data, [&] { (void)a.data(); });
    check_moved_from(data, [&] { (void)a.view(); });
    check_moved_from_without_call_site(
        data, [&] { [[maybe_unused]] const cuwrap::pitched_span<float> v = a; });
    std::vector<float> h(15);
    const auto dense = cuwrap::pitched_span<float>::dense(h.data(), 5, 3);
    cuwrap::stream s{ctx};
    check_moved_from(data, [&] { cuwrap::copy_2d(a, dense); });
    check_moved_from(data, [&] { cuwrap::copy_2d(dense, a); });
    check_moved_from(data, [&] { cuwrap::copy_2d(b, a); });
    check_moved_from(data, [&] { cuwrap::copy_2d(s, a, dense); });
    check_moved_from(data, [&] { cuwrap::copy_2d(s, dense, a); });
    // A whole buffer copies through the same overloads.
    std::vector<float> values(15, 1.5f);
    cuwrap::copy_2d(b, cuwrap::pitched_span<const float>::dense(values.data(), 5, 3));
    cuwrap::copy_2d(dense, b);
    CHECK(h == values);
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from imported pool allocation fails before the driver") {
    cuwrap::stream s{ctx};
    cuwrap::memory_pool_options options;
    options.sharing = cuwrap::pool_sharing::posix_fd;
    cuwrap::memory_pool pool{cuwrap::device::get(0), options};
    auto exported = pool.allocate<int>(s, 16);
    s.synchronize();
    const auto imported_pool = cuwrap::import_pool(cuwrap::export_pool(pool));
    const auto pointer = cuwrap::export_pool_pointer(exported.span());
    cuwrap::ipc_pool_memory<int> a{ctx, imported_pool, pointer, 16};
    auto b = std::move(a);
    check_moved_from(moved_from_message("ipc_pool_memory", "data"), [&] { (void)a.span(); });
    check_moved_from(moved_from_message("ipc_pool_memory", "data"), [&] { (void)a.data(); });
    std::vector<int> h(16);
    check_moved_from(moved_from_message("ipc_pool_memory", "data"), [&] { cuwrap::copy(s, h, a); });
    cuwrap::memory_pool gone{cuwrap::device::get(0)};
    auto kept = std::move(gone);
    check_moved_from(
        moved_from_argument_message("ipc_pool_memory", "ipc_pool_memory", "memory_pool"), [&] {
          cuwrap::ipc_pool_memory<int> bad{ctx, gone, pointer, 16};
        });
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from ipc_mapping fails before the driver") {
    const ipc_exporter exporter;  // another process: the driver refuses a process its own handles
    cuwrap::stream s{ctx};
    cuwrap::ipc_mapping<int> a{ctx, exporter.memory(), ipc_exporter::count};
    cuwrap::ipc_mapping<int> b{std::move(a)};
    CHECK(a.moved_from());
    CHECK(a.size() == 0);
    CHECK_FALSE(b.moved_from());
    CHECK(b.size() == ipc_exporter::count);
    const auto data = moved_from_message("ipc_mapping", "data");
    check_moved_from(data, [&] { (void)a.data(); });
    check_moved_from(data, [&] { (void)a.span(); });
    check_moved_from_without_call_site(
        data, [&] { [[maybe_unused]] const cuwrap::device_span<int> v = a; });
    std::vector<int> h(ipc_exporter::count);
    check_moved_from(data, [&] { cuwrap::copy(h, a); });
    check_moved_from(data, [&] { cuwrap::copy(s, h, a); });
    check_moved_from(data, [&] { cuwrap::fill(a, 7); });
    // Destroying and assigning the moved-from mapping closes nothing.
    const auto calls = calls_made_by([&] {
      cuwrap::ipc_mapping<int> c{std::move(a)};
      a = std::move(c);
    });
    CHECK(total(calls) == 0);
    CHECK(cuwrap::testing::swcuda().live_handles(SWCU_IPC_MAPPING) == 1);
    // The mapping moved to is whole: it reads what the exporter wrote (0, 1, 2...).
    cuwrap::copy(h, b);
    for (std::size_t i = 0; i < h.size(); ++i) CHECK(h[i] == static_cast<int>(i));
  }

  TEST_CASE_FIXTURE(fixture, "destroying and assigning moved-from buffers makes no driver call") {
    cuwrap::stream s{ctx};
    cuwrap::device_buffer<int> d{ctx, 4};
    cuwrap::stream_ordered_buffer<int> o{s, 4};
    cuwrap::pinned_buffer<int> p{ctx, 4};
    cuwrap::pitched_buffer<int> q{ctx, 4, 4};
    auto d2 = std::move(d);
    auto o2 = std::move(o);
    auto p2 = std::move(p);
    auto q2 = std::move(q);
    const auto calls = calls_made_by([&] {
      {
        auto d3 = std::move(d);
        d = std::move(d3);
        auto o3 = std::move(o);
        o = std::move(o3);
        auto p3 = std::move(p);
        p = std::move(p3);
        auto q3 = std::move(q);
        q = std::move(q3);
      }
    });
    CHECK(total(calls) == 0);
    s.synchronize();
  }

  TEST_CASE_FIXTURE(sw_fixture, "a span out of range is a usage error naming the range") {
    int storage[4] = {};
    const cuwrap::device_span<int> span{storage, 4};
    CHECK(span.subspan(1, 2).size() == 2);
    CHECK(span.last(1).data() == storage + 3);
    // The message, then " at " the line of the call in this file (a wrapped call may put the
    // lambda a line or two below).
    const auto check_range = [](const std::string& expected, auto operation,
                                std::source_location test = std::source_location::current()) {
      const auto [error, calls] = cuwrap::testing::usage_error_and_calls(operation);
      REQUIRE(error.has_value());
      CHECK(total(calls) == 0);
      CHECK(std::string{error->what()}.starts_with(expected + " at " +
                                                   cuwrap::testing::file_name_only(test) + ":"));
      CHECK(std::string_view{error->where().file_name()} == test.file_name());
      CHECK(error->where().line() >= test.line());
      CHECK(error->where().line() <= test.line() + 2);
    };
    check_range("cuwrap::device_span::subspan: offset 5 is past the end of the span's 4 elements",
                [&] { (void)span.subspan(5); });
    check_range(
        "cuwrap::device_span::subspan: elements [1, 1 + 4) are outside of the span's 4 elements",
        [&] { (void)span.subspan(1, 4); });
    check_range(
        "cuwrap::device_span::first: elements [0, 0 + 5) are outside of the span's 4 elements",
        [&] { (void)span.first(5); });
    check_range(
        "cuwrap::device_span::last: elements [0, 0 + 5) are outside of the span's 4 elements",
        [&] { (void)span.last(5); });
  }

  // NOLINTEND(bugprone-use-after-move)
}
