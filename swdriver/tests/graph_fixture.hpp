// The fixture of the graph tests (graph_test.cpp, graph_capture_test.cpp,
// graph_conditional_test.cpp): a module with sw_kernels.cu's kernels, a stream, and host
// functions that record the order nodes run in.
#pragma once

#include <cstddef>
#include <vector>

#include "graph_support.hpp"

namespace swcu::test {

// Host functions that append their number to a list (the order nodes run in).
struct Order {
  std::vector<int> seen;
  struct Mark {
    Order* order;
    int value;
  };
  std::vector<Mark> marks = std::vector<Mark>(64);
  Mark* mark(int value) {
    marks[static_cast<std::size_t>(value)] = {this, value};
    return &marks[static_cast<std::size_t>(value)];
  }
  static void CUDA_CB run(void* data) {
    auto* m = static_cast<Mark*>(data);
    m->order->seen.push_back(m->value);
  }
};

inline void CUDA_CB count(void* data) { ++*static_cast<int*>(data); }

struct GraphTest : ModuleTest {
  // The kernel nodes run sw_kernels.cu's saxpy through the interpreter.
  GraphTest() : m(load(read_bytes(kernel_file("sw_kernels.ptx")))) { stream = create_stream(); }
  ~GraphTest() { api().cuStreamDestroy_v2(stream); }
  GraphTest(const GraphTest&) = delete;
  GraphTest& operator=(const GraphTest&) = delete;

  CUdeviceptr alloc(std::size_t bytes) {
    CUdeviceptr d = 0;
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemAlloc_v2(&d, bytes));
    return d;
  }
  std::vector<unsigned> read32(CUdeviceptr d, std::size_t count) {
    std::vector<unsigned> out(count);
    SWCU_TEST_REQUIRE_SUCCESS(api().cuMemcpyDtoH_v2(out.data(), d, count * 4));
    return out;
  }
  void run(CUgraphExec e) {
    SWCU_TEST_REQUIRE_SUCCESS(gr().cuGraphLaunch(e, stream));
    SWCU_TEST_REQUIRE_SUCCESS(api().cuStreamSynchronize(stream));
  }
  // A saxpy kernel node: y = a * x + y over n floats.
  CUDA_KERNEL_NODE_PARAMS saxpy_params(void** args, unsigned n) {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = function(m, "saxpy");
    p.gridDimX = (n + 63) / 64;
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 64;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
    return p;
  }

  CUmodule m;
  CUstream stream = nullptr;
};

}  // namespace swcu::test
