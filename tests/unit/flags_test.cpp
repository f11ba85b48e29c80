// The flags template (cuwrap/flags.hpp): one |, &, |= and has() for every flag enum.
#include "cuwrap/flags.hpp"

#include <doctest/doctest.h>

#include "cuwrap/context.hpp"
#include "cuwrap/event.hpp"
#include "cuwrap/graph.hpp"
#include "cuwrap/host_memory.hpp"

namespace {

enum class plain { a = 1, b = 2 };  // did not opt in

template <class E>
concept combinable = requires(E x) {
  x | x;
};

}  // namespace

static_assert(cuwrap::flags_enum<cuwrap::event_flags> &&
              cuwrap::flags_enum<cuwrap::context_flags> &&
              cuwrap::flags_enum<cuwrap::pinned_flags> &&
              cuwrap::flags_enum<cuwrap::registration_flags> &&
              cuwrap::flags_enum<cuwrap::instantiate_flags>);
static_assert(!cuwrap::flags_enum<plain> && !combinable<plain>);
static_assert(!cuwrap::flags_enum<cuwrap::stream_flags>);  // two exclusive values, not bits

TEST_SUITE("flags") {
  TEST_CASE("| and & combine and intersect the bits, and has() needs every bit") {
    using cuwrap::event_flags;
    constexpr auto both = event_flags::timing | event_flags::blocking_sync;
    static_assert(static_cast<unsigned>(both) == 3);
    CHECK(static_cast<unsigned>(both & event_flags::timing) == 1);
    CHECK(static_cast<unsigned>(both & event_flags::interprocess) == 0);
    CHECK(has(both, event_flags::timing));
    CHECK(has(both, event_flags::blocking_sync));
    CHECK(has(both, both));
    CHECK_FALSE(has(both, event_flags::interprocess));
    CHECK_FALSE(has(both, event_flags::timing | event_flags::interprocess));
    CHECK_FALSE(has(both, event_flags::none));
    auto f = event_flags::none;
    f |= event_flags::interprocess;
    CHECK(f == event_flags::interprocess);
  }

  TEST_CASE("the underlying type is kept (64-bit instantiate flags)") {
    using cuwrap::instantiate_flags;
    constexpr auto f = instantiate_flags::upload | instantiate_flags::use_node_priority;
    static_assert(std::is_same_v<std::underlying_type_t<decltype(f)>, unsigned long long>);
    CHECK(static_cast<unsigned long long>(f) ==
          (CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY));
    CHECK(has(cuwrap::context_flags::map_host | cuwrap::context_flags::sched_spin,
              cuwrap::context_flags::map_host));
    CHECK(has(cuwrap::pinned_flags::portable | cuwrap::pinned_flags::device_mapped,
              cuwrap::pinned_flags::device_mapped));
  }
}
