// expect: use of deleted function .+cuwrap::graph_exec::graph_exec\(const cuwrap::graph_exec&\)
// A cuwrap::graph_exec is an owner: it moves, it does not copy.
#include <cuwrap/cuwrap.hpp>
#include <utility>

cuwrap::graph_exec take(cuwrap::graph_exec& original) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::graph_exec copy = original;
#else
  cuwrap::graph_exec copy = std::move(original);
#endif
  return copy;
}
