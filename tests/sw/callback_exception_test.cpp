// Host-callback exceptions (stream::enqueue): rethrown by the stream's or its context's
// synchronize(), handed to the nothrow handler when the stream goes first, never lost.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <system_error>

#include "cuwrap/cuwrap.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::sw_fixture;

namespace {

std::string reported_api;
std::error_code reported_code;
int reports = 0;
void remember(std::error_code code, const char* api) noexcept {
  reported_code = code;
  reported_api = api;
  ++reports;
}

// Installs `remember` for a test and restores the previous handler.
struct remembering_handler {
  cuwrap::nothrow_error_handler previous = cuwrap::set_nothrow_error_handler(&remember);
  remembering_handler() {
    reports = 0;
    reported_api.clear();
    reported_code = {};
  }
  ~remembering_handler() { cuwrap::set_nothrow_error_handler(previous); }
  remembering_handler(const remembering_handler&) = delete;
  remembering_handler& operator=(const remembering_handler&) = delete;
};

}  // namespace

TEST_SUITE("host callback exceptions") {
  TEST_CASE_FIXTURE(sw_fixture,
                    "an exception whose stream is destroyed first goes to the handler") {
    const remembering_handler handler;
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    {
      const cuwrap::stream s{ctx};
      s.enqueue([] { throw std::runtime_error{"never collected"}; });
      cuwrap::event e{ctx};
      e.record(s);
      e.synchronize();  // the callback ran; event::synchronize() does not rethrow its exception
    }
    CHECK(reports == 1);
    CHECK(reported_api.find("never collected") != std::string::npos);
    CHECK(reported_api.find("cuwrap::stream::enqueue") != std::string::npos);
    CHECK(reported_code == cuwrap::make_error_code(CUDA_ERROR_UNKNOWN));
    CHECK(cuwrap::detail::pending_host_exceptions.load() == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "a cuwrap::error from host work reaches the handler with its code") {
    const remembering_handler handler;
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    {
      const cuwrap::stream s{ctx};
      s.enqueue([] { cuwrap::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc"); });
      cuwrap::event e{ctx};
      e.record(s);
      e.synchronize();
      CHECK(reports == 0);
    }
    CHECK(reports == 1);
    CHECK(reported_code == cuwrap::make_error_code(CUDA_ERROR_OUT_OF_MEMORY));
  }

  TEST_CASE_FIXTURE(sw_fixture, "context::synchronize() rethrows its streams' host exceptions") {
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const cuwrap::context other{cuwrap::device::get(0)};
    const cuwrap::stream s{ctx};
    const cuwrap::stream elsewhere{other};
    elsewhere.enqueue([] { throw std::runtime_error{"other context"}; });
    s.enqueue([] { throw std::runtime_error{"host work failed"}; });
    CHECK_THROWS_WITH_AS(ctx.synchronize(), "host work failed", std::runtime_error);
    CHECK_NOTHROW(ctx.synchronize());  // reported once
    CHECK_NOTHROW(s.synchronize());    // and not again by the stream
    CHECK_THROWS_WITH_AS(other.synchronize(), "other context", std::runtime_error);
    CHECK(cuwrap::detail::pending_host_exceptions.load() == 0);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "host work still pending when its stream goes reports to the handler") {
    const remembering_handler handler;
    const cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::event gate{ctx};
    const cuwrap::stream waiter{ctx};
    {
      const cuwrap::stream s{ctx};
      s.enqueue([] { throw std::runtime_error{"ran after its stream"}; });
    }  // destroyed: its work still completes
    waiter.record(gate);
    ctx.synchronize();  // nothing to rethrow: the exception's stream is gone
    CHECK(reports == 1);
    CHECK(reported_api.find("ran after its stream") != std::string::npos);
    CHECK(cuwrap::detail::pending_host_exceptions.load() == 0);
  }
}
