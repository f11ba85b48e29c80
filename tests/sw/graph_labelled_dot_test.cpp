// graph_ref::to_labelled_dot() draws child graphs and conditional bodies as clusters of their own
// (DOT "subgraph cluster_..."), nested, with the same kind-and-call-site labels as the graph's
// own nodes.
#include <doctest/doctest.h>

#include <string>

#include "cuwrap/cuwrap.hpp"
#include "cuwrap/graph.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;

namespace {

struct fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
};

// One node line of the DOT output.
std::string node_line(const std::string& indent, const std::string& id, const char* kind,
                      const cuwrap::graph_node& node) {
  const std::string label = node.label();
  return indent + id + " [shape=box, label=\"" + kind + (label.empty() ? "" : "\\n" + label) +
         "\"];\n";
}

}  // namespace

TEST_SUITE("graph") {
  TEST_CASE_FIXTURE(fixture, "to_labelled_dot draws child graphs and conditional bodies") {
    cuwrap::device_buffer<float> data{ctx, 16};
    cuwrap::graph child{ctx};
    (void)child.add_fill(data, 1.0f);
    cuwrap::graph g{ctx};
    const auto fill = g.add_fill(data, 2.0f);
    const auto holder = g.add_child(child, fill);
    const auto branch =
        g.add_conditional(g.make_condition(1), cuwrap::conditional::if_else, holder);
    const auto then_fill = branch.body(0).add_fill(data, 3.0f);
    const auto then_join = branch.body(0).add_empty(then_fill);
    const auto inner =
        branch.body(1).add_conditional(g.make_condition(0), cuwrap::conditional::while_loop);
    const auto loop_fill = inner.body(0).add_fill(data, 4.0f);

    // The child graph node holds a copy of `child` (cuGraphAddChildGraphNode): the copy's node
    // was not added through cuwrap, so it has no call site.
    const std::string expected = "digraph cuwrap_graph {\n" +
                                 node_line("  ", "n0", "memset", fill) +
                                 node_line("  ", "n1", "child graph", holder) +
                                 node_line("  ", "n2", "conditional", branch.node) +
                                 "  n0 -> n1;\n"
                                 "  n1 -> n2;\n"
                                 "  subgraph cluster_n1_0_ {\n"
                                 "    label=\"child graph of n1\";\n"
                                 "    n1_0_n0 [shape=box, label=\"memset\"];\n"
                                 "  }\n"
                                 "  subgraph cluster_n2_0_ {\n"
                                 "    label=\"body 0 of n2\";\n" +
                                 node_line("    ", "n2_0_n0", "memset", then_fill) +
                                 node_line("    ", "n2_0_n1", "empty", then_join) +
                                 "    n2_0_n0 -> n2_0_n1;\n"
                                 "  }\n"
                                 "  subgraph cluster_n2_1_ {\n"
                                 "    label=\"body 1 of n2\";\n" +
                                 node_line("    ", "n2_1_n0", "conditional", inner.node) +
                                 "    subgraph cluster_n2_1_n0_0_ {\n"
                                 "      label=\"body 0 of n2_1_n0\";\n" +
                                 node_line("      ", "n2_1_n0_0_n0", "memset", loop_fill) +
                                 "    }\n"
                                 "  }\n"
                                 "}\n";
    CHECK(g.to_labelled_dot() == expected);
    CHECK_FALSE(fill.label().empty());  // the labels above are call sites, not empty
    CHECK_FALSE(loop_fill.label().empty());
  }
}
