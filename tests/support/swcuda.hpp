// Test access to the software driver's control table, call counters and fault rules.
#pragma once

#include <swcuda/control.h>

#include <map>
#include <string>

namespace cuwrap::testing {

/// The control table of the loaded software driver. Fails the test run if the loaded
/// driver is not the software driver.
const swcu_control& swcuda();

/// Live handles of every kind, summed.
std::size_t live_handles();

/// A readable list of the kinds that have live handles ("stream: 2, event: 1"), or "".
std::string live_handle_report();

/// Per exported function: how many calls `scenario` made.
using call_counts = std::map<std::string, unsigned long long>;

/// Runs `scenario` and returns the driver calls it made, by exported name.
template <class Scenario>
call_counts calls_made_by(Scenario&& scenario);

/// The counters now, by exported name (non-zero ones only).
call_counts current_call_counts();

/// `after - before`, dropping zeros.
call_counts difference(const call_counts& after, const call_counts& before);

/// Total calls in a count map.
unsigned long long total(const call_counts& counts);

template <class Scenario>
call_counts calls_made_by(Scenario&& scenario) {
  const auto before = current_call_counts();
  scenario();
  return difference(current_call_counts(), before);
}

}  // namespace cuwrap::testing
