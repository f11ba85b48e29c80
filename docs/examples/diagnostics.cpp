// docs/diagnostics.md: feature detection, a profiler range, an NVTX range, and a checkpoint
// round trip of this process.
#include <unistd.h>

#include <cstdio>
#include <cuwrap/checkpoint.hpp>
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/nvtx.hpp>
#include <string>

int main() try {
  for (auto f : {cuwrap::feature::context_events, cuwrap::feature::driver_logs}) {
    std::printf("%s: %s\n", std::string{cuwrap::to_string(f)}.c_str(),
                cuwrap::supports(f) ? "yes" : "no");
  }
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  const cuwrap::profiler_range profiled{ctx};
  const cuwrap::nvtx::scoped_range range{"checkpoint round trip"};
  const int pid = static_cast<int>(getpid());
  if (cuwrap::supports(cuwrap::feature::checkpoint)) {
    cuwrap::checkpoint::lock(pid);
    cuwrap::checkpoint::save(pid);
    cuwrap::checkpoint::restore(pid);
    cuwrap::checkpoint::unlock(pid);
    std::printf("process %d is %s again\n", pid,
                std::string{cuwrap::checkpoint::to_string(cuwrap::checkpoint::state(pid))}.c_str());
    return cuwrap::checkpoint::state(pid) == cuwrap::checkpoint::process_state::running ? 0 : 1;
  }
  return 0;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
