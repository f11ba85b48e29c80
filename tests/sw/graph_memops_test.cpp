// Memory operation nodes of graphs (<cuwrap/graph_memops.hpp>): added from a memop_batch,
// recorded by capturing a stream's memory operations, updated in an executable graph; a wait
// holds back only the nodes after it.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "call_checks.hpp"
#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::check_one_call;
using cuwrap::testing::sw_fixture;

namespace {

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::device_buffer<std::uint32_t> words{ctx, 4};
  fixture() { cuwrap::fill(words.span(), 0u); }

  [[nodiscard]] cuwrap::device_span<std::uint32_t> word(std::size_t i) {
    return words.span().subspan(i, 1);
  }
  [[nodiscard]] std::vector<std::uint32_t> read() {
    std::vector<std::uint32_t> out(words.size());
    cuwrap::copy(out, words);
    return out;
  }
};

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture, "a memop node waits, then writes, when its graph runs") {
    cuwrap::graph g{ctx};
    cuwrap::memop_batch batch;
    batch.wait(word(0), 1u, cuwrap::wait_condition::equal).write(word(1), 7u);
    std::optional<cuwrap::graph_node> added;
    check_one_call("cuGraphAddBatchMemOpNode", [&] { added = cuwrap::add_memops(g, batch); });
    const cuwrap::graph_node node = *added;
    cuwrap::memop_batch after;
    after.write(word(2), 8u);
    (void)cuwrap::add_memops(g, after, {node});
    CHECK(node.kind() == cuwrap::node_kind::memop_batch);
    const cuwrap::graph_exec exec = g.instantiate();
    exec.launch(s);
    CHECK_FALSE(s.is_done());  // waits for word 0
    cuwrap::stream other{ctx};
    other.write_value(word(0), 1u);
    s.synchronize();
    CHECK(read() == std::vector<std::uint32_t>{1, 7, 8, 0});

    // Updated in the executable graph: the same operations with other values and words.
    cuwrap::memop_batch changed;
    changed.wait(word(0), 1u, cuwrap::wait_condition::equal).write(word(3), 9u);
    check_one_call("cuGraphExecBatchMemOpNodeSetParams",
                   [&] { cuwrap::set_memops(exec, node, changed); });
    exec.launch(s);
    s.synchronize();
    CHECK(read() == std::vector<std::uint32_t>{1, 7, 8, 9});
    // Another kind of operation is the driver's error, naming the call.
    cuwrap::memop_batch other_kind;
    other_kind.write(word(0), 1u).write(word(3), 9u);
    CHECK_THROWS_WITH_AS(cuwrap::set_memops(exec, node, other_kind),
                         doctest::Contains("cuGraphExecBatchMemOpNodeSetParams"), cuwrap::error);
  }

  TEST_CASE_FIXTURE(fixture, "an empty memop batch is refused before the driver") {
    cuwrap::graph g{ctx};
    cuwrap::memop_batch empty;
    CHECK_THROWS_WITH_AS(cuwrap::add_memops(g, empty), doctest::Contains("memop_batch is empty"),
                         cuwrap::usage_error);
    CHECK(g.nodes().empty());
  }

  TEST_CASE_FIXTURE(fixture, "capturing a stream's memory operations records memop nodes") {
    auto capture = s.begin_capture();
    s.wait_value(word(0), 2u, cuwrap::wait_condition::greater_equal);
    s.write_value(word(1), 3u);
    cuwrap::graph g = capture.end();
    const auto nodes = g.nodes();
    REQUIRE(nodes.size() == 2);
    CHECK(nodes[0].kind() == cuwrap::node_kind::memop_batch);
    CHECK(nodes[1].kind() == cuwrap::node_kind::memop_batch);
    CHECK(read() == std::vector<std::uint32_t>{0, 0, 0, 0});  // captured, not run
    const cuwrap::graph_exec exec = g.instantiate();
    exec.launch(s);
    CHECK_FALSE(s.is_done());
    cuwrap::stream other{ctx};
    other.write_value(word(0), 2u);
    s.synchronize();
    CHECK(read() == std::vector<std::uint32_t>{2, 3, 0, 0});
  }

  // Each driver call of building, instantiating, updating and launching a memop graph failing in
  // turn: the error escapes with the injected code and nothing is left behind.
  TEST_CASE_FIXTURE(sw_fixture, "a fault in any call of a memop graph leaks nothing") {
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      cuwrap::device_buffer<std::uint32_t> word{ctx, 1};
      cuwrap::graph g{ctx};
      cuwrap::memop_batch batch;
      batch.write(word.span(), 1u).wait(word.span(), 1u);
      const cuwrap::graph_node node = cuwrap::add_memops(g, batch);
      const cuwrap::graph_exec exec = g.instantiate();
      cuwrap::set_memops(exec, node, batch);
      exec.launch(s);
      s.synchronize();
    });
    CHECK(points >= 6);
  }
}
