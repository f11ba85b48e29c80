// conditional_graphs: graphs that decide on the device what runs next, in the spirit of
// NVIDIA's graphConditionalNodes sample. One graph computes square roots by Newton's method:
// a while node runs its body (reset a flag, one Newton step over the array, count the step)
// until a kernel finds every element converged or a step limit reached; an if-else node then
// copies the roots out if the loop converged, or fills the output with -1 if it did not. The
// same executable graph runs with a generous and with a tight step limit (updated in place),
// and the results are checked against the same iteration done on the host.
//
//   conditional_graphs [--n=N] [--kernels=DIR]
#include <cmath>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string>
#include <vector>

#include "options.hpp"

namespace {

constexpr float tolerance = 1e-6f;

// The host reference: the same Newton iteration, in the same float arithmetic.
struct reference {
  std::vector<float> roots;
  int steps = 0;
  bool converged = false;
};

reference newton_on_host(const std::vector<float>& a, int max_steps) {
  reference r{a, 0, false};  // x0 = a
  bool pending = true;
  while (pending && r.steps < max_steps) {
    pending = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const float old = r.roots[i];
      const float next = (old + a[i] / old) * 0.5f;
      r.roots[i] = next;
      if (std::fabs(next - old) > tolerance * next) pending = true;
    }
    ++r.steps;
  }
  r.converged = !pending;
  return r;
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::options options{
      argc, argv, {{"kernels", CUWRAP_SAMPLE_KERNELS_DIR}, {"n", "4096"}}};
  const int n = options.positive("n");
  const auto count = static_cast<std::size_t>(n);

  const auto dev = cuwrap::device::get(0);
  if (!cuwrap::supports(cuwrap::feature::conditional_graph_nodes)) {
    std::puts("conditional graph nodes need a CUDA 12.3+ driver: skipped");
    return 77;
  }
  cuwrap::primary_context ctx{dev};
  cuwrap::stream s{ctx};
  const auto mod = cuwrap::module::load_file(ctx, options.text("kernels") + "/conditional.fatbin");
  const auto newton_step = mod.kernel<void(const float*, float*, int, float, int*)>("newton_step");
  const auto continue_while_pending =
      mod.kernel<void(CUgraphConditionalHandle, const int*, int*, int)>("continue_while_pending");
  const auto set_if_converged =
      mod.kernel<void(CUgraphConditionalHandle, const int*)>("set_if_converged");

  std::vector<float> a(count);
  for (std::size_t i = 0; i < count; ++i) a[i] = 0.5f + static_cast<float>(i % 1000) * 1.25f;
  cuwrap::device_buffer<float> d_a{ctx, count};
  cuwrap::device_buffer<float> x{ctx, count};
  cuwrap::device_buffer<float> roots{ctx, count};
  cuwrap::device_buffer<int> pending{ctx, 1};
  cuwrap::device_buffer<int> steps{ctx, 1};
  cuwrap::copy(s, d_a, a);

  const auto all = cuwrap::launch_config::linear(count, 256);
  const cuwrap::launch_config one{{1}, {32}};
  int max_steps = 100;

  // The graph: start from x = a, loop, then branch on convergence.
  cuwrap::graph g{ctx};
  const auto start = g.add_copy(x, d_a);
  const auto zero_steps = g.add_fill(steps, 0, start);
  // The loop's body runs at least once: its condition starts each launch at 1.
  const auto loop_condition = g.make_condition(1);
  const auto loop = g.add_conditional(loop_condition, cuwrap::conditional::while_loop, zero_steps);
  const auto body = loop.body();
  const auto reset = body.add_fill(pending, 0);
  const auto step =
      body.add_kernel(newton_step, all, reset, d_a.data(), x.data(), n, tolerance, pending.data());
  const auto decide = body.add_kernel(continue_while_pending, one, step, loop_condition,
                                      pending.data(), steps.data(), max_steps);

  const auto branch_condition = g.make_condition();
  const auto check =
      g.add_kernel(set_if_converged, one, loop.node, branch_condition, pending.data());
  const auto branch = g.add_conditional(branch_condition, cuwrap::conditional::if_else, check);
  (void)branch.body(0).add_copy(roots, x);      // converged: the roots
  (void)branch.body(1).add_fill(roots, -1.0f);  // not converged: -1 everywhere
  auto exec = g.instantiate();

  bool ok = true;
  for (const int limit : {100, 3}) {
    if (limit != max_steps) {
      max_steps = limit;  // a node in a conditional body updated in the executable graph
      exec.set_kernel_params(decide, continue_while_pending, one, loop_condition, pending.data(),
                             steps.data(), max_steps);
    }
    exec.launch(s);
    std::vector<float> out(count);
    std::vector<int> ran(1);
    cuwrap::copy(s, out, roots);
    cuwrap::copy(s, ran, steps);
    s.synchronize();

    const reference expected = newton_on_host(a, max_steps);
    bool same = ran[0] == expected.steps;
    double worst = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (expected.converged) {
        same = same && out[i] == expected.roots[i];
        worst = std::fmax(
            worst, std::fabs(static_cast<double>(out[i]) - std::sqrt(a[i])) / std::sqrt(a[i]));
      } else {
        same = same && out[i] == -1.0f;
      }
    }
    std::printf("step limit %3d: the while node ran %d steps (host: %d), %s", max_steps, ran[0],
                expected.steps, expected.converged ? "converged" : "did not converge");
    if (expected.converged) std::printf(", worst relative error %.2e", worst);
    std::printf(": %s\n", same ? "matches the host" : "DIFFERS from the host");
    ok = ok && same && (!expected.converged || worst < 1e-5);
  }
  std::puts(ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "conditional_graphs: %s\n", e.what());
  return 1;
}
