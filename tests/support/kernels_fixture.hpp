// The fixture of the sw tests that launch the test kernels (tests/kernels/kernels.cu, whose PTX
// the software driver runs): device 0's primary context, a stream, and the module.
#pragma once

#include "cuwrap/cuwrap.hpp"
#include "sw_fixture.hpp"
#include "test_kernels.hpp"

namespace cuwrap::testing {

struct kernels_fixture : sw_fixture {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  cuwrap::module mod = cuwrap::module::load_file(ctx, kernels_file("ptx"));
  ~kernels_fixture() { swcuda().clear_launch_log(); }
  kernels_fixture() = default;
  kernels_fixture(const kernels_fixture&) = delete;
  kernels_fixture& operator=(const kernels_fixture&) = delete;
};

}  // namespace cuwrap::testing
