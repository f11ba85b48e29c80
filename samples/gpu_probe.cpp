// Exits 0 when a real GPU is usable, 77 (CTest's "skipped") with the reason otherwise.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>

int main() {
  try {
    if (cuwrap::device::count() > 0) {
      return 0;
    }
    std::puts("skipped: the NVIDIA driver reports no CUDA device");
  } catch (const std::exception& e) {
    std::printf("skipped: no usable NVIDIA driver (%s)\n", e.what());
  }
  return 77;
}
