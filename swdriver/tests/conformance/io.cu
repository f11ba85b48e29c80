// Conformance kernels: parameters, __constant__ and __device__ variables, printf and assert.
#include <cassert>
#include <cstdio>

// Mixed member sizes and alignment, passed by value (the host test declares the same struct).
struct Mixed {
  char c;
  double d;
  short s;
  int i;
  float f;
  long long ll;
  unsigned char u8;
  float3 v;
  unsigned short us;
  int2 pair;
};

extern "C" __global__ void struct_param(Mixed m, long long* out, Mixed* echo) {
  const unsigned t = threadIdx.x;
  long long r = 0;
  switch (t) {
    case 0: r = m.c; break;
    case 1: r = static_cast<long long>(m.d * 1000.0); break;
    case 2: r = m.s; break;
    case 3: r = m.i; break;
    case 4: r = static_cast<long long>(m.f * 16.0f); break;
    case 5: r = m.ll; break;
    case 6: r = m.u8; break;
    case 7: r = static_cast<long long>(m.v.x + 10.0f * m.v.y + 100.0f * m.v.z); break;
    case 8: r = m.us; break;
    case 9: r = static_cast<long long>(m.pair.x) * m.pair.y; break;
    default: r = -1; break;
  }
  out[t] = r;
  if (t == 0) *echo = m;
}

// Scalar parameters of every size in a row.
extern "C" __global__ void scalar_params(char c, double d, short s, float f, long long ll,
                                         unsigned char u8, int2 v, bool flag, unsigned u,
                                         double* out) {
  out[threadIdx.x] = threadIdx.x == 0   ? c
                     : threadIdx.x == 1 ? d
                     : threadIdx.x == 2 ? s
                     : threadIdx.x == 3 ? f
                     : threadIdx.x == 4 ? static_cast<double>(ll)
                     : threadIdx.x == 5 ? u8
                     : threadIdx.x == 6 ? v.x - v.y
                     : threadIdx.x == 7 ? (flag ? 1.0 : -1.0)
                                        : u;
}

__constant__ float coefficients[16];
__constant__ int offset;

// out[i] = in[i] * coefficients[i % 16] + offset; the host sets both through cuModuleGetGlobal.
extern "C" __global__ void constant_memory(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * coefficients[i % 16] + static_cast<float>(offset);
}

__device__ int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ double scale = 2.5;
__device__ unsigned long long hits = 1000;

// Reads initialized __device__ variables and counts its threads in `hits`.
extern "C" __global__ void device_globals(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = static_cast<int>(table[i % 8] * scale) + table[(i + 3) % 8];
  atomicAdd(&hits, 1ull);
}

// Device printf: one line per thread of the first warp of each block with each format.
extern "C" __global__ void device_printf(int base, double x, const char* word) {
  if (threadIdx.x >= 4) return;
  printf("conf block=%d thread=%d v=%d hex=%x ll=%lld f=%.3f s=%s c=%c\n", blockIdx.x, threadIdx.x,
         base + static_cast<int>(threadIdx.x), base * 16 + 10,
         static_cast<long long>(base) * 1000000007LL, x * threadIdx.x, word, 'A' + threadIdx.x);
}

// assert fails in exactly one thread (in[i] == 42).
extern "C" __global__ void device_assert(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  assert(in[i] != 42);
  out[i] = in[i] + 1;
}

// printf conversions and flags, one thread.
extern "C" __global__ void printf_formats(double d, float f, long long ll, unsigned u,
                                          const char* s) {
  printf("[%d|%5d|%-5d|%05d|%+d|% d]\n", -42, 42, 42, 42, 42, 42);
  printf("[%u|%x|%X|%#x|%o|%#o|%08x]\n", u, u, u, u, u, u, u);
  printf("[%lld|%llu|%llx|%ld|%hd|%hhd]\n", ll, static_cast<unsigned long long>(ll), ll,
         static_cast<long>(ll), static_cast<short>(ll), static_cast<signed char>(ll));
  printf("[%f|%.0f|%.10f|%12.4f|%-12.2f|%+.3f]\n", d, d, d, d, d, d);
  printf("[%e|%.2e|%E|%g|%G|%.3g|%g|%g]\n", d, d, d, d, d * 1e-10, d, 1e20, 0.0001);
  printf("[%f|%g|%f|%f]\n", f, f, 1.0 / 0.0, -1.0 / 0.0);
  printf("[%s|%10s|%-10s|%.2s|%c|%%]\n", s, s, s, s, s[0]);
  printf("no arguments at all\n");
}
