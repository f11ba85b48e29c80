// Conformance kernels: control flow, recursion, local memory, launch shapes, dynamic shared
// memory, grid-stride loops.

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ unsigned long long factorial(unsigned n) {
  return n <= 1 ? 1ull : n * factorial(n - 1);
}

// Mutual recursion through a function pointer-free pair.
__device__ __noinline__ bool is_odd(unsigned n);
__device__ __noinline__ bool is_even(unsigned n) { return n == 0 ? true : is_odd(n - 1); }
__device__ __noinline__ bool is_odd(unsigned n) { return n == 0 ? false : is_even(n - 1); }

extern "C" __global__ void recursion(int* fibs, unsigned long long* factorials, int* parity,
                                     int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  fibs[i] = fib(i % 21);
  factorials[i] = factorial(static_cast<unsigned>(i % 21));
  parity[i] = is_even(static_cast<unsigned>(i % 37)) ? 1 : 0;
}

// A per-thread array indexed by run-time values (lives in local memory): a permutation applied
// through it, then a prefix walk driven by data.
extern "C" __global__ void local_array(const int* in, const int* idx, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a[40];
  for (int k = 0; k < 40; ++k) a[k] = static_cast<unsigned>(in[i] * (k + 1) + k);
  for (int k = 0; k < 40; ++k) {
    const int j = idx[(i + k) % n] % 40;
    a[j] += a[(j + k) % 40] ^ static_cast<unsigned>(k);
  }
  unsigned walk = 0;
  unsigned p = static_cast<unsigned>(in[i]) & 31u;
  for (int k = 0; k < 20; ++k) {
    walk += a[p];
    p = (p + (a[p] & 7u) + 1u) % 40u;
  }
  out[i] = walk;
}

// Per-thread loops that diverge: continue, break and early return by thread.
extern "C" __global__ void divergent(const int* in, int* out, int* steps, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = in[i];
  if (v % 11 == 0) {  // early return for some threads
    out[i] = -1;
    steps[i] = 0;
    return;
  }
  int acc = 0;
  int k = 0;
  for (; k < 64; ++k) {
    if ((k + v) % 3 == 0) continue;
    if (acc > v * 4) break;
    acc += k ^ v;
    int inner = v & 7;
    while (inner-- > 0) {
      if ((inner + k) % 5 == 4) break;
      acc += inner;
    }
    if (acc % 17 == 3) {
      out[i] = acc;
      steps[i] = 1000 + k;
      return;
    }
  }
  out[i] = acc;
  steps[i] = k;
}

// 3D grid and 3D block: each thread writes its global linear index and its coordinates.
extern "C" __global__ void index_3d(unsigned* linear, unsigned* coords) {
  const unsigned block_linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned thread_linear =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned g = block_linear * threads + thread_linear;
  linear[g] = g;
  coords[g] = (blockIdx.x << 24) | (blockIdx.y << 20) | (blockIdx.z << 16) | (threadIdx.x << 8) |
              (threadIdx.y << 4) | threadIdx.z;
}

// Grid-stride loop: y[i] = a * x[i] + y[i] for n elements with few threads.
extern "C" __global__ void grid_stride_saxpy(float a, const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

// Dynamic shared memory: reverse each block's segment (any block size) and rotate by one.
extern "C" __global__ void dynamic_shared_reverse(const int* in, int* reversed, int* rotated,
                                                  int n) {
  extern __shared__ int s[];
  const int base = blockIdx.x * blockDim.x;
  const int i = base + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : -7;
  __syncthreads();
  if (i >= n) return;
  reversed[i] = s[blockDim.x - 1 - threadIdx.x];
  rotated[i] = s[(threadIdx.x + 1) % blockDim.x];
}

// __trap(): the launch fails (a sticky error).
extern "C" __global__ void trap_kernel(int* out, int when) {
  out[threadIdx.x] = 1;
  if (static_cast<int>(threadIdx.x) == when) __trap();
}

// More than 48 KiB of dynamic shared memory (the kernel opts in through its attribute): each
// block fills 20000 ints, and reads them back in another order.
extern "C" __global__ void large_dynamic_shared(int* out, int count) {
  extern __shared__ int big[];
  for (int k = threadIdx.x; k < count; k += blockDim.x) big[k] = k * 7 + blockIdx.x;
  __syncthreads();
  long long sum = 0;
  for (int k = threadIdx.x; k < count; k += blockDim.x) sum += big[count - 1 - k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<int>(sum);
}
