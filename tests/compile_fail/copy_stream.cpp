// expect: use of deleted function .+cuwrap::stream::stream\(const cuwrap::stream&\)
// A cuwrap::stream is an owner: it moves, it does not copy.
#include <cuwrap/cuwrap.hpp>
#include <utility>

cuwrap::stream take(cuwrap::stream& original) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::stream copy = original;
#else
  cuwrap::stream copy = std::move(original);
#endif
  return copy;
}
