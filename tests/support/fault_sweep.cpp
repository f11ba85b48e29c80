#include "fault_sweep.hpp"

#include <doctest/doctest.h>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/error.hpp"
#include "swcuda.hpp"

namespace cuwrap::testing {
namespace {

bool skipped(const std::string& name, const fault_sweep_options& options) {
  for (const auto& part : options.skip) {
    if (name.find(part) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// What the nothrow handler saw during one run.
std::error_code reported_in_destructor;
void remember(std::error_code code, const char*) noexcept { reported_in_destructor = code; }

// Installs `remember` for one sweep, and puts the previous handler back however the sweep ends
// (a scenario whose baseline run throws ends it early).
class remembering_handler {
 public:
  remembering_handler() noexcept : previous_{set_nothrow_error_handler(&remember)} {}
  remembering_handler(const remembering_handler&) = delete;
  remembering_handler& operator=(const remembering_handler&) = delete;
  ~remembering_handler() { set_nothrow_error_handler(previous_); }

 private:
  nothrow_error_handler previous_;
};

// A scope guard's pop that fails in its destructor leaves the context on the stack (as the real
// driver would); take it off so the next injection point starts clean.
void unwind_context_stack() {
  CUcontext popped{};
  while (swcuda().context_stack_depth() > 0 &&
         detail::driver().cuCtxPopCurrent(&popped) == CUDA_SUCCESS) {
  }
}

void check_clean(const std::string& where) {
  INFO("after failing ", where);
  CHECK_MESSAGE(live_handles() == 0, "live handles left: ", live_handle_report());
  CHECK_MESSAGE(swcuda().context_stack_depth() == 0, "the context stack is not empty");
}

}  // namespace

int fault_sweep(const std::function<void()>& scenario, const fault_sweep_options& options) {
  swcuda().clear_fault_rules();
  const remembering_handler handler;
  reported_in_destructor = {};
  const auto calls = calls_made_by(scenario);
  // The baseline must succeed everywhere, destructors included: a destructor's failure there
  // (reported, not thrown) is a bug the scenario would otherwise hide.
  CHECK_MESSAGE(!reported_in_destructor, "the baseline run reported a failure in a destructor: ",
                reported_in_destructor.message());
  check_clean("nothing (the baseline run)");
  REQUIRE_MESSAGE(!calls.empty(), "the scenario made no driver call");

  int points = 0;
  for (const auto& [name, count] : calls) {
    if (skipped(name, options)) {
      continue;
    }
    for (unsigned long long n = 1; n <= count; ++n) {
      const std::string where =
          name + " call " + std::to_string(n) + " of " + std::to_string(count);
      const std::string rule =
          name + ":" + std::to_string(n) + ":" + std::to_string(static_cast<int>(options.code));
      REQUIRE_MESSAGE(swcuda().add_fault_rule(rule.c_str()) == 0, swcuda().last_error());
      reported_in_destructor = {};
      std::string outcome = "no exception and nothing reported";
      bool right_code = false;
      try {
        scenario();
        // No exception: acceptable only if a destructor made the failing call and reported it.
        right_code = reported_in_destructor == make_error_code(options.code);
        if (right_code) {
          unwind_context_stack();
        }
      } catch (const cuwrap::error& e) {
        right_code = e.code() == make_error_code(options.code);
        outcome = e.what();
      } catch (const std::exception& e) {
        outcome = std::string{"not a cuwrap::error: "} + e.what();
      }
      swcuda().clear_fault_rules();
      CHECK_MESSAGE(right_code, "failing ", where, " gave: ", outcome);
      check_clean(where);
      ++points;
    }
  }
  return points;
}

}  // namespace cuwrap::testing
