#include "fault_sweep.hpp"

#include <doctest/doctest.h>

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

void check_clean(const std::string& where) {
  INFO("after failing ", where);
  CHECK_MESSAGE(live_handles() == 0, "live handles left: ", live_handle_report());
  CHECK_MESSAGE(swcuda().context_stack_depth() == 0, "the context stack is not empty");
}

}  // namespace

int fault_sweep(const std::function<void()>& scenario, const fault_sweep_options& options) {
  swcuda().clear_fault_rules();
  const auto calls = calls_made_by(scenario);
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
      bool threw_right_code = false;
      std::string what = "no exception";
      try {
        scenario();
      } catch (const cuwrap::error& e) {
        threw_right_code = e.code() == make_error_code(options.code);
        what = e.what();
      } catch (const std::exception& e) {
        what = std::string{"not a cuwrap::error: "} + e.what();
      }
      swcuda().clear_fault_rules();
      CHECK_MESSAGE(threw_right_code, "failing ", where, " gave: ", what);
      check_clean(where);
      ++points;
    }
  }
  return points;
}

}  // namespace cuwrap::testing
