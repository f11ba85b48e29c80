// The fixture every `sw` test uses: after the test body, the software driver must hold no
// live handles and this thread's context stack must be empty.
#pragma once

#include <doctest/doctest.h>

#include "swcuda.hpp"

namespace cuwrap::testing {

class sw_fixture {
 public:
  sw_fixture() { swcuda().clear_fault_rules(); }
  ~sw_fixture() {
    swcuda().clear_fault_rules();
    CHECK_MESSAGE(live_handles() == 0, "live handles left: ", live_handle_report());
    CHECK_MESSAGE(swcuda().context_stack_depth() == 0, "the context stack is not empty");
  }
  sw_fixture(const sw_fixture&) = delete;
  sw_fixture& operator=(const sw_fixture&) = delete;
};

}  // namespace cuwrap::testing
