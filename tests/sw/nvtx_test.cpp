// cuwrap/nvtx.hpp: without a tool the annotations are no-ops; with an injection library
// (tests/support/nvtx_recorder.cpp) they reach it.
#include "cuwrap/nvtx.hpp"

#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "cuwrap/event.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;

namespace {

// Every annotation cuwrap::nvtx has, on real handles.
void annotate(cuwrap::device dev, const cuwrap::primary_context& ctx, const cuwrap::stream& s,
              const cuwrap::event& e) {
  const cuwrap::nvtx::scoped_range outer{"outer"};
  {
    const cuwrap::nvtx::scoped_range inner{"inner"};
    cuwrap::nvtx::mark("here");
  }
  cuwrap::nvtx::name(dev, "gpu zero");
  cuwrap::nvtx::name(ctx, "main context");
  cuwrap::nvtx::name(s, "copies");
  cuwrap::nvtx::name(e, "done");
}

template <class Handle>
std::string text(Handle h) {
  std::ostringstream out;
  out << static_cast<const void*>(h);
  return out.str();
}

}  // namespace

TEST_SUITE("nvtx") {
  TEST_CASE_FIXTURE(sw_fixture, "without a tool NVTX annotations do nothing") {
    REQUIRE(std::getenv("NVTX_INJECTION64_PATH") == nullptr);
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event e{ctx};
    const cuwrap::device dev = cuwrap::device::get(0);
    CHECK(calls_made_by([&] { annotate(dev, ctx, s, e); }).empty());  // no driver call either
  }
}

TEST_SUITE("sw_env") {
  TEST_CASE("with an NVTX injection library names and ranges reach the tool") {
    const char* path = std::getenv("NVTX_INJECTION64_PATH");
    REQUIRE(path != nullptr);
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::stream s{ctx};
    cuwrap::event e{ctx};
    annotate(cuwrap::device::get(0), ctx, s, e);
    void* recorder = dlopen(path, RTLD_NOW | RTLD_NOLOAD);  // loaded by NVTX's first call
    REQUIRE(recorder != nullptr);
    const auto recorded =
        reinterpret_cast<const char* (*)()>(dlsym(recorder, "cuwrap_nvtx_recorded"));
    const bool found = recorded != nullptr;
    REQUIRE(found);
    const std::string expected =
        "push outer\npush inner\nmark here\npop\ndevice 0 gpu zero\n"
        "context " +
        text(ctx.get()) +
        " main context\n"
        "stream " +
        text(s.get()) +
        " copies\n"
        "event " +
        text(e.get()) + " done\npop\n";
    CHECK(std::string{recorded()} == expected);
    dlclose(recorder);
  }
}
