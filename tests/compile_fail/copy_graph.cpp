// expect: use of deleted function .+cuwrap::graph::graph\(const cuwrap::graph&\)
// A cuwrap::graph is an owner: it moves, it does not copy.
#include <cuwrap/cuwrap.hpp>
#include <utility>

cuwrap::graph take(cuwrap::graph& original) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::graph copy = original;
#else
  cuwrap::graph copy = std::move(original);
#endif
  return copy;
}
