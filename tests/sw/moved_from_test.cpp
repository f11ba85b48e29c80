// Moved-from handle owners (stream, event, context, graph, graph_exec, memory_pool, module,
// library, kernel) and views made from them: every operation throws cuwrap::usage_error naming
// the type and the operation, before any driver call; destroying and assigning them is silent.
#include <doctest/doctest.h>

#include <cuwrap/cuwrap.hpp>
#include <string>
#include <utility>
#include <vector>

#include "moved_from_checks.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::check_moved_from;
using cuwrap::testing::moved_from_argument_message;
using cuwrap::testing::moved_from_message;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::total;

namespace {

// NOLINTBEGIN(bugprone-use-after-move): using moved-from objects is what these tests do.

using fixture = cuwrap::testing::moved_from_fixture;

}  // namespace

TEST_SUITE("moved from") {
  TEST_CASE_FIXTURE(fixture, "a moved-from stream is empty, not the legacy default stream") {
    cuwrap::stream a{ctx};
    cuwrap::stream b{std::move(a)};
    CHECK(a.empty());
    CHECK_FALSE(b.empty());
    CHECK(a.get() != CUstream{});  // NULL would be the legacy default stream
    CHECK(a.get() != cuwrap::stream_ref::legacy().get());
    CHECK(a.get() != cuwrap::stream_ref::per_thread().get());
    const cuwrap::stream_ref view = a;
    CHECK(view.empty());
    CHECK_FALSE(cuwrap::stream_ref{CUstream{}}.empty());  // a NULL CUstream is a real stream
    cuwrap::event e{ctx};
    const auto msg = [](const char* op) { return moved_from_message("stream", op); };
    check_moved_from(msg("synchronize"), [&] { a.synchronize(); });
    check_moved_from(msg("synchronize"), [&] { view.synchronize(); });
    check_moved_from(msg("is_done"), [&] { (void)a.is_done(); });
    check_moved_from(msg("wait"), [&] { a.wait(e); });
    check_moved_from(msg("record"), [&] { a.record(e); });
    check_moved_from(msg("enqueue"), [&] { a.enqueue([] {}); });
    check_moved_from(msg("priority"), [&] { (void)a.priority(); });
    check_moved_from(msg("flags"), [&] { (void)view.flags(); });
    check_moved_from(msg("context"), [&] { (void)a.context(); });
    check_moved_from(msg("is_capturing"), [&] { (void)a.is_capturing(); });
    check_moved_from(msg("id"), [&] { (void)view.id(); });
    check_moved_from(moved_from_argument_message("stream", "begin_capture", "stream"),
                     [&] { (void)a.begin_capture(); });
    check_moved_from(moved_from_argument_message("event", "record", "stream"),
                     [&] { e.record(a); });
    check_moved_from(moved_from_argument_message("", "capture_state", "stream"),
                     [&] { (void)cuwrap::capture_state(a); });
  }

  TEST_CASE_FIXTURE(fixture, "copies and fills on a moved-from stream never reach the driver") {
    cuwrap::stream a{ctx};
    auto b = std::move(a);
    cuwrap::device_buffer<int> d{ctx, 4};
    std::vector<int> h(4);
    check_moved_from(moved_from_argument_message("", "copy", "stream"),
                     [&] { cuwrap::copy(a, d, h); });
    check_moved_from(moved_from_argument_message("", "fill", "stream"),
                     [&] { cuwrap::fill(a, d, 1); });
    check_moved_from(moved_from_argument_message("", "zero", "stream"),
                     [&] { cuwrap::zero(a, d); });
    check_moved_from(
        moved_from_argument_message("stream_ordered_buffer", "stream_ordered_buffer", "stream"),
        [&] {
          cuwrap::stream_ordered_buffer<int> bad{a, 4};
        });
  }

  TEST_CASE_FIXTURE(fixture, "a released stream is empty too, and its handle is the caller's") {
    cuwrap::stream a{ctx};
    const CUstream raw = a.release();
    CHECK(a.empty());
    check_moved_from(moved_from_message("stream", "synchronize"), [&] { a.synchronize(); });
    auto back = cuwrap::stream::adopt(raw, ctx);
    back.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from event and its views fail before the driver") {
    cuwrap::stream s{ctx};
    cuwrap::event a{ctx, cuwrap::event_flags::timing};
    cuwrap::event b{std::move(a)};
    CHECK(a.empty());
    CHECK(a.get() == CUevent{});
    const cuwrap::event_ref view = a;
    CHECK(view.empty());
    check_moved_from(moved_from_message("event", "synchronize"), [&] { a.synchronize(); });
    check_moved_from(moved_from_message("event", "synchronize"), [&] { view.synchronize(); });
    check_moved_from(moved_from_message("event", "is_done"), [&] { (void)a.is_done(); });
    check_moved_from(moved_from_message("event", "record"), [&] { a.record(s); });
    check_moved_from(moved_from_argument_message("stream", "wait", "event"), [&] { s.wait(a); });
    check_moved_from(moved_from_argument_message("stream", "record", "event"),
                     [&] { s.record(view); });
    check_moved_from(moved_from_argument_message("", "elapsed", "start event"),
                     [&] { (void)cuwrap::elapsed(a, b); });
    check_moved_from(moved_from_argument_message("", "elapsed", "stop event"),
                     [&] { (void)cuwrap::elapsed(b, a); });
    check_moved_from(moved_from_argument_message("", "export_event", "event"),
                     [&] { (void)cuwrap::export_event(a); });
  }

  TEST_CASE_FIXTURE(sw_fixture, "a moved-from context makes nothing and answers nothing") {
    cuwrap::primary_context a{cuwrap::device::get(0)};
    cuwrap::primary_context b{std::move(a)};
    cuwrap::context c{cuwrap::device::get(0)};
    cuwrap::context d{std::move(c)};
    CHECK(a.empty());
    CHECK(c.empty());
    const cuwrap::context_ref view = c;
    CHECK(view.empty());
    const auto made = [](const char* type) {
      return moved_from_argument_message(type, type, "context");
    };
    // Once a silent std::terminate: now a clear error, before any driver call.
    check_moved_from(made("stream"), [&] { cuwrap::stream s{a}; });
    check_moved_from(made("stream"), [&] { cuwrap::stream s{c}; });
    check_moved_from(made("event"), [&] { cuwrap::event e{a}; });
    check_moved_from(made("graph"), [&] { cuwrap::graph g{c}; });
    check_moved_from(made("device_buffer"), [&] { cuwrap::device_buffer<int> m{a, 4}; });
    check_moved_from(made("device_buffer"), [&] { cuwrap::device_buffer<int> m{a, 0}; });
    check_moved_from(made("managed_buffer"), [&] { cuwrap::managed_buffer<int> m{a, 4}; });
    check_moved_from(made("pinned_buffer"), [&] { cuwrap::pinned_buffer<int> m{a, 4}; });
    check_moved_from(made("pitched_buffer"), [&] { cuwrap::pitched_buffer<int> m{a, 4, 4}; });
    std::vector<int> host(16);
    check_moved_from(made("host_registration"), [&] {
      cuwrap::host_registration r{a, std::span{host}};
    });
    check_moved_from(made("ipc_mapping"), [&] {
      cuwrap::ipc_mapping<int> m{a, cuwrap::ipc_memory_handle{}, 4};
    });
    check_moved_from(moved_from_argument_message("event", "open_event", "context"),
                     [&] { (void)cuwrap::open_event(a, cuwrap::ipc_event_handle{}); });
    check_moved_from(made("peer_access"), [&] { cuwrap::peer_access p{a, b}; });
    check_moved_from(made("scoped_current_context"),
                     [&] { cuwrap::scoped_current_context s{view}; });
    check_moved_from(moved_from_argument_message("module", "load", "context"),
                     [&] { (void)cuwrap::module::load(c, std::string_view{".version 8.0"}); });
    check_moved_from(moved_from_argument_message("stream", "adopt", "context"),
                     [&] { (void)cuwrap::stream::adopt(CUstream{}, a); });
    check_moved_from(moved_from_argument_message("event", "adopt", "context"),
                     [&] { (void)cuwrap::event::adopt(CUevent{}, a); });
    check_moved_from(moved_from_argument_message("graph", "adopt", "context"),
                     [&] { (void)cuwrap::graph::adopt(CUgraph{}, a); });
    const auto msg = [](const char* op) { return moved_from_message("context", op); };
    check_moved_from(msg("device"), [&] { (void)a.device(); });
    check_moved_from(msg("device"), [&] { (void)view.device(); });
    check_moved_from(msg("synchronize"), [&] { c.synchronize(); });
    check_moved_from(msg("flags"), [&] { (void)view.flags(); });
    check_moved_from(msg("limit"), [&] { (void)view.limit(cuwrap::context_limit::stack_size); });
    check_moved_from(msg("set_limit"),
                     [&] { view.set_limit(cuwrap::context_limit::stack_size, 1024); });
    check_moved_from(msg("stream_priorities"), [&] { (void)c.stream_priorities(); });
    check_moved_from(msg("cache_config"), [&] { (void)c.cache_config(); });
    check_moved_from(msg("set_cache_config"),
                     [&] { c.set_cache_config(cuwrap::cache_config::prefer_l1); });
    check_moved_from(msg("id"), [&] { (void)a.id(); });
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from graph and graph_exec fail before the driver") {
    cuwrap::stream s{ctx};
    cuwrap::event e{ctx};
    cuwrap::graph a{ctx};
    (void)a.add_empty();
    cuwrap::graph b{std::move(a)};
    CHECK(a.empty());
    const cuwrap::graph_ref view = a;
    CHECK(view.empty());
    const auto msg = [](const char* op) { return moved_from_message("graph", op); };
    check_moved_from(msg("add_empty"), [&] { (void)a.add_empty(); });
    check_moved_from(msg("add_empty"), [&] { (void)view.add_empty(); });
    check_moved_from(msg("add_host"), [&] { (void)a.add_host([] {}); });
    check_moved_from(msg("add_event_record"), [&] { (void)a.add_event_record(e); });
    check_moved_from(msg("add_event_wait"), [&] { (void)a.add_event_wait(e); });
    check_moved_from(msg("add_child"), [&] { (void)a.add_child(b); });
    check_moved_from(moved_from_argument_message("graph", "add_child", "child graph"),
                     [&] { (void)b.add_child(a); });
    check_moved_from(msg("add_memory_alloc"), [&] { (void)a.add_memory_alloc(64); });
    check_moved_from(msg("nodes"), [&] { (void)a.nodes(); });
    check_moved_from(msg("edges"), [&] { (void)a.edges(); });
    check_moved_from(msg("to_dot"), [&] { (void)a.to_dot(); });
    check_moved_from(msg("make_condition"), [&] { (void)a.make_condition(); });
    check_moved_from(msg("add_conditional"), [&] {
      (void)a.add_conditional(cuwrap::graph_condition{1}, cuwrap::conditional::if_then);
    });
    check_moved_from(msg("to_labelled_dot"), [&] { (void)a.to_labelled_dot(); });
    check_moved_from(msg("instantiate"), [&] { (void)a.instantiate(s); });
    check_moved_from(moved_from_argument_message("stream", "capture_into", "graph"),
                     [&] { auto c = cuwrap::capture_into(s, a); });
    check_moved_from(msg("clone"), [&] { (void)a.clone(); });
    check_moved_from(msg("instantiate"), [&] { (void)a.instantiate(); });
    cuwrap::event gone{ctx};
    auto taken = std::move(gone);
    check_moved_from(moved_from_argument_message("graph", "add_event_record", "event"),
                     [&] { (void)b.add_event_record(gone); });

    cuwrap::graph_exec x = b.instantiate();
    cuwrap::graph_exec y{std::move(x)};
    CHECK(x.empty());
    const cuwrap::graph_exec_ref xview = x;
    const auto xmsg = [](const char* op) { return moved_from_message("graph_exec", op); };
    check_moved_from(xmsg("launch"), [&] { x.launch(s); });
    check_moved_from(xmsg("launch"), [&] { xview.launch(s); });
    check_moved_from(xmsg("upload"), [&] { x.upload(s); });
    check_moved_from(xmsg("update"), [&] { x.update(b); });
    check_moved_from(moved_from_argument_message("graph_exec", "update", "graph"),
                     [&] { y.update(a); });
    const auto node = b.nodes().front();
    check_moved_from(xmsg("set_enabled"), [&] { x.set_enabled(node, false); });
    check_moved_from(xmsg("enabled"), [&] { (void)x.enabled(node); });
    check_moved_from(xmsg("set_host"), [&] { x.set_host(node, [] {}); });
    check_moved_from(xmsg("set_event_record"), [&] { x.set_event_record(node, e); });
    check_moved_from(xmsg("set_event_wait"), [&] { x.set_event_wait(node, e); });
    check_moved_from(xmsg("set_child"), [&] { x.set_child(node, b); });
    cuwrap::stream gone_stream{ctx};
    auto kept = std::move(gone_stream);
    check_moved_from(moved_from_argument_message("graph_exec", "launch", "stream"),
                     [&] { y.launch(gone_stream); });
    check_moved_from(moved_from_argument_message("graph", "instantiate", "stream"),
                     [&] { (void)b.instantiate(gone_stream); });
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from memory pool fails before the driver") {
    cuwrap::stream s{ctx};
    cuwrap::memory_pool_options options;
    options.sharing = cuwrap::pool_sharing::posix_fd;
    cuwrap::memory_pool a{cuwrap::device::get(0), options};
    cuwrap::memory_pool b{std::move(a)};
    CHECK(a.empty());
    CHECK(a.sharing() == cuwrap::pool_sharing::none);
    CHECK(b.sharing() == cuwrap::pool_sharing::posix_fd);
    const cuwrap::memory_pool_ref view = a;
    const auto msg = [](const char* op) { return moved_from_message("memory_pool", op); };
    check_moved_from(msg("allocate"), [&] { (void)a.allocate<int>(s, 4); });
    check_moved_from(msg("allocate"), [&] { (void)view.allocate<int>(s, 4); });
    check_moved_from(msg("trim"), [&] { a.trim(0); });
    check_moved_from(msg("release_threshold"), [&] { (void)a.release_threshold(); });
    check_moved_from(msg("set_release_threshold"), [&] { a.set_release_threshold(0); });
    check_moved_from(msg("usage"), [&] { (void)a.usage(); });
    check_moved_from(msg("reset_high_watermarks"), [&] { a.reset_high_watermarks(); });
    const auto dev = cuwrap::device::get(0);  // outside: device::get calls the driver
    check_moved_from(msg("allow_access"), [&] { a.allow_access(dev); });
    check_moved_from(msg("access"), [&] { (void)a.access(dev); });
    check_moved_from(msg("reuse"), [&] { (void)a.reuse(cuwrap::pool_reuse::allow_opportunistic); });
    check_moved_from(msg("set_reuse"),
                     [&] { a.set_reuse(cuwrap::pool_reuse::allow_opportunistic, false); });
    check_moved_from(moved_from_argument_message("", "set_current_pool", "memory_pool"),
                     [&] { cuwrap::set_current_pool(dev, a); });
    check_moved_from(moved_from_argument_message("", "set_current_pool", "memory_pool"),
                     [&] { cuwrap::set_current_pool(cuwrap::pool_location::host(), view); });
    check_moved_from(moved_from_argument_message("", "export_pool", "memory_pool"),
                     [&] { (void)cuwrap::export_pool(a); });
    check_moved_from(moved_from_argument_message("", "export_pool", "memory_pool"),
                     [&] { (void)cuwrap::export_pool(view); });
    cuwrap::stream gone{ctx};
    auto kept = std::move(gone);
    check_moved_from(moved_from_argument_message("memory_pool", "allocate", "stream"),
                     [&] { (void)b.allocate<int>(gone, 4); });
    const cuwrap::managed_range ranges[] = {{CUdeviceptr{0x1000}, 64}};
    const auto host = cuwrap::memory_location::host();
    check_moved_from(moved_from_argument_message("", "prefetch", "stream"),
                     [&] { cuwrap::prefetch(gone, ranges, host); });
    check_moved_from(moved_from_argument_message("", "discard", "stream"),
                     [&] { cuwrap::discard(gone, ranges); });
    check_moved_from(moved_from_argument_message("", "discard_and_prefetch", "stream"),
                     [&] { cuwrap::discard_and_prefetch(gone, ranges, host); });
  }

  TEST_CASE_FIXTURE(fixture, "a moved-from module, library or kernel fails before the driver") {
    const std::string path = std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx";
    auto a = cuwrap::module::load_file(ctx, path);
    auto b = std::move(a);
    CHECK(a.get() == CUmodule{});
    check_moved_from(moved_from_message("module", "kernel"), [&] { (void)a.kernel("no_params"); });
    check_moved_from(moved_from_message("module", "kernel"),
                     [&] { (void)a.kernel<void()>("no_params"); });
    check_moved_from(moved_from_message("module", "kernels"), [&] { (void)a.kernels(); });
    check_moved_from(moved_from_message("module", "global"),
                     [&] { (void)a.global<int>("counter"); });

    auto lib = cuwrap::library::load_file(path);
    auto lib2 = std::move(lib);
    check_moved_from(moved_from_message("library", "kernel"),
                     [&] { (void)lib.kernel("no_params"); });
    check_moved_from(moved_from_message("library", "kernels"), [&] { (void)lib.kernels(); });

    cuwrap::stream s{ctx};
    auto k = b.kernel<void()>("no_params");
    auto k2 = std::move(k);
    CHECK(k.get() == CUfunction{});
    auto u = b.kernel("no_params");
    auto u2 = std::move(u);
    const cuwrap::launch_config cfg{{1}, {1}};
    const auto launch_msg = moved_from_argument_message("stream", "launch", "kernel");
    check_moved_from(launch_msg, [&] { s.launch(k, cfg); });
    check_moved_from(launch_msg, [&] { s.launch(u, cfg); });
    check_moved_from(moved_from_message("kernel", "attributes"), [&] { (void)u.attributes(); });
    check_moved_from(moved_from_message("kernel", "set_max_dynamic_shared_memory"),
                     [&] { u.set_max_dynamic_shared_memory(16); });
    cuwrap::graph g{ctx};
    check_moved_from(moved_from_argument_message("graph", "add_kernel", "kernel"),
                     [&] { (void)g.add_kernel(k, cfg, {}); });
    cuwrap::stream gone{ctx};
    auto kept = std::move(gone);
    check_moved_from(moved_from_message("stream", "launch"), [&] { gone.launch(k2, cfg); });
    s.launch(k2, cfg);  // the kernel moved to is whole
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "destroying and assigning moved-from owners makes no driver call") {
    cuwrap::stream s{ctx};
    cuwrap::event e{ctx};
    cuwrap::graph g{ctx};
    cuwrap::memory_pool p{cuwrap::device::get(0)};
    cuwrap::stream s2{std::move(s)};
    cuwrap::event e2{std::move(e)};
    cuwrap::graph g2{std::move(g)};
    cuwrap::memory_pool p2{std::move(p)};
    const auto calls = calls_made_by([&] {
      {
        cuwrap::stream t{std::move(s)};  // from a moved-from owner: empty too
        s = std::move(t);                // assigning empty to empty
        cuwrap::event f{std::move(e)};
        e = std::move(f);
        cuwrap::graph h{std::move(g)};
        g = std::move(h);
        cuwrap::memory_pool q{std::move(p)};
        p = std::move(q);
      }  // t, f, h, q destroyed: nothing to destroy
    });
    CHECK(total(calls) == 0);
    CHECK(s.empty());
    // Assigning a live owner to a moved-from one takes the handle; the source is then empty.
    s = std::move(s2);
    CHECK_FALSE(s.empty());
    CHECK(s2.empty());
    s.synchronize();
  }

  TEST_CASE_FIXTURE(fixture, "the call site of the misuse is in the message") {
    cuwrap::stream a{ctx};
    auto b = std::move(a);
    try {
      a.synchronize();
      FAIL("no exception");
    } catch (const cuwrap::usage_error& err) {
      CHECK(err.where().line() == __LINE__ - 3);  // the a.synchronize() line
      CHECK(std::string{err.what()}.find("moved_from_test.cpp:") != std::string::npos);
      CHECK(dynamic_cast<const std::logic_error*>(&err) != nullptr);
    }
  }

  // NOLINTEND(bugprone-use-after-move)
}
