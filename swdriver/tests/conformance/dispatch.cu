// Conformance kernels: indirect calls (virtual functions, function pointers), switch jump
// tables, and recursion with large stack frames.

struct Shape {
  __device__ virtual ~Shape() {}
  __device__ virtual int area() const = 0;
  __device__ virtual int sides() const { return 0; }
};
struct Rect : Shape {
  int w, h;
  __device__ Rect(int w_, int h_) : w(w_), h(h_) {}
  __device__ int area() const override { return w * h; }
  __device__ int sides() const override { return 4; }
};
struct Tri : Shape {
  int b, h;
  __device__ Tri(int b_, int h_) : b(b_), h(h_) {}
  __device__ int area() const override { return b * h / 2; }
  __device__ int sides() const override { return 3; }
};
struct Square : Rect {
  __device__ explicit Square(int s) : Rect(s, s) {}
  __device__ int area() const override { return Rect::area() + 1; }
};

// Objects built in the kernel (vtables live in global memory); calls through base pointers.
extern "C" __global__ void virtual_calls(const int* kinds, int* areas, int* sides, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Rect r(i % 7 + 1, i % 5 + 2);
  Tri t(i % 9 + 2, i % 4 + 2);
  Square s(i % 6 + 1);
  const Shape* shapes[3] = {&r, &t, &s};
  const Shape* p = shapes[kinds[i] % 3];
  areas[i] = p->area();
  sides[i] = p->sides();
}

__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_min(int a, int b) { return a < b ? a : b; }

typedef int (*BinaryOp)(int, int);
__device__ BinaryOp op_table[4] = {op_add, op_sub, op_mul, op_min};

// A small interpreter over a bytecode program: function pointers from a __device__ table and
// a dense switch (a jump table, brx.idx).
extern "C" __global__ void function_pointers(const int* program, int length, const int* inputs,
                                             int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int acc = inputs[i];
  for (int pc = 0; pc < length; ++pc) {
    const int code = program[pc];
    switch (code & 15) {
      case 0: acc = op_table[0](acc, i); break;
      case 1: acc = op_table[1](acc, 3); break;
      case 2: acc = op_table[2](acc, 5); break;
      case 3: acc = op_table[3](acc, 1000); break;
      case 4: acc ^= 0x5555; break;
      case 5: acc = acc >> 1; break;
      case 6: acc = acc * 3 + 1; break;
      case 7: acc = -acc; break;
      case 8: acc += code >> 4; break;
      case 9: acc = op_table[(code >> 4) & 3](acc, i & 7); break;
      case 10: acc = acc % 1009; break;
      case 11: acc = (acc << 3) | (acc & 7); break;
      default: acc += 1; break;
    }
  }
  out[i] = acc;
}

// Recursion whose frames hold arrays (stack in local memory): a recursive merge sort of each
// thread's 64 values, depth 6.
__device__ __noinline__ void merge_sort(int* a, int n) {
  if (n <= 1) return;
  const int h = n / 2;
  merge_sort(a, h);
  merge_sort(a + h, n - h);
  int tmp[64];
  int i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
  while (i < h) tmp[k++] = a[i++];
  while (j < n) tmp[k++] = a[j++];
  for (int q = 0; q < n; ++q) a[q] = tmp[q];
}

extern "C" __global__ void recursive_sort(int* data, int per_thread, int threads) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= threads) return;
  int local[64];
  int* mine = data + i * per_thread;
  for (int k = 0; k < per_thread; ++k) local[k] = mine[k];
  merge_sort(local, per_thread);
  for (int k = 0; k < per_thread; ++k) mine[k] = local[k];
}

// Ackermann-like deep recursion: depth in the hundreds.
__device__ __noinline__ int depth_sum(int n) { return n == 0 ? 0 : n + depth_sum(n - 1); }

extern "C" __global__ void deep_recursion(const int* depth, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = depth_sum(depth[i]);
}
