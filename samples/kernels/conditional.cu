// The conditional_graphs sample's kernels: Newton's method for square roots, iterated by a
// while node until every element has converged, and the kernels that set the conditions of the
// graph's conditional nodes from the device (cudaGraphSetConditional).

// One Newton step for sqrt(a[i]) on every element: x = (x + a / x) / 2. An element whose step
// moved it by more than `tolerance` (relative) marks *pending.
extern "C" __global__ void newton_step(const float* a, float* x, int n, float tolerance,
                                       int* pending) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float old = x[i];
  const float next = (old + a[i] / old) * 0.5f;
  x[i] = next;
  if (fabsf(next - old) > tolerance * next) atomicOr(pending, 1);
}

// Counts a step and keeps the while node's `condition` set while an element is pending and
// fewer than `max_steps` steps ran.
extern "C" __global__ void continue_while_pending(cudaGraphConditionalHandle condition,
                                                  const int* pending, int* steps, int max_steps) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const int done = ++*steps;
  cudaGraphSetConditional(condition, (*pending != 0 && done < max_steps) ? 1u : 0u);
}

// Sets the if-else node's `condition`: 1 when the loop converged (nothing pending).
extern "C" __global__ void set_if_converged(cudaGraphConditionalHandle condition,
                                            const int* pending) {
  if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(condition, *pending == 0);
}
