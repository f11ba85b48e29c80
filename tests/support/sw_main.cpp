// main() of the sw lane: runs on the software driver unless CUWRAP_DRIVER says otherwise.
// Tests in the "sw_env" suite need a particular SWCUDA_* environment (CTest sets it); they
// run only when asked for by name.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <string_view>

int main(int argc, char** argv) {
  setenv("CUWRAP_DRIVER", "software", 0);
  doctest::Context context;
  bool filtered = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg{argv[i]};
    filtered = filtered || arg.starts_with("--test-case=") || arg.starts_with("-tc=") ||
               arg.find("sw_env") != std::string_view::npos;
  }
  if (!filtered) {
    context.addFilter("test-suite-exclude", "sw_env");
  }
  context.applyCommandLine(argc, argv);
  return context.run();
}
