// The side table of node labels (cuwrap/detail/graph_labels.hpp).
#include "cuwrap/detail/graph_labels.hpp"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace cuwrap::detail {
namespace {

struct label {
  CUgraph graph;
  std::string site;  // "file:line"
};

struct table {
  std::mutex mutex;
  std::unordered_map<CUgraphNode, label> nodes;
  std::unordered_map<CUgraph, CUgraph> parents;  // body graph -> the graph holding its node
  std::unordered_map<CUgraphNode, std::vector<CUgraph>> bodies;  // conditional node -> bodies
};

table& labels() {
  static auto* const t = new table;  // never destroyed: graphs may outlive static destruction
  return *t;
}

// True if `g` is `root` or a body nested in it.
bool within(const table& t, CUgraph g, CUgraph root) {
  for (int depth = 0; depth < 64 && g != nullptr; ++depth) {
    if (g == root) return true;
    const auto it = t.parents.find(g);
    g = it == t.parents.end() ? nullptr : it->second;
  }
  return false;
}

}  // namespace

void label_node(CUgraph graph, CUgraphNode node, std::source_location where) {
  table& t = labels();
  const std::lock_guard lock{t.mutex};
  t.nodes[node] = {graph, std::string{where.file_name()} + ":" + std::to_string(where.line())};
}

void label_body(CUgraph parent, CUgraphNode node, CUgraph body) {
  table& t = labels();
  const std::lock_guard lock{t.mutex};
  t.parents[body] = parent;
  t.bodies[node].push_back(body);
}

std::vector<CUgraph> conditional_bodies(CUgraphNode node) {
  table& t = labels();
  const std::lock_guard lock{t.mutex};
  const auto it = t.bodies.find(node);
  return it == t.bodies.end() ? std::vector<CUgraph>{} : it->second;
}

std::string node_label(CUgraphNode node) {
  table& t = labels();
  const std::lock_guard lock{t.mutex};
  const auto it = t.nodes.find(node);
  return it == t.nodes.end() ? std::string{} : it->second.site;
}

void forget_labels(CUgraph graph) noexcept {
  table& t = labels();
  const std::lock_guard lock{t.mutex};
  std::erase_if(t.nodes,
                [&t, graph](const auto& entry) { return within(t, entry.second.graph, graph); });
  std::erase_if(t.bodies, [&t, graph](const auto& entry) {
    return !entry.second.empty() && within(t, entry.second.front(), graph);
  });
  std::vector<CUgraph> bodies;
  for (const auto& [body, parent] : t.parents) {
    if (within(t, body, graph)) bodies.push_back(body);
  }
  for (CUgraph body : bodies) t.parents.erase(body);
}

std::size_t labelled_nodes() noexcept {
  table& t = labels();
  const std::lock_guard lock{t.mutex};
  return t.nodes.size();
}

}  // namespace cuwrap::detail
