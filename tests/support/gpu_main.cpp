// main() of the gpu lane: runs the tests on the real driver, or skips the whole lane (exit
// code 77, which CTest reports as skipped) with the reason when there is no usable GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

#include "cuwrap/device.hpp"

namespace {

bool listing_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view{argv[i]}.starts_with("--list") || std::string_view{argv[i]} == "-ltc") {
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!listing_only(argc, argv)) {
    try {
      if (cuwrap::device::count() == 0) {
        std::puts("gpu lane skipped: the NVIDIA driver reports no CUDA device");
        return 77;
      }
    } catch (const std::exception& e) {
      std::printf("gpu lane skipped: no usable NVIDIA driver (%s)\n", e.what());
      return 77;
    }
  }
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
