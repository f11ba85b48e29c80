// docs/graphs.md: build a graph, run it, update a kernel node in place, capture the same work
// from a stream, and write the picture of the graph.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <vector>

#include "scale_ptx.hpp"

int main(int argc, char** argv) try {
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load(ctx, std::string_view{examples::scale_ptx});
  const auto scale = mod.kernel<void(float*, float, int)>("scale");
  constexpr int n = 1024;
  const auto config = cuwrap::launch_config::linear(n, 256);
  cuwrap::device_buffer<float> data{ctx, n};
  std::vector<float> result(n);
  int finished = 0;

  // Explicit building: fill -> scale -> copy back -> host step.
  cuwrap::graph g{ctx};
  const auto fill = g.add_fill(data, 1.0f);
  const auto kernel = g.add_kernel(scale, config, fill, data.data(), 3.0f, n);
  const auto back = g.add_copy(result, data, kernel);
  g.add_host([&finished] { ++finished; }, back);
  auto exec = g.instantiate();
  exec.launch(s);  // one driver call for four operations
  s.synchronize();
  const bool built_ok = result == std::vector<float>(n, 3.0f) && finished == 1;

  // Change the factor without instantiating again.
  exec.set_kernel_params(kernel, scale, config, data.data(), 5.0f, n);
  exec.launch(s);
  s.synchronize();
  const bool updated_ok = result == std::vector<float>(n, 5.0f) && finished == 2;

  // The same work, captured from the stream. The captured host step runs on every launch.
  auto captured = [&] {
    auto capture = s.begin_capture();
    cuwrap::fill(s, data, 1.0f);
    s.launch(scale, config, data.data(), 7.0f, n);
    cuwrap::copy(s, result, data);
    s.enqueue([&finished] { ++finished; });
    return capture.end();
  }();
  auto captured_exec = captured.instantiate();
  captured_exec.launch(s);
  captured_exec.launch(s);
  s.synchronize();
  const bool captured_ok = result == std::vector<float>(n, 7.0f) && finished == 4;

  // A picture: dot -Tpng graph.dot -o graph.png
  g.write_dot(argc > 1 ? argv[1] : "graph.dot");
  std::printf("built %s, updated %s, captured %s; %zu nodes, %zu edges\n",
              built_ok ? "ok" : "WRONG", updated_ok ? "ok" : "WRONG", captured_ok ? "ok" : "WRONG",
              g.nodes().size(), g.edges().size());
  return built_ok && updated_ok && captured_ok ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
