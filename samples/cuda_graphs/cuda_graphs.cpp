// cuda_graphs: cuwrap's version of NVIDIA's simpleCudaGraphs. Builds the same two-stage sum
// pipeline (copy in, zero, reduce, final reduce, copy out, host check) twice: node by node and
// by capturing a stream; runs both and checks the sums; updates a kernel's arguments in the
// executable graph without re-instantiating; writes the graph as DOT; and times a chain of small
// kernels launched one by one against the same chain as one graph launch.
//
//   cuda_graphs [--dot=FILE] [--kernels=DIR]
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
#include <vector>

#include "options.hpp"

namespace {

constexpr unsigned threads = 256;  // matches THREADS in reduce.cu
constexpr unsigned blocks = 64;

bool close_to(double a, double b) { return std::fabs(a - b) <= 1e-3 * std::fabs(b) + 1e-3; }

}  // namespace

int main(int argc, char** argv) try {
  const samples::options options{
      argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}, {"dot", "cuda_graphs.dot"}}};
  const std::string& dot = options.text("dot");

  const auto dev = cuwrap::device::get(0);
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/reduce.fatbin");
  const auto reduce = mod.kernel<void(const float*, float*, int)>("reduce");
  const auto reduce_final = mod.kernel<void(const float*, double*, int)>("reduce_final");
  const auto add_one = mod.kernel<void(float*, int)>("add_one");

  constexpr int n = 1 << 20;
  cuwrap::pinned_buffer<float> input{ctx, n};
  double expected = 0, expected_half = 0;
  for (int i = 0; i < n; ++i) {
    input[static_cast<std::size_t>(i)] = static_cast<float>(i % 17) * 0.25f;
    expected += input[static_cast<std::size_t>(i)];
    if (i < n / 2) expected_half = expected;
  }
  cuwrap::device_buffer<float> d_input{ctx, n};
  cuwrap::device_buffer<float> partial{ctx, blocks};
  cuwrap::device_buffer<double> d_result{ctx, 1};
  cuwrap::pinned_buffer<double> result{ctx, 1};
  double checked = -1;  // what the host node saw

  // 1. Node by node.
  cuwrap::graph built{ctx};
  const cuwrap::launch_config reduce_config{{blocks}, {threads}};
  const cuwrap::launch_config final_config{{1}, {threads}};
  const auto copy_in = built.add_copy(d_input, input);
  const auto zero = built.add_fill(partial, 0.0f);
  const auto reduce_node =
      built.add_kernel(reduce, reduce_config, {copy_in, zero}, d_input.data(), partial.data(), n);
  const auto final_node = built.add_kernel(reduce_final, final_config, reduce_node, partial.data(),
                                           d_result.data(), int{blocks});
  const auto copy_out = built.add_copy(result, d_result, final_node);
  built.add_host([&checked, &result] { checked = result[0]; }, copy_out);

  // 2. The same pipeline, captured from a stream.
  cuwrap::graph captured = [&] {
    auto capture = s.begin_capture();
    cuwrap::copy(s, d_input, input);
    cuwrap::zero(s, partial);
    s.launch(reduce, reduce_config, d_input.data(), partial.data(), n);
    s.launch(reduce_final, final_config, partial.data(), d_result.data(), int{blocks});
    cuwrap::copy(s, result, d_result);
    s.enqueue([&checked, &result] { checked = result[0]; });
    return capture.end();
  }();

  std::printf("built graph: %zu nodes, %zu edges; captured graph: %zu nodes\n",
              built.nodes().size(), built.edges().size(), captured.nodes().size());
  bool ok = true;
  for (auto* g : {&built, &captured}) {
    auto exec = g->instantiate();
    for (int run = 0; run < 3; ++run) {
      checked = -1;
      exec.launch(s);
      s.synchronize();
      ok = ok && close_to(checked, expected);
    }
  }
  std::printf("sum %.2f (expected %.2f)\n", checked, expected);

  // 3. Update a kernel's arguments in place: sum only the first half.
  auto exec = built.instantiate();
  exec.set_kernel_params(reduce_node, reduce, reduce_config, d_input.data(), partial.data(), n / 2);
  exec.launch(s);
  s.synchronize();
  std::printf("after updating n: sum %.2f (expected %.2f)\n", checked, expected_half);
  ok = ok && close_to(checked, expected_half);

  // 4. A picture of the graph.
  built.write_dot(dot);
  std::printf("wrote %s\n", dot.c_str());

  // 5. A chain of small kernels: launched one by one, or as one graph.
  constexpr int chain = 20, iterations = 50;
  const auto small = cuwrap::launch_config::linear(1024, 256);
  cuwrap::device_buffer<float> data{ctx, 1024};
  cuwrap::zero(s, data);
  cuwrap::graph chain_graph = [&] {
    auto capture = s.begin_capture();
    for (int k = 0; k < chain; ++k) s.launch(add_one, small, data.data(), 1024);
    return capture.end();
  }();
  auto chain_exec = chain_graph.instantiate();
  cuwrap::event start{ctx, cuwrap::event_flags::timing}, stop{ctx, cuwrap::event_flags::timing};
  s.record(start);
  for (int it = 0; it < iterations; ++it) {
    for (int k = 0; k < chain; ++k) s.launch(add_one, small, data.data(), 1024);
  }
  s.record(stop);
  stop.synchronize();
  const float stream_ms = cuwrap::elapsed(start, stop).count();
  s.record(start);
  for (int it = 0; it < iterations; ++it) chain_exec.launch(s);
  s.record(stop);
  stop.synchronize();
  const float graph_ms = cuwrap::elapsed(start, stop).count();
  std::printf("%d kernels: %.3f ms per iteration launched one by one, %.3f ms as a graph\n", chain,
              static_cast<double>(stream_ms) / iterations,
              static_cast<double>(graph_ms) / iterations);

  std::puts(ok ? "PASSED" : "FAILED: a sum was wrong");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cuda_graphs: %s\n", e.what());
  return 1;
}
