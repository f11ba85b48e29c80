// The software driver's launch log, as the library's launch tests read it.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>

#include "swcuda.hpp"

namespace cuwrap::testing {

/// The newest launch the software driver logged (fails the test when the log is empty).
inline swcu_launch last_launch() {
  const std::size_t n = swcuda().launch_log_size();
  REQUIRE(n > 0);
  swcu_launch launch{};
  REQUIRE(swcuda().launch_log_entry(n - 1, &launch) == 0);
  return launch;
}

}  // namespace cuwrap::testing
