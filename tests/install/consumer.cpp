// Uses the installed cuwrap: loads the driver CUWRAP_DRIVER names and lists the devices.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>

int main() {
  try {
    std::printf("driver %d, %d device(s)\n", cuwrap::driver_version(), cuwrap::device::count());
    return cuwrap::device::count() > 0 ? 0 : 1;
  } catch (const cuwrap::error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
