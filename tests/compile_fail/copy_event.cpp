// expect: use of deleted function .+cuwrap::event::event\(const cuwrap::event&\)
// A cuwrap::event is an owner: it moves, it does not copy.
#include <cuwrap/cuwrap.hpp>
#include <utility>

cuwrap::event take(cuwrap::event& original) {
#ifdef CUWRAP_COMPILE_FAIL
  cuwrap::event copy = original;
#else
  cuwrap::event copy = std::move(original);
#endif
  return copy;
}
