// Runtime interop on a real GPU: kernels compiled into this program, launched with <<<>>> and
// with cuwrap, on cuwrap streams, with cuwrap events and buffers in runtime calls.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuwrap/cuwrap.hpp>
#include <cuwrap/runtime.hpp>
#include <doctest/doctest.h>

#include <cstdio>
#include <vector>

__global__ void add_one(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

TEST_SUITE("gpu runtime") {
  TEST_CASE("a __global__ function of the program launches through cuwrap, typed") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::check(cudaSetDevice(0), "cudaSetDevice");
    cuwrap::stream s{ctx};
    const auto k = cuwrap::runtime::kernel_of(&add_one);
    CHECK(k.name().find("add_one") != std::string::npos);
    CHECK(k.params().size() == 2);
    cuwrap::device_buffer<int> data{ctx, 256};
    cuwrap::zero(s, data);
    s.launch(k, cuwrap::launch_config::linear(256, 128), data.data(), 256);
    add_one<<<2, 128, 0, s.get()>>>(data.data(), 256);  // a cuwrap stream is a cudaStream_t
    cuwrap::runtime::check_last_launch();
    std::vector<int> host(256);
    cuwrap::check(cudaMemcpyAsync(host.data(), data.data(), 256 * sizeof(int),
                                  cudaMemcpyDeviceToHost, s.get()),
                  "cudaMemcpyAsync");
    cuwrap::event done{ctx};
    cuwrap::check(cudaEventRecord(done.get(), s.get()), "cudaEventRecord");
    done.synchronize();
    CHECK(host == std::vector<int>(256, 2));
  }

  TEST_CASE("a bad <<<>>> configuration is reported by check_last_launch") {
    cuwrap::check(cudaSetDevice(0), "cudaSetDevice");
    add_one<<<1, 4096>>>(nullptr, 0);  // more threads than a block may have
    try {
      cuwrap::runtime::check_last_launch();
      FAIL("no exception");
    } catch (const cuwrap::error& e) {
      CHECK(e.code().category() == cuwrap::runtime_category());
      CHECK(e.code() == cuwrap::errc::invalid_value);
    }
    CHECK_NOTHROW(cuwrap::runtime::check_last_launch());  // the error was cleared
  }

  TEST_CASE("runtime errors have names without a driver call") {
    const auto code = cuwrap::make_error_code(cudaErrorMemoryAllocation);
    CHECK(code == cuwrap::errc::out_of_memory);
    CHECK(code.message() == "memory allocation (cudaErrorMemoryAllocation)");
  }
}

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::string_view{argv[i]}.starts_with("--list");
  if (!listing) {
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
